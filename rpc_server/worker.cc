#include "rpc_server/worker.h"

#include <algorithm>
#include <chrono>
#include <random>

#include "common/artifact_hash.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/stats.h"
#include "common/status.h"
#include "common/strings.h"
#include "grpcpp/channel.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "proto/convert.h"

namespace tune::rpc {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kDefaultHeartbeatMs = 1000;
// Artifacts travel inside MeasureRequest; allow far more than gRPC's 4 MiB default.
constexpr int kMaxMessageBytes = 256 << 20;

std::string Summary(const v1::Measurement& m) {
  if (m.error_kind() != v1::ERROR_KIND_NONE) {
    return StrCat(v1::ErrorKind_Name(m.error_kind()), ": ", m.message());
  }
  std::vector<double> secs(m.round_secs().begin(), m.round_secs().end());
  return fmt::format("{:.4g} s per call ({} rounds of {})", Median(secs), secs.size(), m.number());
}

}  // namespace

// One WorkerLink stream. Results of its trials go to it only: a trial dispatched on a stream
// that broke is the daemon's to requeue, so its result is dropped.
struct Worker::Session {
  grpc::ClientContext context;  // declared first: it must outlive the stream
  std::unique_ptr<grpc::ClientReaderWriter<v1::WorkerMessage, v1::DaemonMessage>> stream;
  std::atomic<uint64_t> trials_done{0};
  bool ended = false;  // guarded by Worker::mu_

  /// Writes one message unless the session is closed. Thread-safe.
  bool Send(const v1::WorkerMessage& message) {
    std::lock_guard lock(write_mu);
    if (!open) {
      return false;
    }
    if (!stream->Write(message)) {
      open = false;
    }
    return open;
  }
  /// No write starts after this returns.
  void Close() {
    std::lock_guard lock(write_mu);
    open = false;
  }

 private:
  std::mutex write_mu;
  bool open ABSL_GUARDED_BY(write_mu) = true;
};

absl::StatusOr<std::unique_ptr<Worker>> Worker::Create(WorkerOptions options) {
  if (options.daemon_address.empty()) {
    return absl::InvalidArgumentError("--daemon: empty; expected HOST:PORT");
  }
  if (options.registration.name().empty()) {
    return absl::InvalidArgumentError("--name: empty; expected a worker name");
  }
  if (options.registration.device_key().empty()) {
    return absl::InvalidArgumentError("registration.device_key: empty");
  }
  if (options.registration.capabilities().capacity() <= 0) {
    options.registration.mutable_capabilities()->set_capacity(1);
  }
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials,
                   net::ChannelCredentialsFor(options.tls));
  std::unique_ptr<Worker> worker(new Worker(std::move(options), std::move(credentials)));
  ASSIGN_OR_RETURN(worker->cache_, ArtifactCache::Open(worker->options_.cache_dir.empty()
                                                           ? DefaultArtifactCacheDir()
                                                           : worker->options_.cache_dir,
                                                       worker->options_.cache_max_bytes));
  const int capacity = worker->options_.registration.capabilities().capacity();
  for (int slot = 0; slot < capacity; ++slot) {
    ASSIGN_OR_RETURN(std::unique_ptr<MeasureSupervisor> supervisor,
                     MeasureSupervisor::Create(worker->options_.supervisor));
    worker->supervisors_.push_back(std::move(supervisor));
  }
  worker->running_.resize(capacity);
  return worker;
}

Worker::Worker(WorkerOptions options, std::shared_ptr<grpc::ChannelCredentials> credentials)
    : options_(std::move(options)) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxMessageBytes);
  args.SetMaxSendMessageSize(kMaxMessageBytes);
  // Notice a daemon that vanished without closing the connection; heartbeats carry data, so
  // these pings never count as idle pings.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 30000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
  // Keep the channel's own reconnection (between our attempts) close to ours.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, options_.initial_backoff_ms);
  args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, options_.initial_backoff_ms);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, options_.max_backoff_ms);
  net::ApplyServerName(options_.tls, &args);
  channel_ = grpc::CreateCustomChannel(options_.daemon_address, credentials, args);
  stub_ = v1::WorkerLink::NewStub(channel_);
}

Worker::~Worker() {
  Shutdown();
  for (std::thread& t : executors_) {
    if (t.joinable()) {
      t.join();
    }
  }
}

void Worker::Shutdown() {
  std::lock_guard lock(mu_);
  if (stopping_) {
    return;
  }
  stopping_ = true;
  if (session_) {
    session_->context.TryCancel();
  }
  for (size_t slot = 0; slot < running_.size(); ++slot) {
    if (running_[slot]) {
      supervisors_[slot]->Cancel(running_[slot]->trial_id);
    }
  }
  cv_.notify_all();
}

absl::Status Worker::Run() {
  auto log = Logger("worker");
  for (size_t slot = 0; slot < supervisors_.size(); ++slot) {
    if (absl::Status s = supervisors_[slot]->StartChild(); !s.ok()) {
      log->warn("measurement process of slot {} did not start (requests will report it): {}", slot,
                s.message());
    }
    executors_.emplace_back([this, slot] { ExecutorLoop(slot); });
  }
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> jitter(0.8, 1.2);
  int backoff_ms = options_.initial_backoff_ms;
  int attempts = 0;  // consecutive periods without reaching the daemon
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) {
        break;
      }
    }
    auto delay = std::chrono::milliseconds(static_cast<int64_t>(backoff_ms * jitter(rng)));
    // Dial at once only after a session or at start; a daemon still unreachable is redialed on
    // the channel's backoff.
    if (!WaitForDaemon(delay, /*dial_now=*/attempts == 0)) {
      {
        std::lock_guard lock(mu_);
        if (stopping_) {
          break;
        }
      }
      // Not reachable for a whole backoff period: the next period is twice as long.
      log->log(attempts == 0 ? spdlog::level::info : spdlog::level::debug,
               "daemon at {} not reachable yet{}; retrying with backoff up to {} ms",
               options_.daemon_address,
               options_.tls.enabled()
                   ? " (with TLS, also: the daemon's certificate must be signed by --tls-ca and "
                     "name the host dialed, and the daemon must accept --tls-cert)"
                   : "",
               options_.max_backoff_ms);
      ++attempts;
      backoff_ms = std::min(backoff_ms * 2, options_.max_backoff_ms);
      continue;
    }
    attempts = 0;
    bool registered = RunSession();
    std::unique_lock lock(mu_);
    if (stopping_) {
      break;
    }
    if (registered) {
      backoff_ms = options_.initial_backoff_ms;
    }
    delay = std::chrono::milliseconds(static_cast<int64_t>(backoff_ms * jitter(rng)));
    log->debug("reconnecting to {} in {} ms", options_.daemon_address, delay.count());
    cv_.wait_for(lock, delay, [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stopping_; });
    backoff_ms = std::min(backoff_ms * 2, options_.max_backoff_ms);
  }
  for (std::thread& t : executors_) {
    t.join();
  }
  executors_.clear();
  log->info("worker stopped");
  return absl::OkStatus();
}

bool Worker::WaitForDaemon(std::chrono::milliseconds budget, bool dial_now) {
  // The channel dials at once after a reset; it stays in TRANSIENT_FAILURE while the daemon is
  // down, and calls on it would fail at once with a stale error, so wait for READY instead.
  if (dial_now) {
    grpc::experimental::ChannelResetConnectionBackoff(channel_.get());
  }
  const Clock::time_point deadline = Clock::now() + budget;
  while (true) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) {
        return false;
      }
    }
    Clock::time_point now = Clock::now();
    if (now >= deadline) {
      return false;
    }
    // Short slices, so that Shutdown() is noticed quickly.
    auto slice = std::min<Clock::duration>(deadline - now, std::chrono::milliseconds(100));
    if (channel_->WaitForConnected(std::chrono::system_clock::now() + slice)) {
      return true;
    }
  }
}

bool Worker::RunSession() {
  auto log = Logger("worker");
  auto session = std::make_shared<Session>();
  {
    std::lock_guard lock(mu_);
    if (stopping_) {
      return false;
    }
    session_ = session;
  }
  if (!options_.token.empty()) {
    session->context.AddMetadata("authorization", "Bearer " + options_.token);
  }
  session->stream = stub_->Connect(&session->context);

  v1::WorkerMessage hello;
  *hello.mutable_register_() = options_.registration;
  v1::DaemonMessage message;
  bool registered = false;
  bool drained = false;
  if (session->Send(hello) && session->stream->Read(&message)) {
    if (message.has_registered()) {
      registered = true;
    } else {
      log->error("daemon at {} answered the registration with something else; reconnecting",
                 options_.daemon_address);
    }
  } else {
    drained = true;  // the stream failed before the daemon said anything
  }

  std::thread heartbeat;
  if (registered) {
    const v1::Registered& r = message.registered();
    int interval_ms =
        r.heartbeat_interval_ms() > 0 ? r.heartbeat_interval_ms() : kDefaultHeartbeatMs;
    log->info("registered with {} as {} ({}), heartbeat every {} ms", options_.daemon_address,
              r.worker_id(), options_.registration.device_key(), interval_ms);
    heartbeat = std::thread([this, session, interval_ms] {
      HeartbeatLoop(session, std::chrono::milliseconds(interval_ms));
    });
    while (session->stream->Read(&message)) {
      Handle(message, session);
    }
    drained = true;
  }
  if (!drained) {
    session->context.TryCancel();
    while (session->stream->Read(&message)) {
    }
  }
  session->Close();
  EndSession(session);
  if (heartbeat.joinable()) {
    heartbeat.join();
  }
  grpc::Status status = session->stream->Finish();
  {
    std::lock_guard lock(mu_);
    session_.reset();
    if (stopping_) {
      return registered;
    }
  }
  if (registered) {
    log->warn("stream to {} ended: {} ({}); reconnecting", options_.daemon_address,
              static_cast<int>(status.error_code()), status.error_message());
  } else if (status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
             status.error_code() == grpc::StatusCode::PERMISSION_DENIED) {
    log->error(
        "the daemon at {} refused this worker: {} (pass a worker token with "
        "--token-file or TUNE_TOKEN); retrying",
        options_.daemon_address, status.error_message());
  } else {
    log->warn("cannot register with {}: {} ({})", options_.daemon_address,
              static_cast<int>(status.error_code()), status.error_message());
  }
  return registered;
}

void Worker::Handle(const v1::DaemonMessage& message, const std::shared_ptr<Session>& session) {
  auto log = Logger("worker");
  switch (message.kind_case()) {
    case v1::DaemonMessage::kRequest: {
      const uint64_t id = message.request().trial_id();
      std::lock_guard lock(mu_);
      bool duplicate = std::any_of(queue_.begin(), queue_.end(),
                                   [&](const Task& t) { return t.request.trial_id() == id; }) ||
                       std::any_of(running_.begin(), running_.end(),
                                   [&](const auto& r) { return r && r->trial_id == id; });
      if (duplicate) {
        log->warn("trial {} received twice; ignoring the repeat", id);
        return;
      }
      log->debug("trial {}: {} {} [{}]", id, message.request().workload(),
                 message.request().artifact().template_name(),
                 message.request().artifact().config());
      queue_.push_back(Task{message.request(), session, Clock::now()});
      cv_.notify_all();
      return;
    }
    case v1::DaemonMessage::kCancel: {
      const uint64_t id = message.cancel().trial_id();
      log->debug("trial {} cancelled: {}", id, message.cancel().reason());
      std::lock_guard lock(mu_);
      std::erase_if(queue_, [&](const Task& t) { return t.request.trial_id() == id; });
      for (size_t slot = 0; slot < running_.size(); ++slot) {
        if (running_[slot] && running_[slot]->trial_id == id) {
          supervisors_[slot]->Cancel(id);
        }
      }
      return;
    }
    case v1::DaemonMessage::kArtifactCode: {
      std::lock_guard lock(mu_);
      auto it = fetches_.find(message.artifact_code().hash());
      if (it == fetches_.end()) {
        log->debug("code of artifact {} arrived after its fetch was given up",
                   message.artifact_code().hash());
        return;
      }
      it->second->answered = true;
      it->second->reply = message.artifact_code();
      fetches_.erase(it);
      cv_.notify_all();
      return;
    }
    case v1::DaemonMessage::kRegistered:
      log->warn("daemon sent a second Registered; ignored");
      return;
    case v1::DaemonMessage::KIND_NOT_SET:
      log->warn("daemon sent an empty message; ignored");
      return;
  }
}

void Worker::HeartbeatLoop(std::shared_ptr<Session> session, std::chrono::milliseconds interval) {
  while (true) {
    v1::WorkerMessage beat;
    {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, interval, [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
            return stopping_ || session->ended;
          })) {
        return;
      }
      v1::Heartbeat* hb = beat.mutable_heartbeat();
      for (const Task& t : queue_) {
        if (t.session == session) {
          hb->add_in_flight_trial_ids(t.request.trial_id());
        }
      }
      for (const auto& r : running_) {
        if (r && r->session == session) {
          hb->add_in_flight_trial_ids(r->trial_id);
        }
      }
    }
    beat.mutable_heartbeat()->set_worker_time_ms(UnixNowMs());
    beat.mutable_heartbeat()->set_trials_done(session->trials_done.load());
    if (!session->Send(beat)) {
      return;
    }
  }
}

void Worker::EndSession(const std::shared_ptr<Session>& session) {
  std::lock_guard lock(mu_);
  session->ended = true;
  std::erase_if(queue_, [&](const Task& t) { return t.session == session; });
  for (size_t slot = 0; slot < running_.size(); ++slot) {
    if (running_[slot] && running_[slot]->session == session) {
      supervisors_[slot]->Cancel(running_[slot]->trial_id);
    }
  }
  cv_.notify_all();
}

absl::StatusOr<CachedCode> Worker::CodeOf(const Task& task) {
  const v1::Artifact& artifact = task.request.artifact();
  // CheckRequest accepted the format (shared objects, and PTX / HSACO on a GPU worker).
  absl::StatusOr<CodeFormat> parsed = ArtifactFormatFromProto(artifact.format());
  if (!parsed.ok()) {
    return absl::InternalError(std::string(parsed.status().message()));
  }
  const CodeFormat format = *parsed;
  if (std::optional<CachedCode> cached = cache_->Find(artifact.hash(), format)) {
    return *std::move(cached);
  }
  if (artifact.code_bytes() > cache_->max_bytes()) {
    return absl::ResourceExhaustedError(
        StrCat("artifact ", artifact.hash(), " has ", artifact.code_bytes(),
               " bytes, more than this worker's cache holds (", cache_->max_bytes(), " bytes)"));
  }
  std::shared_ptr<Fetch> fetch;
  bool ask = false;
  {
    std::lock_guard lock(mu_);
    std::shared_ptr<Fetch>& slot = fetches_[artifact.hash()];
    if (!slot) {
      slot = std::make_shared<Fetch>();
      ask = true;
    }
    fetch = slot;
  }
  if (ask) {
    v1::WorkerMessage message;
    message.mutable_fetch()->set_hash(artifact.hash());
    if (!task.session->Send(message)) {
      std::lock_guard lock(mu_);
      fetches_.erase(artifact.hash());
      cv_.notify_all();
      return absl::UnavailableError("the stream to the daemon ended before the code was fetched");
    }
  }
  {
    std::unique_lock lock(mu_);
    const bool answered = cv_.wait_for(lock, std::chrono::milliseconds(options_.fetch_timeout_ms),
                                       [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
                                         return fetch->answered || stopping_ ||
                                                task.session->ended ||
                                                !fetches_.contains(artifact.hash());
                                       });
    if (!fetch->answered) {
      if (auto it = fetches_.find(artifact.hash()); it != fetches_.end() && it->second == fetch) {
        fetches_.erase(it);
      }
      return absl::UnavailableError(
          answered ? StrCat("the fetch of artifact ", artifact.hash(), " was abandoned")
                   : StrCat("the daemon did not send the code of artifact ", artifact.hash(),
                            " within ", options_.fetch_timeout_ms, " ms"));
    }
  }
  const v1::ArtifactCodeReply& reply = fetch->reply;
  if (!reply.has_code()) {
    return absl::UnavailableError(
        StrCat("the daemon has no code for artifact ", artifact.hash(), ": ", reply.error()));
  }
  const v1::ArtifactCode& code = reply.code();
  switch (code.code_case()) {
    case v1::ArtifactCode::kSharedObject:
      if (format == CodeFormat::kSharedObject) {
        return cache_->Store(artifact.hash(), format, code.shared_object());
      }
      break;
    case v1::ArtifactCode::kPtx:
      if (format == CodeFormat::kPtx) {
        return cache_->Store(artifact.hash(), format, code.ptx());
      }
      break;
    case v1::ArtifactCode::kCodeObject:
      if (format == CodeFormat::kHsaco) {
        return cache_->Store(artifact.hash(), format, code.code_object());
      }
      break;
    case v1::ArtifactCode::CODE_NOT_SET:
      break;
  }
  return absl::DataLossError(StrCat("the daemon sent code of artifact ", artifact.hash(),
                                    " that is not ", CodeFormatName(format)));
}

std::optional<v1::MeasureResult> Worker::Execute(size_t slot, const Task& task) {
  auto log = Logger("worker");
  const uint64_t id = task.request.trial_id();
  v1::MeasureResult result;
  result.set_trial_id(id);
  MeasureSupervisor& supervisor = *supervisors_[slot];
  if (std::optional<v1::Measurement> verdict = supervisor.CheckRequest(task.request)) {
    *result.mutable_measurement() = std::move(*verdict);
    return result;
  }
  // Held until the measurement ends, so that no eviction removes the code before it is loaded.
  absl::StatusOr<CachedCode> code = CodeOf(task);
  if (!code.ok()) {
    log->warn("trial {}: cannot get its code: {}", id, code.status().message());
    result.set_worker_error(StrCat("code of artifact ", task.request.artifact().hash(), ": ",
                                   std::string(code.status().message())));
    return result;
  }
  absl::StatusOr<v1::Measurement> measured = supervisor.Measure(task.request, code->path());
  if (absl::IsCancelled(measured.status())) {
    log->debug("trial {}: {}", id, measured.status().message());
    return std::nullopt;
  }
  if (!measured.ok()) {
    log->warn("trial {}: cannot measure: {}", id, measured.status().message());
    result.set_worker_error(std::string(measured.status().message()));
    return result;
  }
  log->debug("trial {}: {}", id, Summary(*measured));
  *result.mutable_measurement() = std::move(*measured);
  return result;
}

void Worker::ExecutorLoop(size_t slot) {
  auto log = Logger("worker");
  while (true) {
    Task task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock,
               [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stopping_ || !queue_.empty(); });
      if (stopping_) {
        return;
      }
      task = std::move(queue_.front());
      queue_.pop_front();
      running_[slot] = Running{task.request.trial_id(), task.session};
    }
    const uint64_t id = task.request.trial_id();
    std::optional<v1::MeasureResult> result = Execute(slot, task);
    {
      std::lock_guard lock(mu_);
      running_[slot].reset();
    }
    if (!result) {
      continue;
    }
    result->set_worker_wall_ms(
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - task.received)
            .count());
    v1::WorkerMessage out;
    *out.mutable_result() = std::move(*result);
    if (task.session->Send(out)) {
      ++task.session->trials_done;
    } else {
      log->info("trial {}: result dropped, its stream has ended", id);
    }
  }
}

}  // namespace tune::rpc
