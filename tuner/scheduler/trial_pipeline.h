// TrialPipeline: every trial from proposal to commit, and the claims that keep two trials from
// measuring one config of one workload and target at the same time. Each transition moves a
// trial between stages and keeps its job's counters (building, ready, in flight, committing)
// in step, so the counters are right by construction. Not thread-safe: guarded by the
// scheduler's lock.
//
//   Create ──▶ building ──Built──▶ ready ──Dispatched──▶ in flight ──Answered──▶ committing
//                 │          │      ▲ │                      │                       │
//                 │          │      │ │                      ├──────────────────────┘
//                 │          │      │ │                      │  Requeue (lost / worker error;
//                 │          │      │ │                      │  ▶ committing when given up)
//                 │          │      └─┼──────────────────────┘  SecondOpinion (a crash or wrong
//                 │          │        │                         answer another worker re-checks)
//                 │          │        └──Skipped (its code is quarantined)──────────▶ committing
//                 │          └──(its code is being measured)──▶ following ──Shared──▶ committing
//                 ├──Recall (its code was measured before)────────────────────────▶ committing
//                 └──BuildFailed──────────────────────────────────────────────────▶ committing
//   Erase: a committed trial, or one dropped with its job; releases the claim.
//
// Measurements are shared: a built trial whose MeasureKey (artifact hash, device key, timing)
// another trial leads (ready or in flight) follows that trial instead of being measured; once
// the leader is answered, its followers take its measurement (Unlead, then Shared). A leader that
// leaves without a verdict (dropped, or given up) hands its followers back (Unlead, then Rejoin:
// the first leads in turn). A successful answer is also remembered (Remember; the last
// kRecalledAnswers of them): a trial built later whose key it answers takes it at once
// (Recall: building → committing), so code measured once in this daemon's life is not measured
// again, whichever job or config asks.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/scheduler/scheduler_types.h"

namespace tune::tuner {

/// The claim of one config: workload, target, timing settings, template and version, and
/// canonical config.
std::string ClaimKey(const JobRuntime& job, const KernelTemplate& tpl,
                     std::string_view config_text);

/// What makes two trials the same measurement: the artifact's hash, the device key and the
/// timing settings.
std::string MeasureKey(const JobRuntime& job, const v1::Artifact& artifact);

/// How many successful answers TrialPipeline remembers for Recall (about 1 KB each).
inline constexpr size_t kRecalledAnswers = 8192;

class TrialPipeline {
 public:
  /// With `share_measurements` false no trial gets a MeasureKey: none leads, follows, is
  /// remembered or recalls, and every trial is measured (SchedulerOptions::share_measurements).
  explicit TrialPipeline(bool share_measurements = true) : share_(share_measurements) {}

  /// A new trial of `job` for `candidate`, claiming its config, stage building. When another
  /// trial holds the claim, nothing is created and null is returned. A finalist's
  /// re-measurement (`final_pass` >= 0, tuner/finalists.h) claims that pass of that job only.
  Trial* Create(JobRuntime& job, const Candidate& candidate, int final_pass = -1);
  /// The trial, or null.
  Trial* Find(uint64_t id);
  /// True when a trial holds `claim`.
  bool Claimed(const std::string& claim) const { return claims_.contains(claim); }

  /// building → ready, at the back of its job's queue (leading its MeasureKey); or → following,
  /// when another trial leads that key already. A finalist's re-measurement never shares.
  /// Returns true when ready.
  bool Built(Trial& trial, JobRuntime& job, std::shared_ptr<const v1::Artifact> artifact,
             std::shared_ptr<const v1::ArtifactCode> code);
  /// building → committing, when a remembered answer has the MeasureKey of `artifact`: returns
  /// that answer, for `trial`. Otherwise (or for a finalist's re-measurement) nothing changes and
  /// the result is empty.
  std::optional<PendingCommit> Recall(Trial& trial, JobRuntime& job,
                                      const std::shared_ptr<const v1::Artifact>& artifact,
                                      const std::shared_ptr<const v1::ArtifactCode>& code);
  /// Remembers the successful `answer` of `trial` (not a finalist's) for Recall; the oldest
  /// answer is forgotten beyond kRecalledAnswers.
  void Remember(const Trial& trial, const PendingCommit& answer);
  size_t remembered() const { return answers_.size(); }
  /// Forgets the remembered answers of `device_key`: its workers run under a new fingerprint
  /// (a driver or library upgrade), so their code is measured again.
  void ForgetAnswersOf(std::string_view device_key);

  /// Ends `trial`'s lead of its MeasureKey and returns its followers, in the order they came.
  std::vector<uint64_t> Unlead(Trial& trial);
  /// following → committing: the follower takes its former leader's measurement.
  void Shared(Trial& trial, JobRuntime& job);
  /// following → following another leader of its key, or ready at the front of its job's queue
  /// leading it (its leader left without a verdict). Returns true when ready.
  bool Rejoin(Trial& trial, JobRuntime& job);
  /// building → committing (its build failed).
  void BuildFailed(Trial& trial, JobRuntime& job);
  /// The first ready trial of `job` that `accept` takes, off the job's queue; null if none.
  template <typename Accept>
  Trial* TakeReady(JobRuntime& job, Accept accept) {
    for (auto it = job.ready.begin(); it != job.ready.end(); ++it) {
      Trial& trial = *Find(*it);
      if (accept(trial)) {
        job.ready.erase(it);
        return &trial;
      }
    }
    return nullptr;
  }
  /// Puts a trial taken with TakeReady back at the front of its job's queue.
  void Untake(Trial& trial, JobRuntime& job);
  /// ready (taken) → in flight on `worker`.
  void Dispatched(Trial& trial, JobRuntime& job, WorkerEntry& worker, Clock::time_point now);
  /// ready (taken) → committing without a worker: its code is quarantined on every worker that
  /// could measure it (db/quarantine.h).
  void Skipped(Trial& trial, JobRuntime& job);
  /// in flight → ready at the front of its job's queue, `worker_name` having answered it with a
  /// crash or wrong answer that another worker is to confirm (its name joins failed_on, so the
  /// dispatcher prefers others; the attempt is not counted against max_attempts).
  void SecondOpinion(Trial& trial, JobRuntime& job, WorkerEntry* worker,
                     std::string_view worker_name);
  /// in flight → committing (its worker answered).
  void Answered(Trial& trial, JobRuntime& job, WorkerEntry* worker);
  /// in flight → ready at the front of its job's queue, remembering that `worker_name` failed
  /// it because of `why`; or, when it has been dispatched `max_attempts` times already,
  /// → committing (given up). Returns true when given up.
  bool Requeue(Trial& trial, JobRuntime& job, WorkerEntry* worker, std::string_view worker_name,
               std::string why, int max_attempts);
  /// Removes a trial in any stage but committing-in-progress is the caller's to judge: its job
  /// counters are released and so is its claim. A trial that leads must be Unleaded first.
  /// Returns the claim it held.
  std::string Erase(uint64_t id, JobRuntime& job, WorkerEntry* worker);

  /// Ids of the trials of one job.
  std::vector<uint64_t> OfJob(int64_t job_id) const;
  size_t size() const { return trials_.size(); }
  size_t claims() const { return claims_.size(); }

 private:
  bool share_ = true;  // see the constructor
  uint64_t next_id_ = 1;
  std::map<uint64_t, Trial> trials_;
  std::map<std::string, uint64_t> claims_;        // claim key → trial id
  std::map<std::string, uint64_t> leaders_;       // MeasureKey → the trial measuring it
  std::map<std::string, PendingCommit> answers_;  // MeasureKey → a successful answer
  std::deque<std::string> answer_order_;          // keys of answers_, oldest first
  /// Leads the trial's key when nobody does (→ ready, at the back or the front of the queue),
  /// else follows the leader.
  bool LeadOrFollow(Trial& trial, JobRuntime& job, bool front);
  /// building → committing with no measurement to make (Recall, BuildFailed).
  void BuiltToCommitting(Trial& trial, JobRuntime& job);
};

}  // namespace tune::tuner
