// JobView: a job as it stood at one moment, as plain values: copied under the scheduler's lock
// from a live job (Scheduler::ViewLocked, with its driver's part: JobDriver::Snapshot) or read
// from the log for a job that left memory (ViewFromLog), and turned into the answers of GetJob,
// ListJobs and WatchJob's events outside the lock (JobProtoOf, EventOf in job_messages.h).
// Nothing in it points into the scheduler, so a watcher may hold it as long as it likes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/templates/catalog.h"
#include "db/job.h"
#include "db/tuning_log.h"
#include "tune/v1/tuner.pb.h"
#include "tuner/scheduler/finalists.h"

namespace tune::tuner {

/// A job's fastest trial: its search's, or the figure its finalists' re-measurement decided.
struct BestSoFar {
  double secs = 0;
  double gflops = 0;
  std::string template_name;
  std::string config;
  std::string record_uid;

  void ToProto(v1::BestTrial* out) const {
    out->set_gflops(gflops);
    out->set_secs(secs);
    out->set_template_name(template_name);
    out->set_config(config);
    out->set_record_uid(record_uid);
  }
};

/// One task job of a model job.
struct TaskView {
  int64_t job_id = 0;
  std::string workload;
  double weight = 1;
  JobState state = JobState::kQueued;
  int trials_allocated = 0;
  int trials_done = 0;
  int in_flight = 0;
  std::optional<BestSoFar> best;       // shown with the task
  std::optional<double> best_secs;     // for the weighted total (also of a task that left memory)
  std::optional<double> default_secs;  // its untuned default's time, once measured
};

struct JobView {
  Job row;  // its counters as the job stands (a model job's: its tasks' sums)
  int64_t taken_at_ms = 0;
  int trials_in_flight = 0;
  std::optional<BestSoFar> best;
  std::vector<TaskView> tasks;  // a model job's, in the order of its spec

  // A live job's (one read from the log says only its row's error).
  bool live = false;
  double eta_seconds = 0;  // EtaSeconds: negative when unknown
  std::string storage_paused;
  std::string waiting;
  FinalsProgress finals;
  std::string skipped;
  std::vector<std::string> given_up;  // the first kGivenUpNamed of its trials given up
  size_t given_up_count = 0;
  std::string last_error;
};

/// The best of a record: its median and GFLOPS; nullopt for a failed record.
std::optional<BestSoFar> BestOf(const Record& record);

/// The view of a job the scheduler holds no more (or never loaded), from the log: its row, its
/// best (the finalists' decided figure when its re-measurement decided the best), a model
/// job's tasks and totals. A log error is returned as is.
absl::StatusOr<JobView> ViewFromLog(TuningLog& log, const Job& row, const Catalog& catalog);

}  // namespace tune::tuner
