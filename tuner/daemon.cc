#include "tuner/daemon.h"

#include <unistd.h>

#include <chrono>

#include "common/files.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"

namespace tune::tuner {
namespace {

// Artifacts travel inside MeasureRequest; the worker accepts the same size.
constexpr int kMaxMessageBytes = 256 << 20;
constexpr auto kShutdownGrace = std::chrono::seconds(2);

// The host part of HOST:PORT, as a local process should dial it.
std::string DialHost(const std::string& listen) {
  size_t colon = listen.rfind(':');
  std::string host = colon == std::string::npos ? listen : listen.substr(0, colon);
  if (host.empty() || host == "0.0.0.0" || host == "[::]" || host == "*") {
    return "127.0.0.1";
  }
  return host;
}

absl::Status WritePortFile(const std::string& path, int port) {
  absl::Status written = WriteFileAtomically(path, StrCat(port, "\n"));
  if (!written.ok()) {
    return absl::UnavailableError(StrCat("the port file: ", written.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(const DaemonOptions& options) {
  auto log = Logger("daemon");
  std::unique_ptr<Daemon> daemon(new Daemon());
  ASSIGN_OR_RETURN(daemon->log_, TuningLog::Open(options.db_path, TuningLog::Mode::kReadWrite));
  daemon->scheduler_ = std::make_unique<Scheduler>(daemon->log_.get(), options.scheduler);
  RETURN_IF_ERROR(daemon->scheduler_->Start());
  daemon->tuner_service_ =
      std::make_unique<TunerService>(daemon->scheduler_.get(), daemon->log_.get());
  daemon->worker_link_service_ = std::make_unique<WorkerLinkService>(daemon->scheduler_.get());

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(), &daemon->port_);
  builder.SetMaxReceiveMessageSize(kMaxMessageBytes);
  builder.SetMaxSendMessageSize(kMaxMessageBytes);
  // Workers ping every 30 s to notice a vanished daemon; allow it.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // gRPC binds with SO_REUSEPORT by default: a second daemon on the same port would then start
  // and share the first one's clients. Refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(daemon->tuner_service_.get());
  builder.RegisterService(daemon->worker_link_service_.get());
  daemon->server_ = builder.BuildAndStart();
  if (daemon->server_ == nullptr || daemon->port_ == 0) {
    daemon->server_.reset();
    return absl::UnavailableError(StrCat("cannot listen on ", options.listen,
                                         ": the address is in use or not valid (expected "
                                         "HOST:PORT, e.g. 127.0.0.1:7070; port 0 picks one)"));
  }
  daemon->server_->GetHealthCheckService()->SetServingStatus(true);
  const std::string address = StrCat(DialHost(options.listen), ":", daemon->port_);
  log->info("tune-daemon serving on {} (port {}), tuning log {}", options.listen, daemon->port_,
            options.db_path);

  if (options.local_workers > 0) {
    std::string binary = options.worker_binary;
    if (binary.empty()) {
      ASSIGN_OR_RETURN(binary, FindWorkerBinary());
    }
    ASSIGN_OR_RETURN(daemon->local_workers_,
                     LocalWorkers::Start(LocalWorkerOptions{binary, options.local_workers, address,
                                                            options.worker_log_level,
                                                            options.local_worker_args}));
    log->info("running {} local worker(s): {}", options.local_workers, binary);
  }
  // Last: a script that waits for the port file finds a daemon ready to take jobs.
  if (!options.port_file.empty()) {
    RETURN_IF_ERROR(WritePortFile(options.port_file, daemon->port_));
  }
  return daemon;
}

Daemon::~Daemon() { Shutdown(); }

void Daemon::Shutdown() {
  if (stopped_) {
    return;
  }
  stopped_ = true;
  // Local workers first: they exit on SIGTERM instead of seeing their streams closed and
  // trying to reconnect to a daemon that is going away.
  if (scheduler_) {
    scheduler_->StopAcceptingWork();
  }
  if (local_workers_) {
    local_workers_->Stop();
  }
  if (scheduler_) {
    scheduler_->BeginShutdown();
  }
  if (server_) {
    server_->GetHealthCheckService()->SetServingStatus(false);
    server_->Shutdown(std::chrono::system_clock::now() + kShutdownGrace);
    server_->Wait();
  }
  if (scheduler_) {
    scheduler_->Shutdown();
  }
  server_.reset();
  scheduler_.reset();
  log_.reset();
}

}  // namespace tune::tuner
