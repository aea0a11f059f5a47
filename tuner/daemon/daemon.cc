#include "tuner/daemon/daemon.h"

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

// Artifacts travel inside MeasureRequest, daemon to worker; the worker accepts the same size.
constexpr int kMaxSendBytes = 256 << 20;
// What the daemon accepts per message. Nothing it receives is large: client requests, worker
// registrations, results and heartbeats, and imported records (one message each) are KiBs. A
// caller without a token costs the daemon its metadata only (tuner_service.h); this bounds what
// a caller with one, or the health and reflection services, can make it hold.
constexpr int kMaxReceiveBytes = 4 << 20;
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

// CheckSecurityOptions' rules, then the credentials they allow.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> CheckedCredentials(
    const DaemonOptions& options) {
  if (!options.tls.enabled() && !net::IsLoopbackAddress(options.listen) && !options.insecure) {
    return absl::InvalidArgumentError(StrCat(
        "--listen ", options.listen,
        ": refusing to serve beyond loopback in plaintext, where anyone who reaches the port "
        "could pose as a worker or the daemon; give --tls-cert and --tls-key (and --tls-ca for "
        "mutual TLS), or --insecure to serve plaintext anyway"));
  }
  if (options.tls.enabled() && options.local_workers > 0 && options.tls.ca.empty()) {
    return absl::InvalidArgumentError(
        "--local-workers with TLS needs --tls-ca: the local workers check the daemon's "
        "certificate against it");
  }
  // The HTTP side serves HTTPS with the daemon's certificate; without one it stays on loopback
  // unless told otherwise, as gRPC does.
  if (!options.http_listen.empty() && options.tls.cert.empty() &&
      !net::IsLoopbackAddress(options.http_listen) && !options.insecure) {
    return absl::InvalidArgumentError(StrCat(
        "--http ", options.http_listen,
        ": refusing to serve plain HTTP (tokens and results readable on the way) beyond "
        "loopback; give --tls-cert and --tls-key to serve HTTPS, put it behind a TLS proxy on "
        "loopback, or give --insecure"));
  }
  return net::ServerCredentialsFor(options.tls);
}

}  // namespace

std::vector<std::string> PlaintextWarnings(const DaemonOptions& options, bool tokens_on) {
  std::vector<std::string> warnings;
  if (!options.tls.enabled() && !net::IsLoopbackAddress(options.listen)) {
    warnings.push_back(
        StrCat("gRPC on ", options.listen,
               " is plaintext (--insecure): ", tokens_on ? "client and worker tokens, " : "",
               "jobs and records cross the network "
               "readable and changeable by anyone on the path; give --tls-cert and --tls-key"));
  }
  if (!options.http_listen.empty() && options.tls.cert.empty() &&
      !net::IsLoopbackAddress(options.http_listen)) {
    warnings.push_back(StrCat(
        "the dashboard, the JSON API and /metrics on ", options.http_listen,
        " are plain HTTP (--insecure): ", tokens_on ? "the tokens typed into the page, " : "",
        "jobs and records cross the network readable by anyone on the path; give --tls-cert "
        "and --tls-key to serve HTTPS"));
  }
  if (!tokens_on && !options.http_listen.empty() && !net::IsLoopbackAddress(options.http_listen)) {
    warnings.push_back(StrCat("the dashboard on ", options.http_listen,
                              " needs no token: the log holds none, so anyone who reaches it "
                              "reads every job and record"));
  }
  return warnings;
}

absl::Status CheckSecurityOptions(const DaemonOptions& options) {
  return CheckedCredentials(options).status();
}

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(const DaemonOptions& options) {
  auto log = Logger("daemon");
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                   CheckedCredentials(options));
  const bool loopback = net::IsLoopbackAddress(options.listen);
  std::unique_ptr<Daemon> daemon(new Daemon());
  // A log this process cannot write (a read-only mount, a file it may not change) is served
  // read-only: reads work, every write is refused naming the reason.
  const bool writable = PathWritable(options.db_path);
  ASSIGN_OR_RETURN(daemon->log_,
                   TuningLog::Open(options.db_path, writable ? TuningLog::Mode::kReadWrite
                                                             : TuningLog::Mode::kReadOnly));
  if (!writable) {
    log->warn(
        "{} cannot be written here: serving it read-only (jobs, best, export and tokens "
        "are read; submits, cancels, imports and token changes are refused)",
        options.db_path);
  }
  ASSIGN_OR_RETURN(daemon->authorizer_, Authorizer::Create(daemon->log_.get()));
  if (!daemon->authorizer_->enabled() && !loopback) {
    log->warn(
        "serving {} with no client tokens: anyone who reaches it may submit jobs; create "
        "an admin token with `tune-daemon token create --db {} --name NAME --role admin`",
        options.listen, options.db_path);
  }
  const std::vector<std::string> warnings =
      PlaintextWarnings(options, daemon->authorizer_->enabled());
  for (const std::string& warning : warnings) {
    log->warn("{}", warning);
  }
  daemon->scheduler_ = std::make_unique<Scheduler>(daemon->log_.get(), options.scheduler);
  RETURN_IF_ERROR(daemon->scheduler_->Start());
  daemon->tuner_service_ = std::make_unique<TunerService>(
      daemon->scheduler_.get(), daemon->log_.get(), daemon->authorizer_.get());
  daemon->worker_link_service_ =
      std::make_unique<WorkerLinkService>(daemon->scheduler_.get(), daemon->authorizer_.get());

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, credentials, &daemon->port_);
  builder.SetMaxReceiveMessageSize(kMaxReceiveBytes);
  builder.SetMaxSendMessageSize(kMaxSendBytes);
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
  log->info("tune-daemon serving on {} (port {}, {}), tuning log {}, client tokens {}",
            options.listen, daemon->port_,
            !options.tls.enabled()   ? "plaintext"
            : options.tls.ca.empty() ? "TLS"
                                     : "mutual TLS",
            options.db_path, daemon->authorizer_->enabled() ? "required" : "off");

  if (options.local_workers > 0) {
    std::string binary = options.worker_binary;
    if (binary.empty()) {
      ASSIGN_OR_RETURN(binary, FindWorkerBinary());
    }
    std::vector<std::string> args = options.local_worker_args;
    if (options.tls.enabled()) {
      for (const auto& [flag, file] : {std::pair{"--tls-ca=", options.tls.ca},
                                       {"--tls-cert=", options.tls.cert},
                                       {"--tls-key=", options.tls.key}}) {
        args.push_back(StrCat(flag, file));
      }
    }
    ASSIGN_OR_RETURN(daemon->local_workers_,
                     LocalWorkers::Start(LocalWorkerOptions{
                         binary,
                         options.local_workers,
                         address,
                         options.worker_log_level,
                         std::move(args),
                         {StrCat("TUNE_TOKEN=", daemon->authorizer_->LocalWorkerToken())}}));
    log->info("running {} local worker(s): {}", options.local_workers, binary);
  }
  // The dashboard, JSON API and /metrics, on threads of their own (tuner/http_server.h).
  if (!options.http_listen.empty()) {
    ASSIGN_OR_RETURN(daemon->http_,
                     HttpServer::Start(HttpServerOptions{.listen = options.http_listen,
                                                         .db_path = options.db_path,
                                                         .tls_cert = options.tls.cert,
                                                         .tls_key = options.tls.key,
                                                         .warnings = warnings},
                                       daemon->scheduler_.get(), daemon->authorizer_.get()));
    if (!options.http_port_file.empty()) {
      RETURN_IF_ERROR(WritePortFile(options.http_port_file, daemon->http_->port()));
    }
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
  // HTTP first: its handlers read the scheduler.
  if (http_) {
    http_->Stop();
    http_.reset();
  }
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
  authorizer_.reset();
  log_.reset();
}

}  // namespace tune::tuner
