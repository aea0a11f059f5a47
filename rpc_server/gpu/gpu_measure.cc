#include "rpc_server/gpu/gpu_measure.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "common/reference.h"
#include "common/status.h"
#include "common/strings.h"
#include "proto/convert.h"
#include "rpc_server/gpu/gpu_candidate.h"
#include "rpc_server/gpu/gpu_timing.h"
#include "rpc_server/gpu/reference_ptx.h"
#include "rpc_server/timing.h"

namespace tune::gpu {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kQuietNan = 0x7fc00000u;
// Flush buffer when the device reports no L2 size.
constexpr int64_t kDefaultFlushBytes = int64_t{128} << 20;

// Device buffers freed on scope exit.
class Buffers {
 public:
  explicit Buffers(GpuDevice* device) : device_(device) {}
  ~Buffers() {
    for (DevicePtr p : ptrs_) {
      device_->Free(p);
    }
  }
  absl::StatusOr<DevicePtr> Add(size_t bytes) {
    ASSIGN_OR_RETURN(DevicePtr p, device_->Allocate(std::max<size_t>(bytes, 4)));
    ptrs_.push_back(p);
    return p;
  }

 private:
  GpuDevice* device_;
  std::vector<DevicePtr> ptrs_;
};

}  // namespace

Measurement GpuMeasurer::Measure(const v1::MeasureChildTrial& trial,
                                 const std::function<void()>& on_started) {
  GpuDevice& dev = *device_;
  const GpuDeviceInfo& info = dev.info();
  // A request this worker cannot read (another tune version) says nothing of the config.
  absl::StatusOr<Workload> workload = Workload::Parse(trial.workload());
  if (!workload.ok()) {
    return Measurement::Failed(ErrorKind::kWorkerError,
                               StrCat("workload: ", std::string(workload.status().message())));
  }
  if (workload->prepared_weights()) {
    return Measurement::Failed(ErrorKind::kUnsupported,
                               StrCat("workload ", trial.workload(),
                                      ": weights=prepared is measured on CPU workers only"));
  }
  if (info.kind == TargetKind::kCuda && !CudaReferenceChecks(*workload)) {
    // A worker that cannot check an answer does not time the kernel.
    return Measurement::Failed(
        ErrorKind::kUnsupported,
        StrCat("workload ", trial.workload(), ": this worker's device references ",
               "check dtype=", CudaReferenceDtypes().Names(),
               " GEMMs and layout=NHWC convolutions (other conv2d layouts in f32 only)"));
  }
  absl::StatusOr<TimingOptions> timing = TimingOptionsFromProto(trial.timing());
  if (!timing.ok()) {
    return Measurement::Failed(ErrorKind::kWorkerError, std::string(timing.status().message()));
  }
  const std::vector<TensorArg> args = workload->Arguments();
  if (args.size() < rpc::kMinKernelArgs || args.size() > rpc::kMaxKernelArgs) {
    return Measurement::Failed(ErrorKind::kUnsupported,
                               StrCat("workload ", trial.workload(), " has ", args.size(),
                                      " kernel arguments; this worker calls kernels with ",
                                      rpc::kMinKernelArgs, " to ", rpc::kMaxKernelArgs));
  }
  const v1::ArtifactFormat format = trial.format() == v1::ARTIFACT_FORMAT_UNSPECIFIED
                                        ? v1::ARTIFACT_FORMAT_SHARED_OBJECT
                                        : trial.format();
  const v1::ArtifactFormat native =
      info.kind == TargetKind::kCuda ? v1::ARTIFACT_FORMAT_PTX : v1::ARTIFACT_FORMAT_HSACO;
  if (format != native && format != v1::ARTIFACT_FORMAT_SHARED_OBJECT) {
    return Measurement::Failed(
        ErrorKind::kWorkerError,
        StrCat("artifact.format ", v1::ArtifactFormat_Name(format), " cannot run on ",
               DeviceName(info.kind, info.index), "; accepted: ", v1::ArtifactFormat_Name(native),
               ", ARTIFACT_FORMAT_SHARED_OBJECT"));
  }

  // Buffers, inputs and the reference output.
  Buffers buffers(&dev);
  std::vector<DevicePtr> ptrs;
  const size_t out_index = static_cast<size_t>(workload->OutputIndex());
  int64_t needed_bytes = 0;  // the arguments and the reference output (f32)
  for (const TensorArg& a : args) {
    needed_bytes += a.NumBytes();
  }
  needed_bytes += args[out_index].NumElements() * 4;
  if (info.kind == TargetKind::kCuda) {
    needed_bytes += ReferenceKernels::ScratchBytes(*workload);
  }
  for (const TensorArg& a : args) {
    absl::StatusOr<DevicePtr> p = buffers.Add(static_cast<size_t>(a.NumBytes()));
    if (!p.ok()) {
      // More than the device has is the workload's verdict; less, a device busy with others.
      const ErrorKind kind = dev.broken()                             ? ErrorKind::kRuntimeCrash
                             : needed_bytes > info.total_memory_bytes ? ErrorKind::kUnsupported
                                                                      : ErrorKind::kWorkerError;
      return Measurement::Failed(
          kind, StrCat("cannot allocate ", a.name, " (", a.NumBytes(), " bytes; ", needed_bytes,
                       " in all, the device has ", info.total_memory_bytes,
                       ") on the device: ", p.status().message()));
    }
    ptrs.push_back(*p);
  }
  const DevicePtr output = ptrs[out_index];
  const int64_t out_elems = args[out_index].NumElements();
  const size_t out_bytes = static_cast<size_t>(args[out_index].NumBytes());
  const bool typed = workload->dtype() != Dtype::kF32 || workload->out_type() != ElementType::kF32;
  double scale_product = 1;
  const std::string reference_key = StrCat(workload->ToString(), "#", timing->seed);
  const bool have_reference = reference_key == reference_key_;
  // The worker's own kernels and copies: no verdict on the candidate.
  auto setup_failure = [&](const absl::Status& s) {
    return Measurement::Failed(dev.broken() ? ErrorKind::kRuntimeCrash : ErrorKind::kWorkerError,
                               StrCat("preparing inputs and the reference failed: ", s.message()));
  };
  if (info.kind == TargetKind::kCuda) {
    if (!references_) {
      absl::StatusOr<std::unique_ptr<ReferenceKernels>> refs = ReferenceKernels::Load(&dev);
      if (!refs.ok()) {
        return setup_failure(refs.status());
      }
      references_ = *std::move(refs);
    }
    std::vector<DevicePtr> inputs;
    for (size_t i = 0; i < ptrs.size(); ++i) {
      if (i == out_index) {
        continue;
      }
      inputs.push_back(ptrs[i]);
      const uint64_t seed = ArgumentSeed(timing->seed, i);
      absl::Status s = typed ? references_->FillTyped(*workload, args[i], ptrs[i], seed)
                             : references_->Fill(ptrs[i], args[i].NumElements(), seed);
      if (s.ok() && args[i].role == ArgRole::kScale) {
        float scale = 0;
        s = dev.CopyToHost(&scale, ptrs[i], sizeof(float));
        scale_product *= scale;
      }
      if (!s.ok()) {
        return setup_failure(s);
      }
    }
    if (!have_reference) {
      reference_key_.clear();
      reference_.assign(out_elems, 0.0f);
      absl::StatusOr<DevicePtr> ref_out = buffers.Add(static_cast<size_t>(out_elems) * 4);
      absl::Status s = ref_out.status();
      DevicePtr scratch = 0;
      if (const int64_t bytes = ReferenceKernels::ScratchBytes(*workload); s.ok() && bytes > 0) {
        absl::StatusOr<DevicePtr> p = buffers.Add(static_cast<size_t>(bytes));
        s = p.status();
        scratch = p.value_or(0);
      }
      if (s.ok()) {
        s = references_->Run(*workload, inputs, *ref_out, scratch);
      }
      if (s.ok()) {
        s = dev.CopyToHost(reference_.data(), *ref_out, static_cast<size_t>(out_elems) * 4);
      }
      if (!s.ok()) {
        return setup_failure(s);
      }
    }
  } else {
    TensorSet host(*workload, timing->seed);
    scale_product = host.scale_product();
    for (size_t i = 0; i < args.size(); ++i) {
      if (i == out_index) {
        continue;
      }
      if (absl::Status s = dev.CopyToDevice(ptrs[i], host.AbiPointers()[i],
                                            static_cast<size_t>(args[i].NumBytes()));
          !s.ok()) {
        return setup_failure(s);
      }
    }
    if (!have_reference) {
      reference_key_.clear();
      reference_.assign(out_elems, 0.0f);  // ReferenceType(workload)'s bits: f32 or i32
      RunReference(*workload, host.Inputs(), reference_.data());
    }
  }
  reference_key_ = reference_key;
  const std::vector<float>& want = reference_;

  // The candidate.
  Measurement failed;
  std::unique_ptr<GpuCandidate> candidate =
      format == v1::ARTIFACT_FORMAT_SHARED_OBJECT
          ? GpuCandidate::LoadHostEntry(dev, trial, ptrs, &failed)
          : GpuCandidate::LoadKernel(dev, trial, *workload, args, ptrs, &failed);
  if (candidate == nullptr) {
    return failed;
  }
  const std::string& library_info = candidate->library_info();
  const std::function<absl::Status()> call = [&candidate]() { return candidate->Call(); };
  auto crash = [&](const absl::Status& s, std::string_view when) {
    ErrorKind kind = ErrorKind::kRuntimeCrash;
    if (!dev.broken() && absl::IsUnimplemented(s)) {
      kind = ErrorKind::kUnsupported;
    } else if (!dev.broken() && absl::IsFailedPrecondition(s)) {
      kind = ErrorKind::kWorkerError;  // a vendor library this worker cannot open
    }
    Measurement m = Measurement::Failed(kind, StrCat(s.message(), when));
    m.library_info = library_info;
    return m;
  };

  on_started();
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timing->timeout_ms);

  // Warm-up: two runs, the output poisoned before each (f32: a quiet NaN; 16-bit floats: 0xffff,
  // a NaN of f16 and bf16 alike); the second's output is the only one checked. So the check
  // covers a launch that follows another, as every timed launch does: a kernel that keeps state
  // in module memory from launch to launch (a split reduction's workspace) must leave it as it
  // found it.
  auto poison = [&]() {
    return args[out_index].type == ElementType::kF32
               ? dev.Memset32(output, kQuietNan, static_cast<size_t>(out_elems))
               : dev.Memset8(output, 0xff, out_bytes);
  };
  absl::Status s;
  for (int run = 0; run < 2 && s.ok(); ++run) {
    s = poison();
    if (s.ok()) {
      s = call();
    }
  }
  if (s.ok()) {
    s = dev.Synchronize();
  }
  std::vector<uint32_t> got((out_bytes + 3) / 4);  // the output's bytes, 4-byte aligned
  if (s.ok()) {
    s = dev.CopyToHost(got.data(), output, out_bytes);
  }
  if (!s.ok()) {
    return crash(s, "");
  }
  CompareResult compared = CompareOutputs(*workload, got.data(), want.data(), out_elems,
                                          trial.tolerance_scale(), scale_product);
  if (!compared.ok) {
    Measurement m = Measurement::Failed(ErrorKind::kWrongAnswer, compared.message);
    m.library_info = library_info;
    return m;
  }

  // Timing: device time by graph replay, and the call-by-call reading (gpu_timing.h).
  GpuFlush flush;
  if (timing->flush_cache) {
    flush.bytes = info.l2_cache_bytes > 0 ? 2 * info.l2_cache_bytes : kDefaultFlushBytes;
    absl::StatusOr<DevicePtr> f = buffers.Add(static_cast<size_t>(flush.bytes));
    if (!f.ok()) {
      return crash(f.status(), " (setting up timing)");
    }
    flush.data = *f;
  }
  absl::StatusOr<GpuTimes> times = TimeOnGpu(dev, call, *timing, deadline, flush);
  if (!times.ok()) {
    return crash(times.status(), " (during timing)");
  }
  Measurement m = std::move(times->measurement);
  m.library_info = library_info;
  if (!times->graph_refused.empty()) {
    m.library_info = StrCat(library_info.empty() ? "" : StrCat(library_info, " | "),
                            "timing: events, graph capture refused: ", times->graph_refused);
  }
  return m;
}

}  // namespace tune::gpu
