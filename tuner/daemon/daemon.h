// Daemon: tune-daemon assembled. Opens the tuning log (the only writer), resumes its jobs, serves
// tune.v1.Tuner, tune.v1.WorkerLink, gRPC health checking and server reflection on one port, and
// optionally runs local tune-server workers.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "db/tuning_log.h"
#include "grpcpp/server.h"
#include "net/tls.h"
#include "tuner/auth/auth.h"
#include "tuner/daemon/local_workers.h"
#include "tuner/daemon/tuner_service.h"
#include "tuner/daemon/worker_link_service.h"
#include "tuner/scheduler/scheduler.h"
#include "tuner/web/http_server.h"

namespace tune::tuner {

struct DaemonOptions {
  /// HOST:PORT to serve on; port 0 picks a free port (see Daemon::port()).
  std::string listen = "127.0.0.1:7070";
  /// The tuning log (created when missing).
  std::string db_path;
  /// tune-server processes to run on this host (0: none).
  int local_workers = 0;
  /// The tune-server of the local workers; empty: FindWorkerBinary().
  std::string worker_binary;
  /// Log level given to local workers (empty: their default).
  std::string worker_log_level;
  /// More arguments for every local worker (e.g. --preload=PATH, --libs=dnnl).
  std::vector<std::string> local_worker_args;
  /// When not empty, the chosen port is written there (one line) once the daemon serves.
  std::string port_file;
  /// TLS (net/tls.h): cert and key to serve TLS; ca to require client certificates signed by it
  /// (mutual TLS). Local workers get ca and the daemon's own cert and key.
  net::TlsFiles tls;
  /// Serve plaintext on an address beyond loopback (refused otherwise).
  bool insecure = false;
  /// HOST:PORT for the dashboard, the JSON API and /metrics (tuner/http_server.h; port 0 picks
  /// a free port), over HTTPS with tls.cert and tls.key when given; empty: no HTTP.
  std::string http_listen;
  /// When not empty, the HTTP port is written there (one line) once the daemon serves.
  std::string http_port_file;
  SchedulerOptions scheduler;
};

/// The checks of Daemon::Start on the listen address and TLS files, alone (for tune-daemon's exit
/// code): plaintext beyond loopback without `insecure` (gRPC; HTTP, which serves HTTPS with the
/// daemon's certificate when it has one), TLS files that cannot be used, local workers under TLS
/// without a CA are InvalidArgument naming the flag.
absl::Status CheckSecurityOptions(const DaemonOptions& options);

/// What the daemon warns about at start and in the dashboard: gRPC or HTTP in plaintext beyond
/// loopback (tokens, when `tokens_on`, and data cross the network readable), and a dashboard
/// beyond loopback that needs no token.
std::vector<std::string> PlaintextWarnings(const DaemonOptions& options, bool tokens_on);

class Daemon {
 public:
  /// Refuses plaintext beyond loopback without `insecure` and TLS files that cannot be used
  /// (InvalidArgument naming the flag), opens the log (its error names the path), resumes jobs,
  /// binds (Unavailable naming the address when it cannot), writes the port file (Unavailable
  /// naming it) and starts the local workers (their binary missing: NotFound).
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(const DaemonOptions& options);

  /// Shutdown().
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  /// The port it serves on.
  int port() const { return port_; }
  /// Checks every request's token (tuner/auth.h).
  Authorizer* authorizer() const { return authorizer_.get(); }
  /// The port of the dashboard, JSON API and /metrics; 0 without --http.
  int http_port() const { return http_ ? http_->port() : 0; }

  /// Stops serving (calls in progress get up to 2 s), stops the local workers and leaves
  /// running jobs QUEUED in the log for the next start. Idempotent.
  void Shutdown();

 private:
  Daemon() = default;

  std::unique_ptr<TuningLog> log_;
  std::unique_ptr<Authorizer> authorizer_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<TunerService> tuner_service_;
  std::unique_ptr<WorkerLinkService> worker_link_service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<LocalWorkers> local_workers_;
  std::unique_ptr<HttpServer> http_;
  int port_ = 0;
  bool stopped_ = false;
};

}  // namespace tune::tuner
