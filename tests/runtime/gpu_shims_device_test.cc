// The GPU shims on a CUDA device (label gpu; skipped without libcuda.so.1 and a device):
// tune_cublas_sgemm and tune_cudnn_conv2d on device buffers, with every epilogue in both modes
// and cuDNN's own search as well as given algorithms, and tune_cudnn_conv2d_typed (NHWC, f16,
// bf16, i8, fp8, fused epilogues), against common/reference.h.
#include <dlfcn.h>

#include <string>
#include <type_traits>
#include <vector>

#include "common/reference.h"
#include "common/workload.h"
#include "gtest/gtest.h"
#include "runtime/tune_gpu_runtime.h"

namespace tune {
namespace {

// conv2d.cuda.cudnn's tolerance (kTransformAlgorithmTolerance): FFT (4, 5), Winograd (6, 7) and
// cuDNN's own search round differently from a direct sum.
double CudnnTolerance(int32_t algo) { return algo == TUNE_GPU_ALGO_SEARCH || algo >= 4 ? 10 : 1; }

// The CUDA driver API this test uses, opened with dlopen.
struct Driver {
  using CUresult = int;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(int*, int);
  CUresult (*cuDevicePrimaryCtxRetain)(void**, int);
  CUresult (*cuCtxSetCurrent)(void*);
  CUresult (*cuStreamCreate)(void**, unsigned);
  CUresult (*cuMemAlloc)(unsigned long long*, size_t);
  CUresult (*cuMemFree)(unsigned long long);
  CUresult (*cuMemcpyHtoD)(unsigned long long, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, unsigned long long, size_t);
  CUresult (*cuStreamSynchronize)(void*);
  void* stream = nullptr;
};

// The driver with a current context and a stream, or nullptr with `why` set.
Driver* OpenDevice(std::string* why) {
  static std::string reason;
  static Driver* driver = []() -> Driver* {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      reason = "no CUDA driver (libcuda.so.1)";
      return nullptr;
    }
    auto* d = new Driver();
    bool ok = true;
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      ok = ok && fn != nullptr;
    };
    get(d->cuInit, "cuInit");
    get(d->cuDeviceGetCount, "cuDeviceGetCount");
    get(d->cuDeviceGet, "cuDeviceGet");
    get(d->cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    get(d->cuCtxSetCurrent, "cuCtxSetCurrent");
    get(d->cuStreamCreate, "cuStreamCreate");
    get(d->cuMemAlloc, "cuMemAlloc_v2");
    get(d->cuMemFree, "cuMemFree_v2");
    get(d->cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    get(d->cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    get(d->cuStreamSynchronize, "cuStreamSynchronize");
    int count = 0, device = 0;
    void* ctx = nullptr;
    if (!ok || d->cuInit(0) != 0 || d->cuDeviceGetCount(&count) != 0 || count < 1) {
      reason = "no CUDA device";
      return nullptr;
    }
    if (d->cuDeviceGet(&device, 0) != 0 || d->cuDevicePrimaryCtxRetain(&ctx, device) != 0 ||
        d->cuCtxSetCurrent(ctx) != 0 || d->cuStreamCreate(&d->stream, 0) != 0) {
      reason = "the CUDA device's context or stream could not be made";
      return nullptr;
    }
    return d;
  }();
  *why = reason;
  return driver;
}

// The workload's inputs and output on the device, filled from seeded host tensors.
class DeviceTensors {
 public:
  DeviceTensors(Driver& cu, const Workload& w) : cu_(cu), host_(w, 7) {
    for (const TensorArg& arg : w.Arguments()) {
      sizes_.push_back(static_cast<size_t>(arg.NumElements()) * sizeof(float));
    }
    std::vector<void*> abi = host_.AbiPointers();
    for (size_t i = 0; i < sizes_.size(); ++i) {
      unsigned long long p = 0;
      EXPECT_EQ(cu.cuMemAlloc(&p, sizes_[i]), 0);
      EXPECT_EQ(cu.cuMemcpyHtoD(p, abi[i], sizes_[i]), 0);
      device_.push_back(p);
    }
  }
  ~DeviceTensors() {
    for (unsigned long long p : device_) {
      cu_.cuMemFree(p);
    }
  }
  float* Device(size_t i) { return reinterpret_cast<float*>(device_[i]); }
  float* Output() { return Device(device_.size() - 1); }
  std::vector<float> Fetch() {
    std::vector<float> out(sizes_.back() / sizeof(float));
    EXPECT_EQ(cu_.cuStreamSynchronize(cu_.stream), 0);
    EXPECT_EQ(cu_.cuMemcpyDtoH(out.data(), device_.back(), sizes_.back()), 0);
    return out;
  }
  std::vector<float> Want(const Workload& w) {
    std::vector<float> want(sizes_.back() / sizeof(float));
    RunReference(w, host_.InputPointers(), want.data());
    return want;
  }

 private:
  Driver& cu_;
  TensorSet host_;
  std::vector<size_t> sizes_;
  std::vector<unsigned long long> device_;
};

int32_t Code(Epilogue e) {
  return (EpilogueHasBias(e) ? TUNE_GPU_EPILOGUE_BIAS : 0) |
         (EpilogueHasRelu(e) ? TUNE_GPU_EPILOGUE_RELU : 0);
}

constexpr Epilogue kEpilogues[] = {Epilogue::kNone, Epilogue::kBias, Epilogue::kRelu,
                                   Epilogue::kBiasRelu};

std::string Describe(int32_t (*describe)(char*, int64_t)) {
  char line[1024] = {};
  describe(line, sizeof(line));
  return line;
}

TEST(GpuShimsOnDevice, CublasSgemmMatchesTheReferenceWithEveryEpilogueInBothModes) {
  std::string why;
  Driver* cu = OpenDevice(&why);
  if (cu == nullptr) {
    GTEST_SKIP() << why;
  }
  for (Epilogue e : kEpilogues) {
    for (int32_t mode : {TUNE_GPU_EPILOGUE_SEPARATE, TUNE_GPU_EPILOGUE_LIBRARY}) {
      Workload w = *Workload::Parse(
          std::string("gemm:M=67,N=45,K=129") +
          (e == Epilogue::kNone ? "" : std::string(",epilogue=") + std::string(EpilogueName(e))));
      SCOPED_TRACE(w.ToString() + " mode " + std::to_string(mode));
      DeviceTensors t(*cu, w);
      const bool bias = EpilogueHasBias(e);
      ASSERT_EQ(tune_cublas_sgemm(t.Device(0), t.Device(1), bias ? t.Device(2) : nullptr,
                                  t.Output(), 67, 45, 129, Code(e), mode, cu->stream),
                0)
          << tune_gpu_last_error();
      std::vector<float> got = t.Fetch(), want = t.Want(w);
      CompareResult r =
          CompareOutputs(w, got.data(), want.data(), static_cast<int64_t>(got.size()));
      EXPECT_TRUE(r.ok) << r.message;
    }
  }
  const std::string line = Describe(&tune_cublas_describe);
  EXPECT_NE(line.find("TF32 off"), std::string::npos) << line;
  EXPECT_NE(line.find("cublasLtMatmul"), std::string::npos) << line;
}

TEST(GpuShimsOnDevice, CudnnConvolutionMatchesTheReferenceWithEveryEpilogueInBothModes) {
  std::string why;
  Driver* cu = OpenDevice(&why);
  if (cu == nullptr) {
    GTEST_SKIP() << why;
  }
  for (Epilogue e : kEpilogues) {
    for (int32_t mode : {TUNE_GPU_EPILOGUE_SEPARATE, TUNE_GPU_EPILOGUE_LIBRARY}) {
      // A fused bias without ReLU needs IMPLICIT_PRECOMP_GEMM; elsewhere cuDNN's own search.
      const int32_t algo =
          e == Epilogue::kBias && mode == TUNE_GPU_EPILOGUE_LIBRARY ? 1 : TUNE_GPU_ALGO_SEARCH;
      Workload w = *Workload::Parse(
          std::string("conv2d:N=2,C=5,H=13,W=11,K=7,R=3,S=3,stride=1,pad=1") +
          (e == Epilogue::kNone ? "" : std::string(",epilogue=") + std::string(EpilogueName(e))));
      SCOPED_TRACE(w.ToString() + " mode " + std::to_string(mode));
      DeviceTensors t(*cu, w);
      const bool bias = EpilogueHasBias(e);
      ASSERT_EQ(
          tune_cudnn_conv2d(t.Device(0), t.Device(1), bias ? t.Device(2) : nullptr, t.Output(), 2,
                            5, 13, 11, 7, 3, 3, 1, 1, 1, Code(e), mode, algo, cu->stream),
          0)
          << tune_gpu_last_error();
      std::vector<float> got = t.Fetch(), want = t.Want(w);
      CompareResult r = CompareOutputs(w, got.data(), want.data(), static_cast<int64_t>(got.size()),
                                       CudnnTolerance(algo));
      EXPECT_TRUE(r.ok) << r.message;
    }
  }
  const std::string line = Describe(&tune_cudnn_describe);
  EXPECT_NE(line.find("TF32 off"), std::string::npos) << line;
}

TEST(GpuShimsOnDevice, CudnnsSearchAndGivenAlgorithmsAgreeWithTheReference) {
  std::string why;
  Driver* cu = OpenDevice(&why);
  if (cu == nullptr) {
    GTEST_SKIP() << why;
  }
  Workload w = *Workload::Parse("conv2d:N=1,C=8,H=16,W=16,K=8,R=3,S=3,stride=1,pad=1,dilation=1");
  int ran = 0;
  for (int32_t algo = TUNE_GPU_ALGO_SEARCH; algo < 8; ++algo) {
    SCOPED_TRACE("algo " + std::to_string(algo));
    DeviceTensors t(*cu, w);
    const int32_t rc = tune_cudnn_conv2d(t.Device(0), t.Device(1), nullptr, t.Output(), 1, 8, 16,
                                         16, 8, 3, 3, 1, 1, 1, 0, 0, algo, cu->stream);
    if (rc == TUNE_GPU_ALGO_UNSUPPORTED && algo != TUNE_GPU_ALGO_SEARCH) {
      continue;  // cuDNN has no such kernel for this shape here
    }
    ASSERT_EQ(rc, 0) << tune_gpu_last_error();
    ++ran;
    std::vector<float> got = t.Fetch(), want = t.Want(w);
    CompareResult r = CompareOutputs(w, got.data(), want.data(), static_cast<int64_t>(got.size()),
                                     CudnnTolerance(algo));
    EXPECT_TRUE(r.ok) << r.message;
    if (algo == TUNE_GPU_ALGO_SEARCH) {
      EXPECT_NE(
          Describe(&tune_cudnn_describe).find("found by cudnnFindConvolutionForwardAlgorithm"),
          std::string::npos);
    }
  }
  EXPECT_GE(ran, 3);  // the search and at least the implicit GEMMs
}

// The typed shim's TUNE_GPU_TYPE_* of an element type (tf32 for tf32 inputs).
int32_t ShimType(ElementType type, Dtype dtype) {
  switch (type) {
    case ElementType::kF16:
      return TUNE_GPU_TYPE_F16;
    case ElementType::kBf16:
      return TUNE_GPU_TYPE_BF16;
    case ElementType::kFp8E4m3:
      return TUNE_GPU_TYPE_FP8E4M3;
    case ElementType::kFp8E5m2:
      return TUNE_GPU_TYPE_FP8E5M2;
    case ElementType::kI8:
      return TUNE_GPU_TYPE_I8;
    case ElementType::kI32:
      return TUNE_GPU_TYPE_I32;
    default:
      return dtype == Dtype::kTf32 ? TUNE_GPU_TYPE_TF32 : TUNE_GPU_TYPE_F32;
  }
}

// Runs tune_cudnn_conv2d_typed on the workload's seeded tensors and compares its output with
// common/reference.h's, held to conv2d.cuda.cudnn_graph's tolerance (4 times the bound for fp8).
void ExpectTypedConvolutionMatchesTheReference(Driver& cu, const std::string& text,
                                               int32_t algo = 0) {
  const Workload w = *Workload::Parse(text);
  SCOPED_TRACE(w.ToString() + " algo " + std::to_string(algo));
  TensorSet host(w, 11);
  const std::vector<TensorArg> args = w.Arguments();
  std::vector<void*> abi = host.AbiPointers();
  std::vector<unsigned long long> device;
  for (size_t i = 0; i < args.size(); ++i) {
    const size_t bytes = static_cast<size_t>(args[i].NumElements() * ElementBytes(args[i].type));
    unsigned long long p = 0;
    ASSERT_EQ(cu.cuMemAlloc(&p, bytes), 0);
    ASSERT_EQ(cu.cuMemcpyHtoD(p, abi[i], bytes), 0);
    device.push_back(p);
  }
  auto at = [&](size_t i) { return reinterpret_cast<void*>(device[i]); };
  const Conv2dShape& s = w.conv2d();
  const size_t out = static_cast<size_t>(w.OutputIndex());
  const bool bias = EpilogueHasBias(w.epilogue());
  const bool scales = w.has_scales();
  const int32_t rc = tune_cudnn_conv2d_typed(
      at(0), at(1), bias ? at(2) : nullptr, at(out),
      scales ? static_cast<const float*>(at(out + 1)) : nullptr,
      scales ? static_cast<const float*>(at(out + 2)) : nullptr, s.n, s.c, s.h, s.w, s.k, s.r, s.s,
      s.stride, s.pad, s.dilation, ShimType(w.input_type(), w.dtype()),
      ShimType(w.out_type(), Dtype::kF32), Code(w.epilogue()), algo, cu.stream);
  EXPECT_EQ(rc, 0) << tune_gpu_last_error();
  if (rc == 0) {
    const size_t bytes = static_cast<size_t>(host.output_size() * ElementBytes(w.out_type()));
    std::vector<char> got(bytes);
    EXPECT_EQ(cu.cuStreamSynchronize(cu.stream), 0);
    EXPECT_EQ(cu.cuMemcpyDtoH(got.data(), device[out], bytes), 0);
    std::vector<char> want(static_cast<size_t>(host.output_size()) * 4);
    RunReference(w, host.Inputs(), want.data());
    CompareResult r = CompareOutputs(w, got.data(), want.data(), host.output_size(),
                                     IsFp8Dtype(w.dtype()) ? 4.0 : 1.0, host.scale_product());
    EXPECT_TRUE(r.ok) << r.message;
    const std::string line = Describe(&tune_cudnn_describe);
    EXPECT_NE(line.find("cudnnBackendExecute (graph API)"), std::string::npos) << line;
    EXPECT_NE(line.find("engine "), std::string::npos) << line;
  }
  for (unsigned long long p : device) {
    cu.cuMemFree(p);
  }
}

constexpr const char* kNhwc = "conv2d:N=2,C=16,H=9,W=9,K=16,R=3,S=3,stride=1,pad=1,layout=NHWC";

TEST(GpuShimsOnDevice, CudnnTypedF16AndBf16ConvolutionsMatchTheReferenceWithAFusedBiasAndRelu) {
  std::string why;
  Driver* cu = OpenDevice(&why);
  if (cu == nullptr) {
    GTEST_SKIP() << why;
  }
  for (const char* form : {",dtype=f16", ",dtype=f16,epilogue=bias_relu",
                           ",dtype=f16,out=f32,epilogue=bias", ",dtype=bf16,epilogue=bias_relu",
                           ",dtype=bf16,out=f32", ",dtype=bf16,out=f32,epilogue=relu"}) {
    ExpectTypedConvolutionMatchesTheReference(*cu, kNhwc + std::string(form));
  }
  // A strided layer with channel counts that are no multiple of 8.
  ExpectTypedConvolutionMatchesTheReference(
      *cu,
      "conv2d:N=1,C=5,H=11,W=13,K=7,R=3,S=3,stride=2,pad=1,layout=NHWC,dtype=bf16,"
      "epilogue=bias_relu");
}

TEST(GpuShimsOnDevice, CudnnTypedI8ConvolutionsGiveRawSumsOrScaledFloats) {
  std::string why;
  Driver* cu = OpenDevice(&why);
  if (cu == nullptr) {
    GTEST_SKIP() << why;
  }
  for (const char* form : {",dtype=i8", ",dtype=i8,epilogue=bias_relu", ",dtype=i8,out=f32",
                           ",dtype=i8,out=f32,epilogue=bias_relu"}) {
    ExpectTypedConvolutionMatchesTheReference(*cu, kNhwc + std::string(form));
  }
  // cuDNN has no engine for an i32 ReLU without a bias: refused, naming the graph.
  float* p = reinterpret_cast<float*>(16);
  EXPECT_EQ(tune_cudnn_conv2d_typed(p, p, nullptr, p, nullptr, nullptr, 2, 16, 9, 9, 16, 3, 3, 1, 1,
                                    1, TUNE_GPU_TYPE_I8, TUNE_GPU_TYPE_I32, TUNE_GPU_EPILOGUE_RELU,
                                    0, cu->stream),
            TUNE_GPU_UNSUPPORTED);
  EXPECT_NE(std::string(tune_gpu_last_error()).find("i8 x i8 -> i32"), std::string::npos)
      << tune_gpu_last_error();
}

TEST(GpuShimsOnDevice, CudnnTypedFp8ConvolutionsApplyTheScalesBiasAndRelu) {
  std::string why;
  Driver* cu = OpenDevice(&why);
  if (cu == nullptr) {
    GTEST_SKIP() << why;
  }
  for (const char* form :
       {",dtype=fp8e4m3", ",dtype=fp8e4m3,epilogue=bias_relu",
        ",dtype=fp8e5m2,out=f32,epilogue=bias", ",dtype=fp8e5m2,epilogue=relu"}) {
    ExpectTypedConvolutionMatchesTheReference(*cu, kNhwc + std::string(form));
  }
}

TEST(GpuShimsOnDevice, CudnnTypedAlgoWalksTheHeuristicsPlansAndStopsBeyondThem) {
  std::string why;
  Driver* cu = OpenDevice(&why);
  if (cu == nullptr) {
    GTEST_SKIP() << why;
  }
  const std::string w = kNhwc + std::string(",dtype=bf16,epilogue=bias_relu");
  for (int32_t algo = 0; algo < 4; ++algo) {
    ExpectTypedConvolutionMatchesTheReference(*cu, w, algo);
    EXPECT_NE(Describe(&tune_cudnn_describe).find("plan " + std::to_string(algo + 1) + " of"),
              std::string::npos);
  }
  // f16 into f32 with a bias: cuDNN 9.14 lists one plan (its fallback engine) for it.
  float* p = reinterpret_cast<float*>(16);
  const int32_t rc = tune_cudnn_conv2d_typed(p, p, p, p, nullptr, nullptr, 2, 16, 9, 9, 16, 3, 3, 1,
                                             1, 1, TUNE_GPU_TYPE_F16, TUNE_GPU_TYPE_F32,
                                             TUNE_GPU_EPILOGUE_BIAS, 7, cu->stream);
  EXPECT_EQ(rc, TUNE_GPU_ALGO_UNSUPPORTED) << tune_gpu_last_error();
}

}  // namespace
}  // namespace tune
