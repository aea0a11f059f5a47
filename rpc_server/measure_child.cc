#include "rpc_server/measure_child.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>

#include "common/cpu_amx.h"
#include "common/cpu_set.h"
#include "common/host.h"
#include "common/host_cpu.h"
#include "common/reference.h"
#include "common/runtime_libs.h"
#include "common/strings.h"
#include "proto/convert.h"
#include "proto/framing.h"
#include "rpc_server/device_info.h"
#include "rpc_server/gpu/gpu_device.h"
#include "rpc_server/gpu/gpu_measure.h"
#include "rpc_server/preload.h"
#include "rpc_server/worker_faults.h"

namespace tune::rpc {
namespace {

using Clock = std::chrono::steady_clock;

// Reference outputs kept at most (in elements of 4 bytes, f32 or i32: ~1 GiB); the cache is
// emptied beyond it.
constexpr size_t kMaxReferenceElements = size_t{256} << 20;

// dlclose()s on scope exit, so the next trial may load a new file at the same path.
class LibraryHandle {
 public:
  explicit LibraryHandle(void* handle) : handle_(handle) {}
  ~LibraryHandle() {
    if (handle_ != nullptr) {
      dlclose(handle_);
    }
  }
  LibraryHandle(const LibraryHandle&) = delete;
  LibraryHandle& operator=(const LibraryHandle&) = delete;
  void* get() const { return handle_; }

 private:
  void* handle_;
};

std::string DlError() {
  const char* e = dlerror();
  return e != nullptr ? e : "unknown error";
}

// The prepared weights of kernel `entry` in `library` (common/workload.h, WeightForm): its
// `_prepared_floats` floats, written by its `_prepare` from the canonical `weight`. NotFound when
// a symbol is missing, FailedPrecondition when the size is out of range, Internal when the
// preparation fails.
absl::StatusOr<AlignedWords> PrepareWeights(void* library, const std::string& entry,
                                            const void* weight) {
  const std::string size_name = PreparedFloatsName(entry);
  const std::string prepare_name = PrepareFunctionName(entry);
  dlerror();
  const auto* floats = static_cast<const int64_t*>(dlsym(library, size_name.c_str()));
  using Prepare = int32_t (*)(const void*, void*);
  auto prepare = reinterpret_cast<Prepare>(dlsym(library, prepare_name.c_str()));
  if (floats == nullptr || prepare == nullptr) {
    return absl::NotFoundError(
        StrCat("the workload takes prepared weights, and the artifact lacks ",
               floats == nullptr ? size_name : prepare_name));
  }
  if (*floats < 1 || *floats > kMaxTensorElements) {
    return absl::FailedPreconditionError(StrCat(size_name, " is ", *floats, ": not in [1, 2^40]"));
  }
  AlignedWords prepared(static_cast<size_t>(*floats));
  if (int32_t rc = prepare(weight, prepared.data()); rc != 0) {
    return absl::InternalError(StrCat(prepare_name, " returned ", rc));
  }
  return prepared;
}

}  // namespace

const std::vector<uint32_t>& ChildMeasurer::Reference(const Workload& workload, uint64_t seed) {
  std::string key = StrCat(workload.ToString(), "#", seed);
  auto it = references_.find(key);
  if (it != references_.end()) {
    return it->second;
  }
  TensorSet inputs(workload, seed);
  // ReferenceType (f32 or i32) has 4-byte elements.
  std::vector<uint32_t> output(inputs.output_size());
  RunReference(workload, inputs.Inputs(), output.data());
  if (reference_elements_ + output.size() > kMaxReferenceElements) {
    references_.clear();
    reference_elements_ = 0;
  }
  reference_elements_ += output.size();
  return references_.emplace(std::move(key), std::move(output)).first->second;
}

Measurement ChildMeasurer::Measure(const v1::MeasureChildTrial& trial,
                                   const std::function<void()>& on_started) {
  // A request this worker cannot read (another tune version) says nothing of the config.
  absl::StatusOr<Workload> workload = Workload::Parse(trial.workload());
  if (!workload.ok()) {
    return Measurement::Failed(ErrorKind::kWorkerError,
                               StrCat("workload: ", std::string(workload.status().message())));
  }
  absl::StatusOr<TimingOptions> timing = TimingOptionsFromProto(trial.timing());
  if (!timing.ok()) {
    return Measurement::Failed(ErrorKind::kWorkerError, std::string(timing.status().message()));
  }
  const size_t arity = workload->Arguments().size();
  if (arity < kMinKernelArgs || arity > kMaxKernelArgs) {
    return Measurement::Failed(ErrorKind::kUnsupported,
                               StrCat("workload ", trial.workload(), " has ", arity,
                                      " kernel arguments; this worker calls kernels with ",
                                      kMinKernelArgs, " to ", kMaxKernelArgs));
  }

  dlerror();
  LibraryHandle library(dlopen(trial.artifact_path().c_str(), RTLD_NOW | RTLD_LOCAL));
  if (library.get() == nullptr) {
    const std::string error = DlError();
    return Measurement::Failed(DlopenFailureKind(error), StrCat("cannot load artifact: ", error));
  }
  dlerror();
  void* entry = dlsym(library.get(), trial.entry_symbol().c_str());
  if (entry == nullptr) {
    return Measurement::Failed(ErrorKind::kLoadError, StrCat("entry symbol '", trial.entry_symbol(),
                                                             "' not found: ", DlError()));
  }

  const std::vector<uint32_t>& want = Reference(*workload, timing->seed);
  TensorSet tensors(*workload, timing->seed);
  std::vector<void*> pointers = tensors.AbiPointers();
  std::vector<size_t> bytes;
  for (const TensorArg& arg : workload->Arguments()) {
    bytes.push_back(static_cast<size_t>(arg.NumBytes()));
  }
  // Prepared weights: the artifact's own preparation, once and untimed; the kernel then takes
  // them in place of the canonical weights (argument 1).
  AlignedWords prepared;  // on cache lines, as the canonical tensors are
  if (workload->prepared_weights()) {
    absl::StatusOr<AlignedWords> done =
        PrepareWeights(library.get(), trial.entry_symbol(), pointers[1]);
    if (!done.ok()) {
      return Measurement::Failed(done.status().code() == absl::StatusCode::kInternal
                                     ? ErrorKind::kRuntimeCrash
                                     : ErrorKind::kLoadError,
                                 std::string(done.status().message()));
    }
    prepared = *std::move(done);
    pointers[1] = prepared.data();
    bytes[1] = prepared.size() * sizeof(uint32_t);
  }
  KernelCall call(entry, pointers);
  std::vector<CacheFlusher::Region> regions;
  for (size_t i = 0; i < pointers.size(); ++i) {
    regions.push_back({pointers[i], bytes[i]});
  }
  const CacheFlusher flusher(std::move(regions));

  on_started();
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timing->timeout_ms);

  // Warm-up: the only call whose output is checked, and it counts for no time.
  if (int32_t rc = call(); rc != 0) {
    return Measurement::Failed(KernelStatusKind(rc), KernelStatusMessage(rc));
  }
  CompareResult compared =
      CompareOutputs(*workload, tensors.output_data(), want.data(), tensors.output_size(),
                     trial.tolerance_scale(), tensors.scale_product());
  if (!compared.ok) {
    return Measurement::Failed(ErrorKind::kWrongAnswer, compared.message);
  }

  return TimeRounds(call, *timing, deadline, &flusher);
}

namespace {

// How the runtime shims among `needed_libs` ran (each shim's describe line), " | "-joined; empty
// when the kernel called none. The shims are preloaded RTLD_GLOBAL, so dlsym finds them.
std::string DescribeLibraries(const google::protobuf::RepeatedPtrField<std::string>& needed_libs) {
  std::string out;
  for (const std::string& name : needed_libs) {
    const RuntimeLibrary* lib = FindRuntimeLibraryByShim(name);
    if (lib == nullptr) {
      lib = FindRuntimeLibrary(name);
    }
    if (lib == nullptr) {
      continue;
    }
    using Describe = int32_t (*)(char*, int64_t);
    auto describe =
        reinterpret_cast<Describe>(dlsym(RTLD_DEFAULT, std::string(lib->describe_symbol).c_str()));
    if (describe == nullptr) {
      continue;
    }
    char line[1024] = {};
    if (describe(line, sizeof(line)) == 0) {
      StrAppend(&out, out.empty() ? "" : " | ", lib->name, ": ", line);
    }
  }
  return out;
}

// The version `name`'s shim reports (tune_<name>_version, which loads the library), or
// "unavailable" where the shim or its library does not load.
std::string LibraryVersion(const std::string& name) {
  const RuntimeLibrary* lib = FindRuntimeLibrary(name);
  absl::StatusOr<std::string> path =
      lib != nullptr ? RuntimeLibraryPath(*lib) : absl::NotFoundError(name);
  void* shim = path.ok() ? dlopen(path->c_str(), RTLD_NOW | RTLD_GLOBAL) : nullptr;
  using Version = int32_t (*)(char*, int64_t);
  auto version =
      shim != nullptr
          ? reinterpret_cast<Version>(dlsym(shim, std::string(lib->version_symbol).c_str()))
          : nullptr;
  char text[128] = {};
  if (version == nullptr || version(text, sizeof(text)) != 0 || text[0] == '\0') {
    return "unavailable";
  }
  return text;
}

v1::GpuDevice GpuDeviceToProto(const gpu::GpuDeviceInfo& info) {
  v1::GpuDevice out;
  out.set_runtime(info.kind == TargetKind::kRocm ? "rocm" : "cuda");
  out.set_index(info.index);
  out.set_name(info.name);
  out.set_arch(info.arch);
  out.set_multiprocessors(info.multiprocessors);
  out.set_total_memory_bytes(info.total_memory_bytes);
  out.set_sm_clock_khz(info.sm_clock_khz);
  out.set_memory_clock_khz(info.memory_clock_khz);
  out.set_l2_cache_bytes(info.l2_cache_bytes);
  out.set_driver_version(info.driver_version);
  out.set_runtime_library(info.runtime_library);
  out.set_driver_release(LoadedLibraryRelease(info.runtime_library));
  return out;
}

// The exit code of a child whose GPU context a kernel broke (a sticky error): the supervisor
// starts a fresh child for the next trial.
constexpr int kExitGpuContextLost = 3;

}  // namespace

int RunMeasureChild(int in_fd, int out_fd) {
  // A crashing kernel is expected here: no core files.
  rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);

  v1::MeasureChildRequest request;
  std::string error;
  if (ReadFrame(in_fd, &request, std::nullopt, -1, &error) != ReadOutcome::kOk ||
      !request.has_setup()) {
    return 1;
  }
  // Die with the worker, even if it is killed without closing our pipes.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != request.setup().parent_pid()) {
    return 1;
  }

  // Pinned before anything runs, so that every thread a library or kernel starts inherits it.
  if (request.setup().cpus_size() > 0) {
    absl::Status pinned = PinToCpus({request.setup().cpus().begin(), request.setup().cpus().end()});
    if (!pinned.ok()) {
      v1::MeasureChildReply failed;
      failed.mutable_ready()->set_pid(getpid());
      failed.mutable_ready()->set_error(std::string(pinned.message()));
      WriteFrame(out_fd, failed).IgnoreError();
      return 1;
    }
  }
  // AMX kernels ask Linux for the tile data on their first call; the child asks once here, so
  // that no trial's first (checked) call pays for the system call. A refusal is the kernels' to
  // report (TUNE_CPU_ERROR_AMX_DENIED), with the trial they ran in.
  if (GetHostCpu().HasFeature("amx-tile")) {
    RequestAmx().IgnoreError();
  }
  std::vector<std::string> paths(request.setup().preload_paths().begin(),
                                 request.setup().preload_paths().end());
  absl::StatusOr<std::vector<PreloadedLibrary>> preloaded = PreloadLibraries(paths);
  v1::MeasureChildReply ready;
  ready.mutable_ready()->set_pid(getpid());
  if (!preloaded.ok()) {
    ready.mutable_ready()->set_error(std::string(preloaded.status().message()));
  }
  // A GPU is opened here, after the preloads (a library shim may bring its own runtime).
  std::unique_ptr<gpu::GpuDevice> device;
  if (preloaded.ok() && !request.setup().device().empty() && request.setup().device() != "cpu") {
    absl::StatusOr<DeviceSpec> spec = ParseDeviceSpec(request.setup().device());
    absl::StatusOr<std::unique_ptr<gpu::GpuDevice>> opened =
        spec.ok() ? gpu::GpuDevice::Open(spec->kind, spec->index)
                  : absl::StatusOr<std::unique_ptr<gpu::GpuDevice>>(spec.status());
    if (!opened.ok()) {
      ready.mutable_ready()->set_device_error(std::string(opened.status().message()));
      WriteFrame(out_fd, ready).IgnoreError();
      return 1;
    }
    device = *std::move(opened);
    *ready.mutable_ready()->mutable_gpu() = GpuDeviceToProto(device->info());
  }
  if (preloaded.ok()) {
    for (const std::string& name : request.setup().library_versions_of()) {
      (*ready.mutable_ready()->mutable_library_versions())[name] = LibraryVersion(name);
    }
  }
  if (!WriteFrame(out_fd, ready).ok() || !preloaded.ok()) {
    return 1;
  }

  ChildMeasurer measurer;
  std::unique_ptr<gpu::GpuMeasurer> gpu_measurer;
  if (device) {
    gpu_measurer = std::make_unique<gpu::GpuMeasurer>(device.get());
  }
  while (true) {
    request.Clear();
    ReadOutcome outcome = ReadFrame(in_fd, &request, std::nullopt, -1, &error);
    if (outcome == ReadOutcome::kEof) {
      return 0;
    }
    if (outcome != ReadOutcome::kOk || !request.has_trial()) {
      return 1;
    }
    const v1::MeasureChildTrial& trial = request.trial();
    bool pipe_ok = true;
    auto on_started = [&] {
      v1::MeasureChildReply started;
      started.mutable_started()->set_trial_id(trial.trial_id());
      pipe_ok = WriteFrame(out_fd, started).ok();
    };
    Measurement m = gpu_measurer ? gpu_measurer->Measure(trial, on_started)
                                 : measurer.Measure(trial, on_started);
    std::string libraries = DescribeLibraries(trial.needed_libs());
    if (!libraries.empty()) {
      m.library_info =
          m.library_info.empty() ? libraries : StrCat(m.library_info, " | ", libraries);
    }
    if (m.error == ErrorKind::kRuntimeCrash && !m.library_info.empty()) {
      StrAppend(&m.message, " (", m.library_info, ")");  // the library's last error, if any
    }
    v1::MeasureChildReply reply;
    *reply.mutable_measurement() = MeasurementToProto(m);
    const bool context_lost = device && device->broken();
    reply.set_child_exits(context_lost);
    if (!pipe_ok || !WriteFrame(out_fd, reply).ok()) {
      return 1;
    }
    if (context_lost) {
      return kExitGpuContextLost;  // the context is unusable: a fresh process takes the next trial
    }
  }
}

}  // namespace tune::rpc
