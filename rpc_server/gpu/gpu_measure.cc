#include "rpc_server/gpu/gpu_measure.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>
#include <utility>

#include "common/files.h"
#include "common/reference.h"
#include "common/status.h"
#include "common/strings.h"
#include "proto/convert.h"
#include "rpc_server/gpu/gpu_timing.h"
#include "rpc_server/gpu/reference_ptx.h"
#include "rpc_server/timing.h"
#include "rpc_server/worker_faults.h"
#include "runtime/tune_launch_ex.h"

namespace tune::gpu {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint32_t kQuietNan = 0x7fc00000u;
constexpr unsigned kRefBlock = 256;
// Flush buffer when the device reports no L2 size.
constexpr int64_t kDefaultFlushBytes = int64_t{128} << 20;

Measurement Failure(ErrorKind kind, std::string message) {
  Measurement m;
  m.error = kind;
  m.message = std::move(message);
  return m;
}

GpuLaunch OneDimensional(int64_t elements) {
  GpuLaunch l;
  l.block[0] = kRefBlock;
  l.grid[0] = static_cast<uint32_t>((elements + kRefBlock - 1) / kRefBlock);
  return l;
}

// 90 for "sm_90" and "sm_90a"; 0 for what is not an sm_ name.
int ComputeCapability(const std::string& arch) {
  int version = 0;
  if (arch.rfind("sm_", 0) != 0) {
    return 0;
  }
  for (size_t i = 3; i < arch.size() && arch[i] >= '0' && arch[i] <= '9'; ++i) {
    version = version * 10 + (arch[i] - '0');
  }
  return version;
}

// Empty when the launch fits the device; otherwise names the limit it passes.
std::string CheckLaunch(const GpuLaunch& l, const KernelAttributes& attrs,
                        const GpuDeviceInfo& info) {
  constexpr const char* kAxis[] = {"x", "y", "z"};
  if (info.max_threads_per_block > 0 &&
      l.ThreadsPerBlock() > uint64_t(info.max_threads_per_block)) {
    return StrCat("block of ", l.ThreadsPerBlock(), " threads exceeds the device's ",
                  info.max_threads_per_block, " threads per block");
  }
  for (int a = 0; a < 3; ++a) {
    if (info.max_block[a] > 0 && l.block[a] > info.max_block[a]) {
      return StrCat("block.", kAxis[a], "=", l.block[a], " exceeds the device's maximum block ",
                    kAxis[a], " dimension ", info.max_block[a]);
    }
    if (info.max_grid[a] > 0 && l.grid[a] > info.max_grid[a]) {
      return StrCat("grid.", kAxis[a], "=", l.grid[a], " exceeds the device's maximum grid ",
                    kAxis[a], " dimension ", info.max_grid[a]);
    }
  }
  const bool clustered = l.cluster != std::array<uint32_t, 3>{1, 1, 1};
  if ((clustered || !l.tensor_maps.empty()) && info.kind != TargetKind::kCuda) {
    return StrCat("launch has ", clustered ? "a thread-block cluster" : "tensor maps",
                  ", which are CUDA-only");
  }
  // Clusters and tensor maps came with sm_90 (Hopper).
  if ((clustered || !l.tensor_maps.empty()) && ComputeCapability(info.arch) < 90) {
    return StrCat("launch has ", clustered ? "a thread-block cluster" : "tensor maps",
                  ", which need sm_90 or newer; this device is ", info.arch);
  }
  if (clustered) {
    char error[512] = "";
    if (!tune_cluster_check(l.grid.data(), l.cluster.data(), error, sizeof error)) {
      return error;
    }
  }
  const int64_t shared = int64_t{attrs.shared_bytes} + l.dynamic_shared_bytes;
  if (info.max_shared_bytes_per_block > 0 && shared > info.max_shared_bytes_per_block) {
    return StrCat("shared memory of ", shared, " bytes per block (", attrs.shared_bytes,
                  " static + ", l.dynamic_shared_bytes,
                  " dynamic) exceeds the device's maximum of ", info.max_shared_bytes_per_block);
  }
  return "";
}

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

class ModuleHandle {
 public:
  ModuleHandle(GpuDevice* device, void* module) : device_(device), module_(module) {}
  ~ModuleHandle() { device_->UnloadModule(module_); }
  ModuleHandle(const ModuleHandle&) = delete;
  ModuleHandle& operator=(const ModuleHandle&) = delete;

 private:
  GpuDevice* device_;
  void* module_;
};

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

 private:
  void* handle_;
};

// Calls `fn` as int32_t fn(void*, ..., void*, void* stream) with the N device pointers.
template <size_t... I>
int32_t CallWithStream(void* fn, const std::vector<DevicePtr>& args, void* stream,
                       std::index_sequence<I...>) {
  using Fn = int32_t (*)(std::conditional_t<true, void*, decltype(I)>..., void*);
  return reinterpret_cast<Fn>(fn)(reinterpret_cast<void*>(args[I])..., stream);
}

// Calls a host entry with the GPU host ABI: the device pointers, then the stream.
int32_t CallHostEntry(void* fn, const std::vector<DevicePtr>& args, void* stream) {
  switch (args.size()) {
    case 2:
      return CallWithStream(fn, args, stream, std::make_index_sequence<2>());
    case 3:
      return CallWithStream(fn, args, stream, std::make_index_sequence<3>());
    case 4:
      return CallWithStream(fn, args, stream, std::make_index_sequence<4>());
    case 5:
      return CallWithStream(fn, args, stream, std::make_index_sequence<5>());
    case 6:
      return CallWithStream(fn, args, stream, std::make_index_sequence<6>());
    case 7:
      return CallWithStream(fn, args, stream, std::make_index_sequence<7>());
    case 8:
      return CallWithStream(fn, args, stream, std::make_index_sequence<8>());
    default:
      return -1;
  }
}

}  // namespace

uint64_t ArgumentSeed(uint64_t seed, size_t i) { return seed * 1000003u + i; }

namespace {

// The device kernels' kind of an element type (reference_ptx.h); nullopt for one they lack.
std::optional<TypedKind> KindOf(ElementType type) {
  switch (type) {
    case ElementType::kF32:
      return TypedKind::kF32;
    case ElementType::kF16:
      return TypedKind::kF16;
    case ElementType::kBf16:
      return TypedKind::kBf16;
    case ElementType::kFp8E4m3:
      return TypedKind::kFp8E4m3;
    case ElementType::kFp8E5m2:
      return TypedKind::kFp8E5m2;
    case ElementType::kI8:
      return TypedKind::kS8;
    case ElementType::kU8:
      return TypedKind::kU8;
    case ElementType::kI32:
      return TypedKind::kI32;
    default:
      return std::nullopt;
  }
}

// Whether a conv2d is checked through tune_im2col_typed and the typed GEMM kernels.
bool NhwcConv(const Workload& workload) {
  return workload.op() == OpKind::kConv2d && workload.conv2d().nhwc;
}

// Whether the CUDA reference kernels check `workload`: f32 ones, and typed GEMMs and NHWC
// convolutions of CudaReferenceDtypes().
bool CudaReferenceChecks(const Workload& workload) {
  if (workload.dtype() == Dtype::kF32 && workload.out_type() == ElementType::kF32) {
    return true;
  }
  return (workload.op() == OpKind::kGemm || NhwcConv(workload)) &&
         CudaReferenceDtypes().Has(workload.dtype()) && KindOf(workload.out_type()).has_value();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ReferenceKernels>> ReferenceKernels::Load(GpuDevice* device) {
  auto refs = std::unique_ptr<ReferenceKernels>(new ReferenceKernels(device));
  ASSIGN_OR_RETURN(refs->module_, device->LoadModule(ReferencePtx()));
  ASSIGN_OR_RETURN(refs->fill_, device->GetFunction(refs->module_, kFillKernel));
  ASSIGN_OR_RETURN(refs->gemm_, device->GetFunction(refs->module_, kGemmKernel));
  ASSIGN_OR_RETURN(refs->conv2d_, device->GetFunction(refs->module_, kConv2dKernel));
  ASSIGN_OR_RETURN(refs->fill_typed_, device->GetFunction(refs->module_, kFillTypedKernel));
  ASSIGN_OR_RETURN(refs->gemm_typed_, device->GetFunction(refs->module_, kGemmTypedKernel));
  ASSIGN_OR_RETURN(refs->gemm_int_, device->GetFunction(refs->module_, kGemmIntKernel));
  ASSIGN_OR_RETURN(refs->im2col_, device->GetFunction(refs->module_, kIm2colTypedKernel));
  return refs;
}

ReferenceKernels::~ReferenceKernels() { device_->UnloadModule(module_); }

absl::Status ReferenceKernels::Fill(DevicePtr data, int64_t n, uint64_t seed) {
  uint64_t count = static_cast<uint64_t>(n);
  void* params[] = {&data, &count, &seed};
  return device_->Launch(fill_, OneDimensional(n), params);
}

absl::Status ReferenceKernels::FillTyped(const Workload& workload, const TensorArg& arg,
                                         DevicePtr data, uint64_t seed) {
  std::optional<TypedKind> kind = KindOf(arg.type);
  if (arg.role == ArgRole::kScale) {
    kind = TypedKind::kScale;
  } else if (kind == TypedKind::kF32 && workload.dtype() == Dtype::kTf32 &&
             arg.role != ArgRole::kBias) {
    kind = TypedKind::kTf32;
  }
  if (!kind) {
    return absl::InvalidArgumentError(StrCat("no device inputs of ", ElementTypeName(arg.type)));
  }
  uint64_t count = static_cast<uint64_t>(arg.NumElements());
  uint32_t code = static_cast<uint32_t>(*kind);
  void* params[] = {&data, &count, &seed, &code};
  return device_->Launch(fill_typed_, OneDimensional(arg.NumElements()), params);
}

int64_t ReferenceKernels::ScratchBytes(const Workload& workload) {
  if (!NhwcConv(workload)) {
    return 0;
  }
  const Conv2dShape& s = workload.conv2d();
  return s.n * s.p() * s.q() * s.r * s.s * s.c * ElementBytes(workload.input_type());
}

absl::Status ReferenceKernels::Run(const Workload& workload, const std::vector<DevicePtr>& inputs,
                                   DevicePtr output, DevicePtr scratch) {
  auto u32 = [](int64_t v) { return static_cast<uint32_t>(v); };
  if (workload.dtype() != Dtype::kF32 || workload.out_type() != ElementType::kF32 ||
      NhwcConv(workload)) {
    if (workload.op() != OpKind::kGemm && !NhwcConv(workload)) {
      return absl::InvalidArgumentError(
          StrCat("no device reference of typed conv2d outside layout=NHWC: ", workload.ToString()));
    }
    const std::vector<TensorArg> args = workload.Arguments();
    const bool has_bias = EpilogueHasBias(workload.epilogue());
    // Inputs: A, B, [bias], [scale_A, scale_B] (the output is not among them).
    DevicePtr a = inputs.at(0), b = inputs.at(1);
    DevicePtr bias = has_bias ? inputs.at(2) : 0;
    DevicePtr scale_a = 0, scale_b = 0;
    if (workload.has_scales()) {
      scale_a = inputs.at(has_bias ? 3 : 2);
      scale_b = inputs.at(has_bias ? 4 : 3);
    }
    std::optional<TypedKind> ka = KindOf(args[0].type), kb = KindOf(args[1].type),
                             kbias = KindOf(workload.out_type());
    if (!ka || !kb || !kbias) {
      return absl::InvalidArgumentError(StrCat("no device reference of ", workload.ToString()));
    }
    // A convolution is the GEMM of its input's im2col and its KRSC weights ([K][R*S*C]: NT).
    GemmShape g;
    if (NhwcConv(workload)) {
      const Conv2dShape& s = workload.conv2d();
      uint32_t v[] = {u32(s.n),   u32(s.c),        u32(s.h),
                      u32(s.w),   u32(s.r),        u32(s.s),
                      u32(s.p()), u32(s.q()),      u32(s.stride),
                      u32(s.pad), u32(s.dilation), u32(ElementBytes(workload.input_type()))};
      void* params[] = {&a,    &scratch, &v[0], &v[1], &v[2], &v[3],  &v[4],
                        &v[5], &v[6],    &v[7], &v[8], &v[9], &v[10], &v[11]};
      RETURN_IF_ERROR(
          device_->Launch(im2col_, OneDimensional(s.n * s.p() * s.q() * s.r * s.s * s.c), params));
      a = scratch;
      g = {.m = s.n * s.p() * s.q(), .n = s.k, .k = s.r * s.s * s.c, .layout = GemmLayout::kNT};
    } else {
      g = workload.gemm();
    }
    uint32_t flags = (has_bias ? kRefFlagBias : 0) |
                     (EpilogueHasRelu(workload.epilogue()) ? kRefFlagRelu : 0) |
                     (g.layout == GemmLayout::kNT ? kRefFlagNt : 0) |
                     (workload.has_scales() ? kRefFlagScales : 0);
    uint32_t kinds = static_cast<uint32_t>(*ka) | (static_cast<uint32_t>(*kb) << 4) |
                     (static_cast<uint32_t>(*kbias) << 8);
    uint32_t m = u32(g.m), n = u32(g.n), k = u32(g.k);
    void* params[] = {&a, &b, &bias, &output, &scale_a, &scale_b, &m, &n, &k, &flags, &kinds};
    return device_->Launch(IsIntegerDtype(workload.dtype()) ? gemm_int_ : gemm_typed_,
                           OneDimensional(g.m * g.n), params);
  }
  const bool has_bias = EpilogueHasBias(workload.epilogue());
  uint32_t flags =
      (has_bias ? kRefFlagBias : 0) | (EpilogueHasRelu(workload.epilogue()) ? kRefFlagRelu : 0);
  DevicePtr a = inputs.at(0);
  DevicePtr b = inputs.at(1);
  DevicePtr bias = has_bias ? inputs.at(2) : 0;
  if (workload.op() == OpKind::kGemm) {
    const GemmShape& g = workload.gemm();
    uint32_t m = u32(g.m), n = u32(g.n), k = u32(g.k);
    void* params[] = {&a, &b, &bias, &output, &m, &n, &k, &flags};
    return device_->Launch(gemm_, OneDimensional(g.m * g.n), params);
  }
  const Conv2dShape& s = workload.conv2d();
  uint32_t v[] = {u32(s.n), u32(s.c),   u32(s.h),   u32(s.w),      u32(s.k),   u32(s.r),
                  u32(s.s), u32(s.p()), u32(s.q()), u32(s.stride), u32(s.pad), u32(s.dilation)};
  void* params[] = {&a,    &b,    &bias, &output, &v[0], &v[1],  &v[2],  &v[3], &v[4],
                    &v[5], &v[6], &v[7], &v[8],   &v[9], &v[10], &v[11], &flags};
  return device_->Launch(conv2d_, OneDimensional(s.n * s.k * s.p() * s.q()), params);
}

Measurement GpuMeasurer::Measure(const v1::MeasureChildTrial& trial,
                                 const std::function<void()>& on_started) {
  GpuDevice& dev = *device_;
  const GpuDeviceInfo& info = dev.info();
  // A request this worker cannot read (another tune version) says nothing of the config.
  absl::StatusOr<Workload> workload = Workload::Parse(trial.workload());
  if (!workload.ok()) {
    return Failure(ErrorKind::kWorkerError,
                   StrCat("workload: ", std::string(workload.status().message())));
  }
  if (workload->prepared_weights()) {
    return Failure(ErrorKind::kUnsupported,
                   StrCat("workload ", trial.workload(),
                          ": weights=prepared is measured on CPU workers only"));
  }
  if (info.kind == TargetKind::kCuda && !CudaReferenceChecks(*workload)) {
    // A worker that cannot check an answer does not time the kernel.
    return Failure(
        ErrorKind::kUnsupported,
        StrCat("workload ", trial.workload(), ": this worker's device references ",
               "check dtype=", CudaReferenceDtypes().Names(),
               " GEMMs and layout=NHWC convolutions (other conv2d layouts in f32 only)"));
  }
  absl::StatusOr<TimingOptions> timing = TimingOptionsFromProto(trial.timing());
  if (!timing.ok()) {
    return Failure(ErrorKind::kWorkerError, std::string(timing.status().message()));
  }
  const std::vector<TensorArg> args = workload->Arguments();
  if (args.size() < rpc::kMinKernelArgs || args.size() > rpc::kMaxKernelArgs) {
    return Failure(ErrorKind::kUnsupported,
                   StrCat("workload ", trial.workload(), " has ", args.size(),
                          " kernel arguments; this worker calls kernels with ", rpc::kMinKernelArgs,
                          " to ", rpc::kMaxKernelArgs));
  }
  const v1::ArtifactFormat format = trial.format() == v1::ARTIFACT_FORMAT_UNSPECIFIED
                                        ? v1::ARTIFACT_FORMAT_SHARED_OBJECT
                                        : trial.format();
  const v1::ArtifactFormat native =
      info.kind == TargetKind::kCuda ? v1::ARTIFACT_FORMAT_PTX : v1::ARTIFACT_FORMAT_HSACO;
  if (format != native && format != v1::ARTIFACT_FORMAT_SHARED_OBJECT) {
    return Failure(ErrorKind::kWorkerError,
                   StrCat("artifact.format ", v1::ArtifactFormat_Name(format), " cannot run on ",
                          DeviceName(info.kind, info.index), "; accepted: ",
                          v1::ArtifactFormat_Name(native), ", ARTIFACT_FORMAT_SHARED_OBJECT"));
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
      return Failure(kind, StrCat("cannot allocate ", a.name, " (", a.NumBytes(), " bytes; ",
                                  needed_bytes, " in all, the device has ", info.total_memory_bytes,
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
    return Failure(dev.broken() ? ErrorKind::kRuntimeCrash : ErrorKind::kWorkerError,
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
  std::function<absl::Status()> call;
  std::string library_info;
  void* module = nullptr;
  std::unique_ptr<ModuleHandle> module_handle;
  std::unique_ptr<LibraryHandle> library;
  GpuLaunch launch = LaunchFromProto(trial.launch());
  std::vector<void*> params;
  std::vector<tune_cu_tensor_map> tensor_maps;  // 128-byte aligned, as the driver wants them
  if (format == v1::ARTIFACT_FORMAT_SHARED_OBJECT) {
    dlerror();
    void* handle = dlopen(trial.artifact_path().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* e = dlerror();
      const std::string error = e != nullptr ? e : "unknown error";
      return Failure(rpc::DlopenFailureKind(error), StrCat("cannot load artifact: ", error));
    }
    library = std::make_unique<LibraryHandle>(handle);
    void* entry = dlsym(handle, trial.entry_symbol().c_str());
    if (entry == nullptr) {
      return Failure(ErrorKind::kLoadError,
                     StrCat("entry symbol '", trial.entry_symbol(), "' not found"));
    }
    call = [entry, &ptrs, &dev]() -> absl::Status {
      if (int32_t rc = CallHostEntry(entry, ptrs, dev.stream()); rc != 0) {
        // The shims' codes (runtime/tune_gpu_runtime.h): -2 no implementation for this shape
        // and these knobs, -6 the library rejects the requested algorithm here. Both say the
        // candidate does not apply, not that it failed.
        if (rc == -2 || rc == -6) {
          return absl::UnimplementedError(StrCat("entry returned ", rc));
        }
        // -1: a vendor library could not be opened; -5: cuBLASLt is missing.
        if (rc == -1 || rc == -5) {
          return absl::FailedPreconditionError(
              StrCat("entry returned ", rc, ": a vendor library could not be loaded"));
        }
        return absl::AbortedError(StrCat("entry returned ", rc));
      }
      return absl::OkStatus();
    };
  } else {
    absl::StatusOr<std::string> image = ReadFile(trial.artifact_path());
    if (!image.ok()) {  // the worker's cached copy
      return Failure(ErrorKind::kWorkerError, std::string(image.status().message()));
    }
    if (image->empty()) {
      return Failure(ErrorKind::kLoadError, "artifact is empty");
    }
    absl::StatusOr<void*> loaded = dev.LoadModule(*image);
    if (!loaded.ok()) {
      return Failure(dev.broken()
                         ? ErrorKind::kRuntimeCrash
                         : rpc::ModuleLoadFailureKind(std::string(loaded.status().message())),
                     std::string(loaded.status().message()));
    }
    module = *loaded;
    module_handle = std::make_unique<ModuleHandle>(&dev, module);
    absl::StatusOr<void*> fn = dev.GetFunction(module, trial.entry_symbol());
    if (!fn.ok()) {
      return Failure(ErrorKind::kLoadError, std::string(fn.status().message()));
    }
    KernelAttributes attrs = dev.Attributes(*fn);
    library_info = StrCat("kernel: regs=", attrs.registers, " local=", attrs.local_bytes,
                          " shared=", attrs.shared_bytes, " ", ToString(launch));
    if (std::string over = CheckLaunch(launch, attrs, info); !over.empty()) {
      Measurement m = Failure(ErrorKind::kUnsupported, over);
      m.library_info = library_info;
      return m;
    }
    for (uint32_t arg : launch.zeroed_args) {
      if (arg >= ptrs.size()) {
        Measurement m = Failure(
            ErrorKind::kLoadError,
            StrCat("launch.zeroed_args names argument ", arg, " but the kernel of ",
                   workload->ToString(), " takes ", ptrs.size(), " (0..", ptrs.size() - 1, ")"));
        m.library_info = library_info;
        return m;
      }
    }
    // The tensor maps, encoded once: the buffers stay where they are for the whole
    // measurement, and each map is passed by value after the arguments.
    tensor_maps.resize(launch.tensor_maps.size());
    for (size_t m = 0; m < launch.tensor_maps.size(); ++m) {
      const GpuTensorMap& map = launch.tensor_maps[m];
      if (map.arg >= ptrs.size()) {
        Measurement failed = Failure(
            ErrorKind::kLoadError,
            StrCat("launch.tensor_maps[", m, "] names argument ", map.arg, " but the kernel of ",
                   workload->ToString(), " takes ", ptrs.size(), " (0..", ptrs.size() - 1, ")"));
        failed.library_info = library_info;
        return failed;
      }
      if (absl::Status s = dev.EncodeTensorMap(map, static_cast<uint32_t>(ptrs.size()),
                                               ptrs[map.arg], &tensor_maps[m]);
          !s.ok()) {
        Measurement failed =
            Failure(absl::IsUnimplemented(s) ? ErrorKind::kUnsupported : ErrorKind::kLoadError,
                    StrCat("launch.tensor_maps[", m, "]: ", s.message()));
        failed.library_info = library_info;
        return failed;
      }
    }
    for (DevicePtr& p : ptrs) {
      params.push_back(&p);
    }
    for (tune_cu_tensor_map& map : tensor_maps) {
      params.push_back(&map);
    }
    void* function = *fn;
    // A kernel that accumulates into an argument needs it zeroed before every launch; the fill
    // is part of the measured time, as it is part of every call of the kernel.
    call = [function, &launch, &params, &ptrs, &args, &dev]() {
      for (uint32_t arg : launch.zeroed_args) {
        if (absl::Status s = dev.Memset8(ptrs[arg], 0, static_cast<size_t>(args[arg].NumBytes()));
            !s.ok()) {
          return s;
        }
      }
      return dev.Launch(function, launch, params.data());
    };
  }
  auto crash = [&](const absl::Status& s, std::string_view when) {
    ErrorKind kind = ErrorKind::kRuntimeCrash;
    if (!dev.broken() && absl::IsUnimplemented(s)) {
      kind = ErrorKind::kUnsupported;
    } else if (!dev.broken() && absl::IsFailedPrecondition(s)) {
      kind = ErrorKind::kWorkerError;  // a vendor library this worker cannot open
    }
    Measurement m = Failure(kind, StrCat(s.message(), when));
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
    Measurement m = Failure(ErrorKind::kWrongAnswer, compared.message);
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
