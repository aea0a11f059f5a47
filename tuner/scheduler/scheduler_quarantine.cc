// The scheduler's quarantine (db/quarantine.h): which worker may get a trial's code, the second
// opinion a worker's crash gets, the trials recorded without a measurement, and the entries
// kept in step with the log.
#include <algorithm>

#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::tuner {
namespace {

const std::string& FingerprintOf(const WorkerEntry& worker) {
  return worker.reg.capabilities().device_fingerprint();
}

}  // namespace

const QuarantineEntry* Scheduler::QuarantinedForLocked(const WorkerEntry& worker,
                                                       const Trial& trial) const {
  if (!trial.artifact) {
    return nullptr;
  }
  return quarantine_.Find(trial.artifact->hash(), worker.reg.device_key(), FingerprintOf(worker));
}

bool Scheduler::SecondOpinionLocked(const WorkerEntry& first, const Trial& trial,
                                    const JobRuntime& job) {
  if (trial.final || !trial.artifact || trial.unconfirmed) {
    return false;
  }
  const WorkerNeeds needs = job.driver->AsSearch()->Needs(job, &trial);
  for (const WorkerEntry* other : workers_.ByLoad()) {
    if (other != &first && FingerprintOf(*other) == FingerprintOf(first) && CanRun(*other, needs) &&
        !trial.failed_on.contains(other->reg.name())) {
      return true;
    }
  }
  return false;
}

void Scheduler::SkipQuarantinedLocked(Trial& trial, JobRuntime& job, const QuarantineEntry& entry) {
  trials_.Skipped(trial, job);
  Measurement m = Measurement::Failed(
      entry.error,
      StrCat("skipped, not measured: artifact ", entry.artifact_hash.substr(0, 12), " gave ",
             ErrorKindName(entry.error), " on workers ", Join(entry.workers, " and "), " of ",
             entry.device_key, " and is quarantined there (entry ", entry.id,
             "; tune-client quarantine): ", entry.message));
  m.device_fingerprint = entry.fingerprint;
  Logger("daemon")->info("job {}: trial {} ({} {}) skipped: its code is quarantined (entry {})",
                         job.row.id, trial.id, trial.tpl->name, trial.config_text, entry.id);
  metrics_.CountQuarantineSkip();
  PendingCommit skipped{trial.id, std::move(m), "", job.row.spec.device_key};
  // A first worker's crash that waited for a second opinion is recorded beside the skip.
  skipped.earlier = std::move(trial.unconfirmed);
  CommitWithFollowersLocked(trial, std::move(skipped));
}

void Scheduler::NoteQuarantineOf(const std::vector<absl::StatusOr<Record>>& committed) {
  std::vector<QuarantineEntry> made;
  for (const absl::StatusOr<Record>& record : committed) {
    if (!record.ok() || !Quarantines(record->measurement.error) || record->artifact_hash.empty() ||
        record->worker.empty()) {
      continue;
    }
    absl::StatusOr<std::vector<QuarantineEntry>> entries = log_->ListQuarantine(
        {.device_key = record->device_key, .artifact_hash = record->artifact_hash});
    if (!entries.ok()) {
      Logger("daemon")->error("cannot read the quarantine of artifact {}: {}",
                              record->artifact_hash, entries.status());
      continue;
    }
    made.insert(made.end(), entries->begin(), entries->end());
  }
  if (made.empty()) {
    return;
  }
  std::lock_guard lock(mu_);
  for (const QuarantineEntry& entry : made) {
    if (quarantine_.Find(entry.artifact_hash, entry.device_key, entry.fingerprint) == nullptr) {
      Logger("daemon")->warn(
          "artifact {} ({} {} of {}) quarantined on {}: {} on workers {} (entry {})",
          entry.artifact_hash.substr(0, 12), entry.template_name, entry.config, entry.workload,
          entry.device_key, ErrorKindName(entry.error), Join(entry.workers, ", "), entry.id);
    }
    quarantine_.Put(entry);
  }
}

absl::StatusOr<std::vector<QuarantineEntry>> Scheduler::ListQuarantine(
    const QuarantineFilter& filter) {
  return log_->ListQuarantine(filter);
}

absl::StatusOr<QuarantineEntry> Scheduler::LiftQuarantine(int64_t id, std::string_view by) {
  ASSIGN_OR_RETURN(QuarantineEntry lifted, log_->LiftQuarantine(id, by));
  std::lock_guard lock(mu_);
  quarantine_.Remove(id);
  Logger("daemon")->info("quarantine entry {} (artifact {} on {}) lifted by {}", id,
                         lifted.artifact_hash.substr(0, 12), lifted.device_key, by);
  return lifted;
}

}  // namespace tune::tuner
