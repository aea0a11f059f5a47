#include "tuner/scheduler/trial_pipeline.h"

#include <algorithm>
#include <utility>

#include "common/status.h"
#include "common/strings.h"
#include "db/job.h"

namespace tune::tuner {

std::string ClaimKey(const JobRuntime& job, const KernelTemplate& tpl,
                     std::string_view config_text) {
  return StrCat(job.row.spec.workload, "|", job.row.spec.target, "|",
                TimingToJson(job.row.spec.timing), "|", tpl.name, "|", tpl.version, "|",
                config_text);
}

std::string MeasureKey(const JobRuntime& job, const v1::Artifact& artifact) {
  return StrCat(artifact.hash(), "|", job.row.spec.device_key, "|",
                TimingToJson(job.row.spec.timing));
}

Trial* TrialPipeline::Create(JobRuntime& job, const Candidate& candidate, int final_pass) {
  std::string text = ConfigToString(candidate.config);
  std::string claim = ClaimKey(job, *candidate.tpl, text);
  if (final_pass >= 0) {
    StrAppend(&claim, "|final of job ", job.row.id, " pass ", final_pass);
  }
  if (claims_.contains(claim)) {
    return nullptr;
  }
  const uint64_t id = next_id_++;
  Trial& trial = trials_[id];
  trial.id = id;
  trial.job_id = job.row.id;
  trial.tpl = candidate.tpl;
  trial.config = candidate.config;
  trial.config_text = std::move(text);
  trial.claim = claim;
  trial.final = final_pass >= 0;
  trial.stage = TrialStage::kBuilding;
  claims_.emplace(std::move(claim), id);
  ++job.building;
  return &trial;
}

Trial* TrialPipeline::Find(uint64_t id) {
  auto it = trials_.find(id);
  return it == trials_.end() ? nullptr : &it->second;
}

bool TrialPipeline::Built(Trial& trial, JobRuntime& job,
                          std::shared_ptr<const v1::Artifact> artifact,
                          std::shared_ptr<const v1::ArtifactCode> code) {
  TUNE_CHECK(trial.stage == TrialStage::kBuilding) << "trial " << trial.id << " built twice";
  --job.building;
  if (!trial.final && share_) {
    trial.measure_key = MeasureKey(job, *artifact);
  }
  trial.artifact = std::move(artifact);
  trial.code = std::move(code);
  return LeadOrFollow(trial, job, false);
}

std::optional<PendingCommit> TrialPipeline::Recall(
    Trial& trial, JobRuntime& job, const std::shared_ptr<const v1::Artifact>& artifact,
    const std::shared_ptr<const v1::ArtifactCode>& code) {
  TUNE_CHECK(trial.stage == TrialStage::kBuilding) << "trial " << trial.id << " built twice";
  if (trial.final || !share_) {
    return std::nullopt;
  }
  auto it = answers_.find(MeasureKey(job, *artifact));
  if (it == answers_.end()) {
    return std::nullopt;
  }
  trial.measure_key = it->first;
  trial.artifact = artifact;
  trial.code = code;
  BuiltToCommitting(trial, job);
  PendingCommit answer = it->second;
  answer.trial_id = trial.id;
  return answer;
}

void TrialPipeline::Remember(const Trial& trial, const PendingCommit& answer) {
  // A finalist's trial has no key, nor any trial when measurements are not shared.
  if (trial.measure_key.empty() || !answer.measurement.ok()) {
    return;
  }
  PendingCommit kept = answer;
  kept.earlier.reset();  // another worker's first answer belongs to this trial's record alone
  auto [it, inserted] = answers_.insert_or_assign(trial.measure_key, std::move(kept));
  if (inserted) {
    answer_order_.push_back(trial.measure_key);
  }
  if (answer_order_.size() > kRecalledAnswers) {
    answers_.erase(answer_order_.front());
    answer_order_.pop_front();
  }
}

void TrialPipeline::ForgetAnswersOf(std::string_view device_key) {
  const std::string infix = StrCat("|", device_key, "|");
  std::erase_if(answer_order_, [&](const std::string& key) {
    if (key.find(infix) == std::string::npos) {
      return false;
    }
    answers_.erase(key);
    return true;
  });
}

bool TrialPipeline::LeadOrFollow(Trial& trial, JobRuntime& job, bool front) {
  if (!trial.measure_key.empty()) {
    auto [it, inserted] = leaders_.try_emplace(trial.measure_key, trial.id);
    if (!inserted) {
      Trial& leader = *Find(it->second);
      leader.followers.push_back(trial.id);
      trial.leader = leader.id;
      trial.stage = TrialStage::kFollowing;
      ++job.following;
      return false;
    }
  }
  trial.stage = TrialStage::kReady;
  if (front) {
    job.ready.push_front(trial.id);
  } else {
    job.ready.push_back(trial.id);
  }
  return true;
}

std::vector<uint64_t> TrialPipeline::Unlead(Trial& trial) {
  if (auto it = leaders_.find(trial.measure_key); it != leaders_.end() && it->second == trial.id) {
    leaders_.erase(it);
  }
  return std::exchange(trial.followers, {});
}

void TrialPipeline::Shared(Trial& trial, JobRuntime& job) {
  TUNE_CHECK(trial.stage == TrialStage::kFollowing) << "trial " << trial.id << " not following";
  trial.leader = 0;
  trial.stage = TrialStage::kCommitting;
  --job.following;
  ++job.committing;
}

bool TrialPipeline::Rejoin(Trial& trial, JobRuntime& job) {
  TUNE_CHECK(trial.stage == TrialStage::kFollowing) << "trial " << trial.id << " not following";
  trial.leader = 0;
  --job.following;
  return LeadOrFollow(trial, job, true);
}

void TrialPipeline::BuildFailed(Trial& trial, JobRuntime& job) { BuiltToCommitting(trial, job); }

void TrialPipeline::BuiltToCommitting(Trial& trial, JobRuntime& job) {
  TUNE_CHECK(trial.stage == TrialStage::kBuilding) << "trial " << trial.id << " is not building";
  --job.building;
  trial.stage = TrialStage::kCommitting;
  ++job.committing;
}

void TrialPipeline::Untake(Trial& trial, JobRuntime& job) { job.ready.push_front(trial.id); }

void TrialPipeline::Dispatched(Trial& trial, JobRuntime& job, WorkerEntry& worker,
                               Clock::time_point now) {
  TUNE_CHECK(trial.stage == TrialStage::kReady) << "trial " << trial.id << " is not ready";
  trial.stage = TrialStage::kInFlight;
  trial.worker_id = worker.id;
  trial.dispatched_at = now;
  trial.missed_heartbeats = 0;
  ++trial.attempts;
  worker.in_flight.insert(trial.id);
  ++job.in_flight;
}

void TrialPipeline::Skipped(Trial& trial, JobRuntime& job) {
  TUNE_CHECK(trial.stage == TrialStage::kReady) << "trial " << trial.id << " is not ready";
  trial.stage = TrialStage::kCommitting;
  ++job.committing;
}

void TrialPipeline::SecondOpinion(Trial& trial, JobRuntime& job, WorkerEntry* worker,
                                  std::string_view worker_name) {
  TUNE_CHECK(trial.stage == TrialStage::kInFlight) << "trial " << trial.id << " not in flight";
  if (worker != nullptr) {
    worker->in_flight.erase(trial.id);
  }
  trial.worker_id.clear();
  trial.failed_on.insert(std::string(worker_name));
  --trial.attempts;
  --job.in_flight;
  trial.stage = TrialStage::kReady;
  job.ready.push_front(trial.id);
}

void TrialPipeline::Answered(Trial& trial, JobRuntime& job, WorkerEntry* worker) {
  TUNE_CHECK(trial.stage == TrialStage::kInFlight) << "trial " << trial.id << " not in flight";
  if (worker != nullptr) {
    worker->in_flight.erase(trial.id);
  }
  trial.worker_id.clear();
  trial.stage = TrialStage::kCommitting;
  --job.in_flight;
  ++job.committing;
}

bool TrialPipeline::Requeue(Trial& trial, JobRuntime& job, WorkerEntry* worker,
                            std::string_view worker_name, std::string why, int max_attempts) {
  TUNE_CHECK(trial.stage == TrialStage::kInFlight) << "trial " << trial.id << " not in flight";
  if (worker != nullptr) {
    worker->in_flight.erase(trial.id);
  }
  trial.worker_id.clear();
  trial.failed_on.insert(std::string(worker_name));
  trial.last_failure = std::move(why);
  --job.in_flight;
  if (trial.attempts >= max_attempts) {
    trial.stage = TrialStage::kCommitting;
    ++job.committing;
    return true;
  }
  trial.stage = TrialStage::kReady;
  job.ready.push_front(trial.id);
  return false;
}

std::string TrialPipeline::Erase(uint64_t id, JobRuntime& job, WorkerEntry* worker) {
  auto it = trials_.find(id);
  if (it == trials_.end()) {
    return "";
  }
  Trial& trial = it->second;
  switch (trial.stage) {
    case TrialStage::kBuilding:
      --job.building;
      break;
    case TrialStage::kReady:
      std::erase(job.ready, id);
      break;
    case TrialStage::kFollowing:
      --job.following;
      if (Trial* leader = Find(trial.leader); leader != nullptr) {
        std::erase(leader->followers, id);
      }
      break;
    case TrialStage::kInFlight:
      --job.in_flight;
      if (worker != nullptr) {
        worker->in_flight.erase(id);
      }
      break;
    case TrialStage::kCommitting:
      --job.committing;
      break;
  }
  TUNE_CHECK(trial.followers.empty()) << "trial " << id << " erased while others follow it";
  if (auto lead = leaders_.find(trial.measure_key); lead != leaders_.end() && lead->second == id) {
    leaders_.erase(lead);
  }
  std::string claim = std::move(trial.claim);
  claims_.erase(claim);
  trials_.erase(it);
  return claim;
}

std::vector<uint64_t> TrialPipeline::OfJob(int64_t job_id) const {
  std::vector<uint64_t> ids;
  for (const auto& [id, trial] : trials_) {
    if (trial.job_id == job_id) {
      ids.push_back(id);
    }
  }
  return ids;
}

}  // namespace tune::tuner
