// Job: one tuning request (workload, target, device key, strategy, trial budget) and its
// progress, persisted so the daemon can resume after a restart.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/measurement.h"

namespace tune {

/// Queued -> Running -> Done | Failed | Cancelled. A running job may go back to Queued (its
/// worker vanished or the daemon restarted); Done, Failed and Cancelled are final.
enum class JobState : uint8_t { kQueued, kRunning, kDone, kFailed, kCancelled };

std::string_view JobStateName(JobState state);  // "QUEUED", "RUNNING", ...
/// Inverse of JobStateName (upper or lower case); nullopt for unknown names.
std::optional<JobState> ParseJobState(std::string_view name);
/// True for Done, Failed and Cancelled.
bool IsTerminal(JobState state);

/// One workload of a model job, tuned by a job of its own (a task) whose trial budget the model
/// job's task scheduler raises as it decides where trials pay most.
struct JobTask {
  std::string workload = {};  // canonical Workload text
  double weight = 1;          // how often the workload runs per inference (> 0)
  int64_t job_id = 0;         // the task's job (0 until created)
};

/// A model job holds at most this many tasks.
inline constexpr size_t kMaxJobTasks = 256;

struct JobSpec {
  std::string workload = {};    // canonical Workload text (canonicalized on create); a model
                                // job's is its first task's
  std::string target = {};      // Target text (canonicalized on create)
  std::string device_key = {};  // workers that may run the trials
  std::string strategy = {};    // search strategy name, e.g. "random", "evolutionary"
  int trials = 0;               // trial budget, >= 1
  int priority = 0;             // higher runs first
  uint64_t seed = 0;            // seed of the search
  TimingOptions timing = {};
  std::string client = {};                  // who submitted it (free text)
  std::vector<std::string> templates = {};  // template names searched; empty: every template
                                            // that applies
  int early_stopping = 0;  // stop after this many trials in a row without improvement; 0: never
  std::string name = {};   // free-form label for people
  bool transfer = true;    // the search learns from records of other workloads first
  // A reverify job (tune-client reverify): it re-measures the log's best configs of its
  // workload and target, the winner and its runners-up (at most `trials`), on workers of the
  // device's newest fingerprint, and ends saying whether the winner is confirmed or changed.
  bool reverify = false;
  // A range job (a model job whose tasks are sizes of a shape range, common/shape_range.h): the
  // range's canonical text; empty for every other job.
  std::string range = {};
  // A model job: its workloads, each tuned by a task job that the model job creates (the same
  // target, strategy, timing and options). `trials` is the budget of the whole model.
  std::vector<JobTask> tasks = {};
  // A task job: its model job, and its workload's weight there. Its `trials` is what the model
  // job has allocated to it so far (0 at first).
  int64_t parent = 0;
  double weight = 1;
};

/// What a job needs to resume, stored with every trial it commits.
struct JobProgress {
  std::string search_state;   // opaque to the log: what the search needs to resume
  int since_improvement = 0;  // trials in a row without improving the best (early stopping)
  // False for a finalist's re-measurement: it is recorded, but is no trial of the budget and
  // leaves the job's counters and search state alone.
  bool counts = true;
};

struct Job {
  int64_t id = 0;
  JobSpec spec;
  JobState state = JobState::kQueued;
  int trials_done = 0;        // finished trials, failures included
  int trials_failed = 0;      // of which failed
  std::string search_state;   // opaque to the log: what the strategy needs to resume
  int since_improvement = 0;  // trials in a row without improving the job's best
  std::string error;          // why it ended: its error (Failed), why it stopped short of its
                              // budget (Done), who cancelled it (Cancelled); empty otherwise
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  int64_t started_at_ms = 0;              // first time Running; 0 before
  int64_t finished_at_ms = 0;             // time it reached a final state; 0 before
  std::optional<double> best_secs;        // fastest successful trial of this job
  std::optional<int64_t> best_record_id;  // and its record

  bool IsModel() const { return !spec.tasks.empty(); }
  bool IsTask() const { return spec.parent != 0; }
};

/// Checks a job spec and rewrites workload and target into canonical text. Problems are
/// InvalidArgument naming the field ("job.trials: ...") and the accepted form. Template names
/// are 1 to 128 characters of [a-z0-9._-]; the name at most 256 bytes. A model job's tasks
/// (1 to kMaxJobTasks distinct workloads, weights positive and finite) are canonicalized and
/// its workload becomes the first task's; a task job may have a budget of 0.
absl::Status CanonicalizeJobSpec(JobSpec& spec);

/// Checks timing options: number, repeat and timeout_ms >= 1, min_repeat_ms >= 0.
/// InvalidArgument naming "<field>.<member>".
absl::Status ValidateTiming(const TimingOptions& timing, std::string_view field);

/// Timing options as a compact JSON object (fixed key order), and back. Parsing fails with
/// InvalidArgument naming the problem; missing keys keep their defaults.
std::string TimingToJson(const TimingOptions& timing);
absl::StatusOr<TimingOptions> TimingFromJson(std::string_view json);

}  // namespace tune
