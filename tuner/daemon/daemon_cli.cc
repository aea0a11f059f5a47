#include "tuner/daemon/daemon_cli.h"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/numbers.h"
#include "codegen/plugins/plugin.h"
#include "common/logging.h"
#include "common/strings.h"
#include "net/grpc_log.h"
#include "tuner/auth/token_admin.h"
#include "tuner/builder/build_child.h"
#include "tuner/daemon/daemon.h"

namespace {

constexpr int kExitStartupError = 1;
constexpr int kExitUsage = 2;

int Fail(int code, std::string_view message) {
  fmt::print(stderr, "tune-daemon: {}\n", message);
  return code;
}

int DefaultBuildThreads() {
  unsigned cores = std::thread::hardware_concurrency();
  return std::clamp(static_cast<int>(cores / 2), 1, 2);
}

// `--local-workers auto`: every core but one, which the build pool keeps (at least one worker).
int AutoLocalWorkers() {
  unsigned cores = std::thread::hardware_concurrency();
  return std::max(1, static_cast<int>(cores) - 1);
}

// "fault.crash (gemm), fault.crash (conv2d), ...".
std::string TemplateNames(const std::vector<const tune::KernelTemplate*>& templates) {
  std::vector<std::string> names;
  for (const tune::KernelTemplate* t : templates) {
    names.push_back(tune::StrCat(t->name, " (", tune::OpKindName(t->op), ")"));
  }
  return tune::Join(names, ", ");
}

int Serve(int argc, char** argv,
          const std::vector<const tune::KernelTemplate*>& program_templates) {
  CLI::App app{"tune-daemon: the tune autotuning service"};
  tune::tuner::DaemonOptions options;
  std::string log_level;
  options.scheduler.build_threads = DefaultBuildThreads();
  app.add_option("--listen", options.listen,
                 "HOST:PORT to serve on (loopback by default; port 0 picks a free port)")
      ->capture_default_str();
  app.add_option("--db", options.db_path, "the tuning log (SQLite file, created when missing)")
      ->required();
  std::string local_workers = "0";
  app.add_option("--local-workers", local_workers,
                 "tune-server workers to run on this host: a count, or 'auto' for every core but "
                 "one, left to the build pool (0: wait for remote workers)")
      ->capture_default_str();
  app.add_option("--log-level", log_level,
                 "trace, debug, info, warn, error, critical or off (default: $TUNE_LOG_LEVEL or "
                 "info); local workers get the same level");
  app.add_option("--port-file", options.port_file,
                 "write the port served on to this file once ready (for scripts and tests)");
  app.add_option("--worker-binary", options.worker_binary,
                 "tune-server for --local-workers (default: next to tune-daemon, else on PATH)");
  app.add_option("--build-threads", options.scheduler.build_threads,
                 "builder processes compiling candidates (a crash or hang in one is a BUILD_ERROR "
                 "record, never the daemon's end)")
      ->capture_default_str();
  app.add_option("--build-timeout-ms", options.scheduler.build_timeout_ms,
                 "a build that runs longer is a BUILD_ERROR and its builder is replaced")
      ->capture_default_str();
  app.add_option("--artifact-store", options.scheduler.artifact_store_dir,
                 "directory of built artifacts kept across jobs and daemon runs, so that no "
                 "config is built twice (default: the log's path + '.artifacts')");
  int artifact_store_mb = 2048;
  app.add_option("--artifact-store-mb", artifact_store_mb,
                 "bound of --artifact-store in MiB; the least recently used go first (0: no store)")
      ->capture_default_str();
  app.add_option("--heartbeat-ms", options.scheduler.heartbeat_interval_ms,
                 "how often workers send a heartbeat")
      ->capture_default_str();
  app.add_option("--worker-deadline-ms", options.scheduler.heartbeat_deadline_ms,
                 "a worker silent for this long is dropped and its trials re-queued")
      ->capture_default_str();
  tune::CatalogSources sources{.extra_templates = program_templates};
  app.add_option("--extern-kernels", sources.extern_kernel_manifests,
                 "a micro-kernel manifest (JSON) whose kernel jobs may use through "
                 "-libs=<its name>; repeatable (workers --preload its library)");
  app.add_option("--codegen-plugin", sources.codegen_plugins,
                 "a codegen plugin executable (proto/tune/v1/plugin.proto) whose template "
                 "families compete like built-in ones; repeatable");
  app.add_option("--local-worker-arg", options.local_worker_args,
                 "an argument for every local worker, e.g. --local-worker-arg=--libs=dnnl; "
                 "repeatable");
  app.add_option("--tls-cert", options.tls.cert, "the daemon's certificate chain (PEM): serve TLS")
      ->envname("TUNE_TLS_CERT");
  app.add_option("--tls-key", options.tls.key, "the private key of --tls-cert (PEM)")
      ->envname("TUNE_TLS_KEY");
  app.add_option("--tls-ca", options.tls.ca,
                 "CA certificates (PEM): every worker and client must present a certificate "
                 "signed by them (mutual TLS)")
      ->envname("TUNE_TLS_CA");
  app.add_flag("--insecure", options.insecure,
               "serve plaintext on an address beyond loopback (refused without this flag)");
  // The web side and the log format (tuner/http_server.h, common/logging.h).
  CLI::Option* http =
      app.add_option("--http", options.http_listen,
                     "HOST:PORT to serve the dashboard, the JSON API (/api/) and Prometheus "
                     "metrics (/metrics) on: HTTPS with --tls-cert and --tls-key, else plain HTTP, "
                     "which beyond loopback needs --insecure (port 0 picks a free port)");
  app.add_option("--http-port-file", options.http_port_file,
                 "write the HTTP port to this file once ready (for scripts and tests)")
      ->needs(http);
  std::string log_format = "text";
  app.add_option("--log-format", log_format,
                 "text, or json: one JSON object per line (time, level, logger, message, pid); "
                 "local workers get the same format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }

  if (absl::Status s = tune::InitLogging(log_level); !s.ok()) {
    return Fail(kExitUsage, std::string(s.message()));
  }
  if (absl::Status s = tune::SetLogFormat(log_format); !s.ok()) {
    return Fail(kExitUsage, std::string(s.message()));
  }
  // A peer that fails every TLS handshake must not flood the log (net/grpc_log.h).
  tune::net::RouteGrpcLogs();
  if (log_format != "text") {
    options.local_worker_args.push_back(tune::StrCat("--log-format=", log_format));
  }
  options.worker_log_level = log_level;
  if (local_workers == "auto") {
    options.local_workers = AutoLocalWorkers();
  } else if (!absl::SimpleAtoi(local_workers, &options.local_workers) ||
             options.local_workers < 0) {
    return Fail(
        kExitUsage,
        tune::StrCat("--local-workers '", local_workers,
                     "' is not valid; accepted: a count >= 0, or 'auto' (every core but one)"));
  }
  if (options.scheduler.build_threads < 1) {
    return Fail(kExitUsage, "--build-threads must be >= 1");
  }
  if (artifact_store_mb < 0) {
    return Fail(kExitUsage, tune::StrCat("--artifact-store-mb ", artifact_store_mb,
                                         " is not valid; accepted: MiB >= 0 (0: no store)"));
  }
  options.scheduler.artifact_store_bytes = static_cast<uint64_t>(artifact_store_mb) << 20;
  if (options.scheduler.artifact_store_dir.empty()) {
    options.scheduler.artifact_store_dir = options.db_path + ".artifacts";
  }
  if (options.scheduler.build_timeout_ms < 1) {
    return Fail(kExitUsage, "--build-timeout-ms must be >= 1");
  }
  if (options.scheduler.heartbeat_interval_ms < 10) {
    return Fail(kExitUsage, "--heartbeat-ms must be >= 10");
  }
  if (options.scheduler.heartbeat_deadline_ms <= options.scheduler.heartbeat_interval_ms) {
    return Fail(kExitUsage, "--worker-deadline-ms must be greater than --heartbeat-ms");
  }
  absl::StatusOr<tune::Catalog> catalog = tune::LoadCatalog(sources);
  if (!catalog.ok()) {
    return Fail(kExitUsage, std::string(catalog.status().message()));
  }
  for (const tune::CatalogFamily& f : catalog->families()) {
    tune::Logger("daemon")->info("codegen plugin {}: family {} (version {})", f.source, f.tpl->name,
                                 f.tpl->version);
  }
  for (const tune::ExternKernel& k : catalog->extern_kernels()) {
    tune::Logger("daemon")->info("extern kernel {}: {} from {} ({}x{}, {})", k.name, k.symbol,
                                 k.library_path, k.mr, k.nr, k.isa);
  }
  if (!program_templates.empty()) {
    tune::Logger("daemon")->warn("{} templates of this program's own (jobs may name them): {}",
                                 program_templates.size(), TemplateNames(program_templates));
  }
  options.scheduler.catalog = *std::move(catalog);

  if (absl::Status s = tune::tuner::CheckSecurityOptions(options); !s.ok()) {
    return Fail(kExitUsage, std::string(s.message()));
  }
  absl::StatusOr<std::unique_ptr<tune::tuner::Daemon>> daemon = tune::tuner::Daemon::Start(options);
  if (!daemon.ok()) {
    return Fail(kExitStartupError, std::string(daemon.status().message()));
  }

  // SIGINT / SIGTERM are blocked in every thread (see main) and taken here.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  int sig = 0;
  sigwait(&stop_signals, &sig);
  tune::Logger("daemon")->info("{} received; stopping", sigabbrev_np(sig));
  (*daemon)->Shutdown();
  return 0;
}

}  // namespace

namespace tune::tuner {

int RunDaemon(int argc, char** argv, const std::vector<const KernelTemplate*>& program_templates) {
  if (argc >= 2 && std::string_view(argv[1]) == kBuildChildFlag) {
    return RunBuildChild(kBuildRequestFd, kBuildReplyFd, program_templates);
  }
  if (argc >= 2 && std::string_view(argv[1]) == "token") {
    return TokenAdminMain(argc - 1, argv + 1);
  }
  // Before any thread exists, so that every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return Serve(argc, argv, program_templates);
}

}  // namespace tune::tuner
