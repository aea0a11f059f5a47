// The scheduler's worker registry: registration, heartbeats, results and liveness.
#include <algorithm>
#include <set>

#include "common/clock.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "proto/convert.h"
#include "tuner/scheduler.h"

namespace tune::tuner {
namespace {

// Workers lost since start that ListWorkers can still show.
constexpr size_t kKeptLostWorkers = 100;

v1::WorkerInfo Info(const WorkerEntry& worker, v1::WorkerState state) {
  v1::WorkerInfo info;
  info.set_worker_id(worker.id);
  info.set_name(worker.reg.name());
  info.set_device_key(worker.reg.device_key());
  *info.mutable_capabilities() = worker.reg.capabilities();
  info.set_state(state);
  info.set_in_flight(static_cast<int32_t>(worker.in_flight.size()));
  info.set_trials_done(worker.trials_done);
  info.set_last_heartbeat_ms(worker.last_heartbeat_ms);
  info.set_connected_at_ms(worker.connected_at_ms);
  info.set_peer(worker.peer);
  return info;
}

// A worker's measurement as stored: malformed results become failures, never a bad record.
Measurement Sanitize(const v1::Measurement& proto) {
  absl::StatusOr<Measurement> parsed = MeasurementFromProto(proto);
  Measurement m;
  if (!parsed.ok()) {
    m.error = ErrorKind::kRuntimeCrash;
    m.message =
        StrCat("the worker sent an invalid measurement: ", std::string(parsed.status().message()));
    m.device_fingerprint = proto.device_fingerprint();
    return m;
  }
  m = std::move(*parsed);
  if (m.ok()) {
    bool times_ok = !m.round_secs.empty() && m.number >= 1 &&
                    std::all_of(m.round_secs.begin(), m.round_secs.end(),
                                [](double s) { return s > 0 && std::isfinite(s); });
    if (!times_ok) {
      m.error = ErrorKind::kRuntimeCrash;
      m.message = "the worker reported success without valid times";
      m.round_secs.clear();
    }
  }
  return m;
}

}  // namespace

absl::StatusOr<std::string> Scheduler::AddWorker(const v1::Register& reg, std::string peer,
                                                 std::shared_ptr<WorkerChannel> channel) {
  if (reg.name().empty()) {
    return absl::InvalidArgumentError(
        "register.name: is empty; expected a worker name, e.g. "
        "'host-1234'");
  }
  if (reg.device_key().empty()) {
    return absl::InvalidArgumentError(
        "register.device_key: is empty; expected e.g. 'cpu/x86_64/znver4' or 'cuda/sm_90'");
  }
  if (reg.capabilities().capacity() < 0) {
    return absl::InvalidArgumentError(
        StrCat("register.capabilities.capacity: ", reg.capabilities().capacity(),
               " is negative; expected >= 1 (0 means 1)"));
  }
  std::lock_guard lock(mu_);
  if (shutting_down_) {
    return absl::UnavailableError("the daemon is shutting down");
  }
  auto worker = std::make_unique<WorkerEntry>();
  worker->id = StrCat("w", next_worker_id_++);
  worker->reg = reg;
  worker->peer = std::move(peer);
  worker->channel = std::move(channel);
  worker->capacity = std::max(1, reg.capabilities().capacity());
  worker->last_seen = Clock::now();
  worker->connected_at_ms = UnixNowMs();
  worker->last_heartbeat_ms = worker->connected_at_ms;

  v1::DaemonMessage registered;
  registered.mutable_registered()->set_worker_id(worker->id);
  registered.mutable_registered()->set_heartbeat_interval_ms(options_.heartbeat_interval_ms);
  registered.mutable_registered()->set_heartbeat_deadline_ms(options_.heartbeat_deadline_ms);
  if (!worker->channel->Send(std::move(registered))) {
    return absl::UnavailableError("the worker's stream closed during registration");
  }
  Logger("daemon")->info("worker {} registered as {}: {} capacity {} from {}", reg.name(),
                         worker->id, reg.device_key(), worker->capacity, worker->peer);
  std::string id = worker->id;
  workers_.emplace(id, std::move(worker));
  PumpLocked();
  return id;
}

void Scheduler::OnHeartbeat(const std::string& worker_id, const v1::Heartbeat& heartbeat) {
  Commits commits;
  {
    std::lock_guard lock(mu_);
    auto it = workers_.find(worker_id);
    if (it == workers_.end()) {
      return;
    }
    WorkerEntry& worker = *it->second;
    const Clock::time_point now = Clock::now();
    worker.last_seen = now;
    worker.last_heartbeat_ms = UnixNowMs();
    // A trial the worker should hold but does not list in two heartbeats in a row, long after
    // it was sent, was lost on the way (results always precede the next heartbeat).
    const auto grace =
        std::chrono::milliseconds(std::max(2 * options_.heartbeat_interval_ms, 2000));
    std::set<uint64_t> listed(heartbeat.in_flight_trial_ids().begin(),
                              heartbeat.in_flight_trial_ids().end());
    std::vector<uint64_t> lost;
    for (uint64_t id : worker.in_flight) {
      Trial& trial = trials_.at(id);
      if (listed.contains(id) || now - trial.dispatched_at < grace) {
        trial.missed_heartbeats = 0;
      } else if (++trial.missed_heartbeats >= 2) {
        lost.push_back(id);
      }
    }
    for (uint64_t id : lost) {
      Logger("daemon")->warn("trial {} is not on worker {} any more; re-queued", id,
                             worker.reg.name());
      worker.in_flight.erase(id);
      RequeueLocked(trials_.at(id), StrCat(worker.reg.name(), " no longer listed it"), &commits);
    }
    if (!lost.empty()) {
      PumpLocked();
    }
  }
  CommitAll(std::move(commits));
}

void Scheduler::OnResult(const std::string& worker_id, const v1::MeasureResult& result) {
  Commits commits;
  {
    std::lock_guard lock(mu_);
    auto w = workers_.find(worker_id);
    if (w == workers_.end()) {
      return;
    }
    WorkerEntry& worker = *w->second;
    worker.last_seen = Clock::now();
    worker.last_heartbeat_ms = UnixNowMs();
    auto it = trials_.find(result.trial_id());
    if (it == trials_.end() || it->second.stage != TrialStage::kInFlight ||
        it->second.worker_id != worker_id) {
      Logger("daemon")->debug("result of trial {} from {} ignored: not in flight there",
                              result.trial_id(), worker.reg.name());
      return;
    }
    Trial& trial = it->second;
    JobRuntime& job = *jobs_.at(trial.job_id);
    worker.in_flight.erase(trial.id);
    if (!result.worker_error().empty()) {
      Logger("daemon")->warn("trial {}: worker {} could not measure it: {}", trial.id,
                             worker.reg.name(), result.worker_error());
      RequeueLocked(trial, StrCat(worker.reg.name(), ": ", result.worker_error()), &commits);
      PumpLocked();
      return;
    }
    ++worker.trials_done;
    --job.in_flight;
    ++job.committing;
    trial.stage = TrialStage::kCommitting;
    trial.worker_id.clear();
    commits.push_back(PendingCommit{trial.id, Sanitize(result.measurement()), worker.reg.name(),
                                    worker.reg.device_key()});
    PumpLocked();  // the freed slot gets the next artifact before the record is written
  }
  CommitAll(std::move(commits));
}

void Scheduler::OnFetch(const std::string& worker_id, const v1::FetchArtifact& fetch) {
  std::shared_ptr<const v1::ArtifactCode> code;
  std::shared_ptr<WorkerChannel> channel;
  {
    std::lock_guard lock(mu_);
    auto w = workers_.find(worker_id);
    if (w == workers_.end()) {
      return;
    }
    channel = w->second->channel;
    for (uint64_t id : w->second->in_flight) {
      const Trial& trial = trials_.at(id);
      if (trial.artifact && trial.artifact->hash() == fetch.hash()) {
        code = trial.code;
        break;
      }
    }
  }
  // The code is copied into the message outside the lock.
  v1::DaemonMessage reply;
  reply.mutable_artifact_code()->set_hash(fetch.hash());
  if (code) {
    *reply.mutable_artifact_code()->mutable_code() = *code;
  } else {
    reply.mutable_artifact_code()->set_error(
        StrCat("no trial in flight on this worker has artifact ", fetch.hash()));
  }
  channel->Send(std::move(reply));
}

void Scheduler::RemoveWorker(const std::string& worker_id, std::string_view reason) {
  Commits commits;
  {
    std::lock_guard lock(mu_);
    auto it = workers_.find(worker_id);
    if (it == workers_.end()) {
      return;
    }
    RemoveWorkerLocked(*it->second, reason, &commits);
    PumpLocked();
  }
  CommitAll(std::move(commits));
}

void Scheduler::RemoveWorkerLocked(WorkerEntry& worker, std::string_view reason, Commits* commits) {
  const size_t requeued = worker.in_flight.size();
  for (uint64_t id : worker.in_flight) {
    RequeueLocked(trials_.at(id), reason, commits);
  }
  worker.in_flight.clear();
  if (shutting_down_) {
    Logger("daemon")->info("worker {} ({}) disconnected", worker.reg.name(), worker.id);
  } else {
    Logger("daemon")->warn("worker {} ({}) lost: {}; {} trial(s) re-queued", worker.reg.name(),
                           worker.id, reason, requeued);
  }
  lost_workers_.push_back(Info(worker, v1::WORKER_STATE_LOST));
  if (lost_workers_.size() > kKeptLostWorkers) {
    lost_workers_.erase(lost_workers_.begin());
  }
  worker.channel->Close();
  const std::string id = worker.id;
  workers_.erase(id);  // `worker` dies here
}

void Scheduler::MonitorLoop() {
  const auto deadline = std::chrono::milliseconds(options_.heartbeat_deadline_ms);
  const auto period =
      std::clamp(deadline / 4, std::chrono::milliseconds(20), std::chrono::milliseconds(500));
  while (true) {
    Commits commits;
    {
      std::unique_lock lock(mu_);
      monitor_cv_.wait_for(lock, period,
                           [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return shutting_down_; });
      if (shutting_down_) {
        return;
      }
      const Clock::time_point now = Clock::now();
      std::vector<WorkerEntry*> silent;
      for (auto& [id, worker] : workers_) {
        if (now - worker->last_seen > deadline) {
          silent.push_back(worker.get());
        }
      }
      for (WorkerEntry* worker : silent) {
        RemoveWorkerLocked(
            *worker, StrCat("no message for ", options_.heartbeat_deadline_ms, " ms"), &commits);
      }
      if (!silent.empty()) {
        PumpLocked();
      }
    }
    CommitAll(std::move(commits));
  }
}

std::vector<v1::WorkerInfo> Scheduler::ListWorkers(bool include_lost) {
  std::vector<v1::WorkerInfo> out;
  {
    std::lock_guard lock(mu_);
    for (const auto& [id, worker] : workers_) {
      out.push_back(
          Info(*worker, worker->in_flight.empty() ? v1::WORKER_STATE_IDLE : v1::WORKER_STATE_BUSY));
    }
    if (include_lost) {
      out.insert(out.end(), lost_workers_.begin(), lost_workers_.end());
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const v1::WorkerInfo& a, const v1::WorkerInfo& b) {
    return a.name() < b.name();
  });
  return out;
}

}  // namespace tune::tuner
