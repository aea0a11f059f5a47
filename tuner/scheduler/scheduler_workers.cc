// The scheduler's worker side: registration, heartbeats, results, fetches and liveness.
#include <algorithm>
#include <cmath>
#include <set>

#include "common/clock.h"
#include "common/fingerprint.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "proto/convert.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::tuner {
namespace {

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
  // Kinds only the daemon sets; a worker that cannot measure says WORKER_ERROR.
  if (m.error == ErrorKind::kWorkerLost || m.error == ErrorKind::kBuildError) {
    m.error = ErrorKind::kRuntimeCrash;
    m.message = StrCat("the worker sent error kind ", ErrorKindName(parsed->error),
                       ", which only the daemon sets: ", m.message);
  }
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

void Scheduler::NoteFingerprintOf(const v1::Register& reg) {
  const std::string& fingerprint = reg.capabilities().device_fingerprint();
  if (log_->read_only() || fingerprint.empty()) {
    return;
  }
  absl::StatusOr<FingerprintNote> note = log_->NoteFingerprint(reg.device_key(), fingerprint);
  if (!note.ok()) {
    Logger("daemon")->warn("worker {}: cannot note its fingerprint in {}: {}", reg.name(),
                           log_->path(), note.status().message());
  } else if (note->superseded) {
    {
      std::lock_guard lock(mu_);
      trials_.ForgetAnswersOf(reg.device_key());
    }
    Logger("daemon")->info(
        "worker {} brings a new fingerprint of {} ({}): the best configs measured under earlier "
        "ones are unverified there until its workers measure them (tune-client reverify)",
        reg.name(), reg.device_key(),
        Fingerprint::Parse(fingerprint).DescribeChangeFrom(Fingerprint::Parse(*note->superseded)));
  }
}

absl::StatusOr<std::string> Scheduler::AddWorker(const v1::Register& reg, std::string peer,
                                                 std::shared_ptr<WorkerChannel> channel) {
  if (reg.name().empty()) {
    return absl::InvalidArgumentError(
        "register.name: is empty; expected a worker name, e.g. 'host-1234'");
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
  if (reg.capabilities().threads() < 0) {
    return absl::InvalidArgumentError(
        StrCat("register.capabilities.threads: ", reg.capabilities().threads(),
               " is negative; expected >= 1 (0 means the worker's cores)"));
  }
  NoteFingerprintOf(reg);
  std::lock_guard lock(mu_);
  if (shutting_down_) {
    return absl::UnavailableError("the daemon is shutting down");
  }
  WorkerEntry& worker =
      workers_.Add(reg, std::move(peer), std::move(channel), Clock::now(), UnixNowMs());
  v1::DaemonMessage registered;
  registered.mutable_registered()->set_worker_id(worker.id);
  registered.mutable_registered()->set_heartbeat_interval_ms(options_.heartbeat_interval_ms);
  registered.mutable_registered()->set_heartbeat_deadline_ms(options_.heartbeat_deadline_ms);
  if (!worker.channel->Send(std::move(registered))) {
    workers_.Remove(worker.id);
    return absl::UnavailableError("the worker's stream closed during registration");
  }
  Logger("daemon")->info("worker {} registered as {}: {} capacity {} threads {} from {}",
                         reg.name(), worker.id, reg.device_key(), worker.capacity, worker.threads,
                         worker.peer);
  std::string id = worker.id;
  PumpLocked();
  return id;
}

void Scheduler::OnHeartbeat(const std::string& worker_id, const v1::Heartbeat& heartbeat) {
  std::lock_guard lock(mu_);
  WorkerEntry* worker = workers_.Find(worker_id);
  if (worker == nullptr) {
    return;
  }
  const Clock::time_point now = Clock::now();
  worker->last_seen = now;
  worker->last_heartbeat_ms = UnixNowMs();
  // A trial the worker should hold but does not list in two heartbeats in a row, long after it
  // was sent, was lost on the way (results always precede the next heartbeat).
  const auto grace = std::chrono::milliseconds(std::max(2 * options_.heartbeat_interval_ms, 2000));
  std::set<uint64_t> listed(heartbeat.in_flight_trial_ids().begin(),
                            heartbeat.in_flight_trial_ids().end());
  std::vector<uint64_t> lost;
  for (uint64_t id : worker->in_flight) {
    Trial& trial = *trials_.Find(id);
    if (listed.contains(id) || now - trial.dispatched_at < grace) {
      trial.missed_heartbeats = 0;
    } else if (++trial.missed_heartbeats >= 2) {
      lost.push_back(id);
    }
  }
  for (uint64_t id : lost) {
    Logger("daemon")->warn("trial {} is not on worker {} any more; re-queued", id,
                           worker->reg.name());
    RequeueLocked(*trials_.Find(id), worker, worker->reg.name(), "no longer listed the trial");
  }
  if (!lost.empty()) {
    PumpLocked();
  }
}

void Scheduler::OnResult(const std::string& worker_id, const v1::MeasureResult& result) {
  std::lock_guard lock(mu_);
  WorkerEntry* worker = workers_.Find(worker_id);
  if (worker == nullptr) {
    return;
  }
  worker->last_seen = Clock::now();
  worker->last_heartbeat_ms = UnixNowMs();
  Trial* trial = trials_.Find(result.trial_id());
  if (trial == nullptr || trial->stage != TrialStage::kInFlight || trial->worker_id != worker_id) {
    Logger("daemon")->debug("result of trial {} from {} ignored: not in flight there",
                            result.trial_id(), worker->reg.name());
    return;
  }
  if (!result.worker_error().empty()) {
    // Not the kernel's verdict: another worker (or this one, later) tries again.
    Logger("daemon")->warn("trial {}: worker {} could not measure it: {}", trial->id,
                           worker->reg.name(), result.worker_error());
    RequeueLocked(*trial, worker, worker->reg.name(), result.worker_error());
    PumpLocked();
    return;
  }
  Measurement measurement = Sanitize(result.measurement());
  if (const std::string& registered = worker->reg.capabilities().device_fingerprint();
      !registered.empty()) {
    // The fingerprint the worker registered with is what dispatch and quarantine match on.
    measurement.device_fingerprint = registered;
  }
  if (!IsVerdict(measurement.error)) {
    // The worker or its device could not measure it (WORKER_ERROR): as a worker_error.
    const std::string why = StrCat(ErrorKindName(measurement.error), ": ", measurement.message);
    Logger("daemon")->warn("trial {}: worker {} could not measure it: {}", trial->id,
                           worker->reg.name(), why);
    RequeueLocked(*trial, worker, worker->reg.name(), why);
    PumpLocked();
    return;
  }
  metrics_.ObserveMeasurement(
      std::chrono::duration<double>(Clock::now() - trial->dispatched_at).count());
  JobRuntime& job = *jobs_.Find(trial->job_id);
  ++worker->trials_done;
  PendingCommit pending{trial->id, std::move(measurement), worker->reg.name(),
                        worker->reg.device_key()};
  if (Quarantines(pending.measurement.error) && SecondOpinionLocked(*worker, *trial, job)) {
    // One worker's crash may be a sick device: another worker of its device key and
    // fingerprint measures the same code before it becomes the verdict.
    Logger("daemon")->info("trial {} ({} {}): {} on worker {}; another worker confirms it",
                           trial->id, trial->tpl->name, trial->config_text,
                           ErrorKindName(pending.measurement.error), worker->reg.name());
    metrics_.CountSecondOpinion();
    trial->unconfirmed = std::make_shared<const PendingCommit>(std::move(pending));
    trials_.SecondOpinion(*trial, job, worker, worker->reg.name());
    PumpLocked();
    return;
  }
  trials_.Answered(*trial, job, worker);
  pending.earlier = std::move(trial->unconfirmed);
  trials_.Remember(*trial, pending);  // for trials of the same code built later
  // Trials of the same code, device and timing (of this job or others) take this measurement.
  CommitWithFollowersLocked(*trial, std::move(pending));
  PumpLocked();  // the freed slot gets the next artifact before the record is written
}

void Scheduler::OnFetch(const std::string& worker_id, const v1::FetchArtifact& fetch) {
  std::shared_ptr<const v1::ArtifactCode> code;
  std::shared_ptr<WorkerChannel> channel;
  {
    std::lock_guard lock(mu_);
    WorkerEntry* worker = workers_.Find(worker_id);
    if (worker == nullptr) {
      return;
    }
    worker->last_seen = Clock::now();
    channel = worker->channel;
    for (uint64_t id : worker->in_flight) {
      const Trial& trial = *trials_.Find(id);
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
  std::lock_guard lock(mu_);
  RemoveWorkerLocked(worker_id, reason);
  PumpLocked();
}

void Scheduler::RemoveWorkerLocked(const std::string& worker_id, std::string_view reason) {
  std::unique_ptr<WorkerEntry> worker = workers_.Remove(worker_id);
  if (worker == nullptr) {
    return;
  }
  const std::vector<uint64_t> in_flight(worker->in_flight.begin(), worker->in_flight.end());
  for (uint64_t id : in_flight) {
    RequeueLocked(*trials_.Find(id), worker.get(), worker->reg.name(), std::string(reason));
  }
  if (shutting_down_) {
    Logger("daemon")->info("worker {} ({}) disconnected", worker->reg.name(), worker->id);
  } else {
    Logger("daemon")->warn("worker {} ({}) lost: {}; {} trial(s) re-queued", worker->reg.name(),
                           worker->id, reason, in_flight.size());
  }
  worker->channel->Close();
}

void Scheduler::MonitorLoop() {
  const auto deadline = std::chrono::milliseconds(options_.heartbeat_deadline_ms);
  const auto period =
      std::clamp(deadline / 4, std::chrono::milliseconds(20), std::chrono::milliseconds(500));
  std::unique_lock lock(mu_);
  while (true) {
    monitor_cv_.wait_for(lock, period,
                         [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return shutting_down_; });
    if (shutting_down_) {
      return;
    }
    std::vector<std::string> silent = workers_.Silent(Clock::now(), deadline);
    for (const std::string& id : silent) {
      RemoveWorkerLocked(id, StrCat("no message for ", options_.heartbeat_deadline_ms, " ms"));
    }
    if (!silent.empty()) {
      PumpLocked();
    }
  }
}

std::vector<v1::WorkerInfo> Scheduler::ListWorkers(bool include_lost) {
  std::lock_guard lock(mu_);
  return workers_.List(include_lost);
}

}  // namespace tune::tuner
