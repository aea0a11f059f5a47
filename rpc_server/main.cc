// tune-server: the worker that runs on each device host. It dials a tune-daemon, registers its
// device key and capabilities, preloads external libraries once, and measures the artifacts it
// is sent in a supervised child process (the same binary, started with --measure-child).
//
// Exit codes: 0 after SIGINT/SIGTERM, 1 when start-up fails (a --preload that cannot be loaded,
// an unusable cache directory, a GPU that cannot be opened or whose arch tune does not support),
// 2 for bad flags (a malformed --device among them).
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/cpu_set.h"
#include "common/host.h"
#include "common/host_cpu.h"
#include "common/logging.h"
#include "common/runtime_libs.h"
#include "common/strings.h"
#include "net/grpc_log.h"
#include "net/tls.h"
#include "rpc_server/device_info.h"
#include "rpc_server/measure_child.h"
#include "rpc_server/preload.h"
#include "rpc_server/supervisor.h"
#include "rpc_server/worker.h"

namespace {

// The core type the measurement children should run `lib` with (common/runtime_libs.h,
// CoreTypeChoice: OpenBLAS's OPENBLAS_CORETYPE), as "VAR=value", when its own detection falls
// short of this CPU's widest vectors, so that its candidates are measured at their best; nullopt
// otherwise. The library is preloaded by now. A user's own setting of the variable is kept, with
// a warning when it holds the library below this CPU's widest vectors (records say the core in
// library_info).
std::optional<std::string> CoreTypeForChildren(const tune::RuntimeLibrary& lib) {
  if (lib.core_type == nullptr) {
    return std::nullopt;
  }
  const tune::CoreTypeChoice& choice = *lib.core_type;
  // The shim was loaded with RTLD_GLOBAL, and the library with it.
  using CoreName = char* (*)();
  auto corename =
      reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, std::string(choice.core_symbol).c_str()));
  if (corename == nullptr) {
    return std::nullopt;
  }
  const std::string core = corename();
  std::optional<std::string> better = choice.better(core);
  if (const char* users = std::getenv(std::string(choice.env).c_str()); users != nullptr) {
    if (better) {
      tune::Logger("worker")->warn(
          "{}={} is set: {} candidates run its '{}' kernels, without this CPU's widest vectors "
          "({}={} has them; unset it to let tune-server choose)",
          choice.env, users, choice.library_name, core, choice.env, *better);
    }
    return std::nullopt;
  }
  if (!better) {
    return std::nullopt;
  }
  tune::Logger("worker")->info(
      "{} chose core '{}', without this CPU's widest vectors: measurements run it with {}={} (set "
      "{} to choose otherwise)",
      choice.library_name, core, choice.env, *better, choice.env);
  return tune::StrCat(choice.env, "=", *better);
}

constexpr int kExitStartupError = 1;
constexpr int kExitUsage = 2;

using tune::StrCat;

int Fail(int code, absl::string_view message) {
  fmt::print(stderr, "tune-server: {}\n", message);
  return code;
}

int Serve(int argc, char** argv) {
  using tune::rpc::WorkerOptions;
  CLI::App app{"tune-server: measures tune kernels for a tune-daemon"};
  std::string daemon;
  std::string device = "cpu";
  std::vector<std::string> preload;
  std::vector<std::string> libs;
  std::string name;
  int threads = 0;
  std::string cpu_list;
  int capacity = 1;
  std::string cache_dir;
  int64_t cache_max_mb = tune::rpc::ArtifactCache::kDefaultMaxBytes >> 20;
  std::string log_level;
  app.add_option("--daemon", daemon, "the daemon's worker address, HOST:PORT")->required();
  app.add_option("--device", device,
                 "device to measure on: cpu, cuda:N or rocm:N (N the device ordinal); a GPU is "
                 "opened by the measurement process only")
      ->capture_default_str();
  app.add_option("--preload", preload,
                 "shared library to load (RTLD_NOW | RTLD_GLOBAL) before any kernel; repeatable, "
                 "loaded in the order given");
  app.add_option("--libs", libs,
                 "external libraries whose candidates this worker runs, comma-separated: "
                 "openblas, dnnl (cpu); cublas, cudnn (cuda); rocblas, hipblaslt, miopen (rocm) "
                 "(their runtime shims are preloaded like --preload)")
      ->delimiter(',');
  app.add_option("--name", name, "worker name (default: <hostname>-<pid>)");
  std::string thread_variables;
  for (std::string_view var : tune::LibraryThreadVariables()) {
    thread_variables += StrCat(thread_variables.empty() ? "" : ", ", var);
  }
  app.add_option("--threads", threads,
                 StrCat("threads a kernel may use (sets ", thread_variables,
                        " for measurements; default: all cores)"));
  app.add_option("--cpus", cpu_list,
                 "CPUs the measurement process and its kernels' threads are pinned to, e.g. "
                 "2-3 (default: any; --threads defaults to their count)");
  app.add_option("--capacity", capacity, "measurements run at the same time")
      ->capture_default_str();
  app.add_option("--cache-dir", cache_dir,
                 "directory of cached artifacts, owned by this user and writable by no one else "
                 "(default: $TMPDIR/tune-artifacts-<uid>)");
  app.add_option("--cache-max-mb", cache_max_mb,
                 "size limit of the artifact cache in MiB; the least recently used artifacts "
                 "are evicted beyond it")
      ->capture_default_str();
  app.add_option("--log-level", log_level,
                 "trace, debug, info, warn, error, critical or off (default: $TUNE_LOG_LEVEL or "
                 "info)");
  tune::net::TlsFiles tls;
  std::string token_file;
  app.add_option("--tls-ca", tls.ca,
                 "CA certificate (PEM) that must have signed the daemon's certificate; turns TLS "
                 "on: nothing is sent or accepted before the daemon proves its identity")
      ->envname("TUNE_TLS_CA");
  app.add_option("--tls-cert", tls.cert, "this worker's certificate (PEM), for mutual TLS")
      ->envname("TUNE_TLS_CERT");
  app.add_option("--tls-key", tls.key, "the private key of --tls-cert (PEM)")
      ->envname("TUNE_TLS_KEY");
  app.add_option("--tls-server-name", tls.server_name,
                 "the name the daemon's certificate must carry, when not the host of --daemon");
  app.add_option("--token-file", token_file,
                 "file whose first line is a worker token (default: $TUNE_TOKEN), needed when the "
                 "daemon's log holds tokens");
  std::string log_format = "text";
  app.add_option("--log-format", log_format,
                 "text, or json: one JSON object per line (time, level, logger, message, pid)")
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
  tune::net::RouteGrpcLogs();
  absl::StatusOr<tune::rpc::DeviceSpec> device_spec = tune::rpc::ParseDeviceSpec(device);
  if (!device_spec.ok()) {
    return Fail(kExitUsage, device_spec.status().message());
  }
  const tune::TargetKind device_kind = device_spec->kind;
  if (threads < 0) {
    return Fail(kExitUsage, "--threads must be >= 1 (or 0 for all cores)");
  }
  if (capacity < 1) {
    return Fail(kExitUsage, "--capacity must be >= 1");
  }
  std::vector<int> cpus;
  if (!cpu_list.empty()) {
    absl::StatusOr<std::vector<int>> parsed = tune::ParseCpuList(cpu_list);
    if (!parsed.ok()) {
      return Fail(kExitUsage, StrCat("--cpus: ", parsed.status().message()));
    }
    cpus = *std::move(parsed);
    if (threads == 0) {
      threads = static_cast<int>(cpus.size());
    } else if (threads > static_cast<int>(cpus.size())) {
      return Fail(kExitUsage, StrCat("--threads ", threads, " exceeds the ", cpus.size(),
                                     " CPUs of --cpus ", cpu_list));
    }
  }
  if (cache_max_mb < 1) {
    return Fail(kExitUsage, "--cache-max-mb must be >= 1 (a size in MiB)");
  }

  // The libraries of the worker's device kind: CPU libraries for cpu, cuBLAS/cuDNN for cuda,
  // rocBLAS/hipBLASLt/MIOpen for rocm (their shims load the vendor library only when a kernel
  // calls them).
  for (const std::string& lib : libs) {
    const tune::RuntimeLibrary* runtime = tune::FindRuntimeLibrary(lib);
    if (runtime == nullptr || runtime->target_kind != device_kind) {
      std::vector<std::string> known;
      for (const tune::RuntimeLibrary& r : tune::RuntimeLibraries()) {
        if (r.target_kind == device_kind) {
          known.emplace_back(r.name);
        }
      }
      return Fail(kExitUsage,
                  StrCat("--libs: unknown library '", lib, "' for a ",
                         device_kind == tune::TargetKind::kLlvm ? "CPU" : device_spec->ToString(),
                         " worker; known: ", known.empty() ? "none" : tune::Join(known, ", ")));
    }
    absl::StatusOr<std::string> path = tune::RuntimeLibraryPath(*runtime);
    if (!path.ok()) {
      return Fail(kExitStartupError, StrCat("--libs: ", path.status().message()));
    }
    preload.push_back(*path);
  }
  std::sort(libs.begin(), libs.end());
  libs.erase(std::unique(libs.begin(), libs.end()), libs.end());

  // Loaded here once, so that a bad path stops the worker before it registers; every
  // measurement child loads the same list again before its first kernel.
  absl::StatusOr<std::vector<tune::rpc::PreloadedLibrary>> preloaded =
      tune::rpc::PreloadLibraries(preload);
  if (!preloaded.ok()) {
    return Fail(kExitStartupError, preloaded.status().message());
  }

  WorkerOptions options;
  options.daemon_address = daemon;
  options.tls = tls;
  if (absl::Status s = tune::net::ChannelCredentialsFor(tls).status(); !s.ok()) {
    return Fail(kExitUsage, s.message());
  }
  absl::StatusOr<std::string> token = tune::net::ResolveToken(token_file);
  if (!token.ok()) {
    return Fail(kExitUsage, token.status().message());
  }
  options.token = *token;
  options.registration.set_name(name.empty() ? StrCat(tune::HostName(), "-", getpid()) : name);
  options.supervisor.device = device_spec->ToString();
  options.supervisor.preload_paths = preload;
  options.supervisor.cpus = cpus;
  std::string device_key = tune::rpc::HostCpuDeviceKey();
  // The worker never opens the GPU nor loads a library's shim: a first measurement process
  // does, and says what it found (the GPU, the libraries' versions for the fingerprint).
  tune::v1::GpuDevice gpu;
  tune::rpc::LibraryVersions library_versions;
  if (device_kind != tune::TargetKind::kLlvm || !libs.empty()) {
    tune::rpc::SupervisorOptions probe_options = options.supervisor;
    probe_options.library_versions_of = libs;
    absl::StatusOr<std::unique_ptr<tune::rpc::MeasureSupervisor>> probe =
        tune::rpc::MeasureSupervisor::Create(probe_options);
    absl::Status started = probe.ok() ? (*probe)->StartChild() : probe.status();
    if (!started.ok()) {
      return Fail(kExitStartupError, StrCat("--device ", device, ": ", started.message()));
    }
    gpu = (*probe)->gpu();
    library_versions = (*probe)->library_versions();
    probe->reset();
  }
  if (device_kind == tune::TargetKind::kLlvm) {
    *options.registration.mutable_capabilities() =
        tune::rpc::HostCpuCapabilities(threads, capacity, *preloaded, library_versions);
  } else {
    if (absl::Status s = tune::rpc::CheckGpuArchSupported(gpu); !s.ok()) {
      return Fail(kExitStartupError, StrCat("--device ", device, ": ", s.message()));
    }
    device_key = tune::rpc::GpuDeviceKey(gpu);
    *options.registration.mutable_capabilities() =
        tune::rpc::GpuCapabilities(gpu, threads, capacity, *preloaded, library_versions);
  }
  options.registration.set_device_key(device_key);
  for (const std::string& lib : libs) {
    options.registration.mutable_capabilities()->add_libs(lib);
  }
  options.cache_dir = cache_dir;
  options.cache_max_bytes = cache_max_mb << 20;
  options.supervisor.device_fingerprint = options.registration.capabilities().device_fingerprint();
  const std::string options_fingerprint = options.supervisor.device_fingerprint;
  for (const std::string& lib : libs) {
    if (std::optional<std::string> setting = CoreTypeForChildren(*tune::FindRuntimeLibrary(lib))) {
      options.supervisor.child_env.push_back(*setting);
    }
  }
  if (threads > 0) {
    for (std::string_view var : tune::LibraryThreadVariables()) {
      options.supervisor.child_env.push_back(StrCat(var, "=", threads));
    }
  }
  absl::StatusOr<std::unique_ptr<tune::rpc::Worker>> worker =
      tune::rpc::Worker::Create(std::move(options));
  if (!worker.ok()) {
    return Fail(kExitStartupError, worker.status().message());
  }

  // SIGINT / SIGTERM are blocked in every thread (see main) and taken here.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    tune::Logger("worker")->info("{} received; stopping", sigabbrev_np(sig));
    (*worker)->Shutdown();
  });
  tune::Logger("worker")->info("tune-server {} on {} ({}), {} preloaded, serving {}", device_key,
                               tune::HostName(), options_fingerprint, preloaded->size(), daemon);
  absl::Status served = (*worker)->Run();
  // Run only returns after Shutdown, which came from the signal thread.
  signal_thread.join();
  if (!served.ok()) {
    return Fail(kExitStartupError, served.message());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::string_view(argv[1]) == tune::rpc::kMeasureChildFlag) {
    return tune::rpc::RunMeasureChild(tune::rpc::kChildRequestFd, tune::rpc::kChildReplyFd);
  }
  // Before any thread exists, so that every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return Serve(argc, argv);
}
