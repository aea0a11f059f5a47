// HttpServer: tune-daemon's web side (`--http HOST:PORT`): the dashboard's page (the files of
// tuner/dashboard/, built into the binary), the JSON API of http_api.h under /api/ and the
// Prometheus page /metrics. cpp-httplib serves it on a small thread pool of its own, never on
// the gRPC threads; its handlers only take the scheduler's snapshots (its lock for
// microseconds) and read records on a read-only connection to the tuning log.
//
// With a certificate (the daemon's --tls-cert and --tls-key) it serves HTTPS; browsers
// authenticate with tokens, never client certificates, so no client CA is asked for.
//
// Authentication follows gRPC's: every request but those for the page's own files (which hold
// no data, and which a browser must load before it can ask for a token) is checked with
// Authorizer::Check(its Authorization header, Role::kRead): Unauthenticated is 401,
// PermissionDenied 403, each with the JSON error of http_api.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner/auth/auth.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::tuner {

struct HttpServerOptions {
  /// HOST:PORT to serve on; port 0 picks a free port (see HttpServer::port()).
  std::string listen;
  /// The tuning log, opened read-only for the records pages.
  std::string db_path;
  /// Threads serving connections (each holds one connection at a time).
  int threads = 8;
  /// The certificate chain and private key (PEM) to serve HTTPS with; empty: plain HTTP.
  std::string tls_cert;
  std::string tls_key;
  /// What the page and /api/health warn about (e.g. tokens crossing the network in plaintext).
  std::vector<std::string> warnings;
};

class HttpServer {
 public:
  /// Opens the log read-only (its error as is), refuses TLS files it cannot use
  /// (InvalidArgument naming them), binds (Unavailable naming the address when it
  /// cannot: in use, or not HOST:PORT) and serves. `scheduler` must outlive the server, and so
  /// must `authorizer` when not null; null allows every request.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const HttpServerOptions& options,
                                                           Scheduler* scheduler,
                                                           Authorizer* authorizer);

  /// Stop().
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// The port it serves on.
  int port() const;

  /// Stops accepting connections and waits for the requests in progress (a kept-alive
  /// connection is closed within two seconds). Idempotent.
  void Stop();

 private:
  class Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tune::tuner
