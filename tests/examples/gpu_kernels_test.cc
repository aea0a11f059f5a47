// GPU kernel libraries from tune_add_kernel_library ('cuda -arch=sm_90', default configs) called
// the way a user program calls them, on a real CUDA device: device buffers from the driver API
// (libcuda.so.1 opened with dlopen, as the program would), a stream, the answers checked against
// common/reference.h. Also: the NULL (legacy default) stream, a thread with no current context,
// and two threads making the first call of a library at once (both succeed; the module is
// loaded once). Exits 77 (skipped) without libcuda.so.1 or a CUDA device.
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "common/reference.h"
#include "common/strings.h"
#include "common/workload.h"
#include "gpu_concurrent_kernels.h"
#include "gpu_range_kernels.h"
#include "gpu_test_kernels.h"
#include "gpu_vendor_kernels.h"
#include "runtime/tune_gpurt.h"

namespace {

constexpr int kSkip = 77;

// The CUDA driver API subset the program needs (cuda.h is not used: none at build time).
using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUstream = void*;
using CUdeviceptr = uint64_t;

struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuStreamCreate)(CUstream*, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuGetErrorName)(CUresult, const char**);
};

Driver cu;
int failures = 0;

void Fail(const std::string& what) {
  std::fprintf(stderr, "FAILED: %s\n", what.c_str());
  ++failures;
}

std::string ErrorName(CUresult rc) {
  const char* name = nullptr;
  cu.cuGetErrorName(rc, &name);
  return name != nullptr ? name : std::to_string(rc);
}

// False (and a failure) when `rc` is not success.
bool Ok(CUresult rc, const std::string& what) {
  if (rc != 0) {
    Fail(what + ": " + ErrorName(rc));
    return false;
  }
  return true;
}

template <typename F>
bool Resolve(void* lib, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(lib, name));
  if (out == nullptr) {
    std::fprintf(stderr, "libcuda.so.1 lacks %s\n", name);
  }
  return out != nullptr;
}

bool LoadDriver() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::printf("SKIP: libcuda.so.1 not found (%s)\n", dlerror());
    return false;
  }
  bool ok =
      Resolve(lib, "cuInit", cu.cuInit) && Resolve(lib, "cuDeviceGetCount", cu.cuDeviceGetCount) &&
      Resolve(lib, "cuDeviceGet", cu.cuDeviceGet) &&
      Resolve(lib, "cuDevicePrimaryCtxRetain", cu.cuDevicePrimaryCtxRetain) &&
      Resolve(lib, "cuCtxSetCurrent", cu.cuCtxSetCurrent) &&
      Resolve(lib, "cuMemAlloc_v2", cu.cuMemAlloc) && Resolve(lib, "cuMemFree_v2", cu.cuMemFree) &&
      Resolve(lib, "cuMemcpyHtoD_v2", cu.cuMemcpyHtoD) &&
      Resolve(lib, "cuMemcpyDtoH_v2", cu.cuMemcpyDtoH) &&
      Resolve(lib, "cuStreamCreate", cu.cuStreamCreate) &&
      Resolve(lib, "cuStreamSynchronize", cu.cuStreamSynchronize) &&
      Resolve(lib, "cuStreamDestroy_v2", cu.cuStreamDestroy) &&
      Resolve(lib, "cuCtxSynchronize", cu.cuCtxSynchronize) &&
      Resolve(lib, "cuGetErrorName", cu.cuGetErrorName);
  if (!ok) {
    std::printf("SKIP: libcuda.so.1 is incomplete\n");
  }
  return ok;
}

// A kernel of the GPU host ABI, called with device pointers (ABI order) and a stream.
using Call = std::function<int(const std::vector<float*>& args, void* stream)>;

// One workload's tensors on the host and the device.
struct DeviceTensors {
  tune::Workload workload;
  tune::TensorSet host;
  std::vector<CUdeviceptr> device;
  std::vector<size_t> bytes;

  DeviceTensors(const tune::Workload& w, uint64_t seed) : workload(w), host(w, seed) {}
  DeviceTensors(const DeviceTensors&) = delete;

  bool Upload() {
    std::vector<tune::TensorArg> args = workload.Arguments();
    std::vector<void*> pointers = host.AbiPointers();
    for (size_t i = 0; i < args.size(); ++i) {
      int64_t n = 1;
      for (int64_t d : args[i].shape) {
        n *= d;
      }
      bytes.push_back(static_cast<size_t>(n) * sizeof(float));
      CUdeviceptr p = 0;
      if (!Ok(cu.cuMemAlloc(&p, bytes.back()), "cuMemAlloc")) {
        return false;
      }
      device.push_back(p);
      if (args[i].is_output) {
        // NaN everywhere, so an output element the kernel never writes is a mismatch.
        std::vector<float> poison(static_cast<size_t>(n), std::nanf(""));
        if (!Ok(cu.cuMemcpyHtoD(p, poison.data(), bytes.back()), "cuMemcpyHtoD (output)")) {
          return false;
        }
      } else if (!Ok(cu.cuMemcpyHtoD(p, pointers[i], bytes.back()), "cuMemcpyHtoD")) {
        return false;
      }
    }
    return true;
  }

  std::vector<float*> Pointers() const {
    std::vector<float*> out;
    for (CUdeviceptr p : device) {
      out.push_back(reinterpret_cast<float*>(static_cast<uintptr_t>(p)));
    }
    return out;
  }

  // Downloads the output and compares it with the reference; reports a failure named `what`.
  void Check(const std::string& what) {
    if (!Ok(cu.cuMemcpyDtoH(host.output(), device.back(), bytes.back()), what + ": cuMemcpyDtoH")) {
      return;
    }
    std::vector<float> want(static_cast<size_t>(host.output_size()));
    tune::RunReference(workload, host.InputPointers(), want.data());
    tune::CompareResult result =
        tune::CompareOutputs(workload, host.output(), want.data(), host.output_size());
    if (!result.ok) {
      Fail(what + " (" + workload.ToString() + "): " + result.message);
    } else {
      std::printf("ok: %s (%s), max abs error %g\n", what.c_str(), workload.ToString().c_str(),
                  result.max_abs_error);
    }
  }

  ~DeviceTensors() {
    for (CUdeviceptr p : device) {
      cu.cuMemFree(p);
    }
  }
};

// The shims' code for a vendor library that is not installed (runtime/tune_gpu_runtime.h).
constexpr int kVendorLibraryNotFound = -1;

// Runs `call` for `workload_text` on `stream`, waits, and checks the answer. With `vendor`, a
// vendor library missing on this machine skips the check instead of failing it.
void RunOne(const std::string& what, const std::string& workload_text, const Call& call,
            CUstream stream, bool vendor = false, int calls = 1) {
  absl::StatusOr<tune::Workload> workload = tune::Workload::Parse(workload_text);
  if (!workload.ok()) {
    Fail(what + ": " + std::string(workload.status().message()));
    return;
  }
  DeviceTensors tensors(*workload, 7);
  if (!tensors.Upload()) {
    return;
  }
  int rc = 0;
  for (int i = 0; i < calls && rc == 0; ++i) {
    rc = call(tensors.Pointers(), stream);
  }
  if (vendor && rc == kVendorLibraryNotFound) {
    std::printf("skipped: %s: the vendor library is not installed\n", what.c_str());
    return;
  }
  if (rc != 0) {
    Fail(what + ": returned " + std::to_string(rc) + " (" + tune_gpurt_last_error() + ")");
    return;
  }
  if (!Ok(cu.cuStreamSynchronize(stream), what + ": cuStreamSynchronize")) {
    return;
  }
  tensors.Check(what);
}

// Two threads make the first call of a library at the same moment: one on a stream, one on the
// NULL stream, neither with a current context (the runtime takes the stream's context or
// device 0's primary context). Both must succeed and the module must be loaded once.
void ConcurrentFirstCalls(CUstream stream) {
  absl::StatusOr<tune::Workload> workload = tune::Workload::Parse("gemm:M=96,N=80,K=48");
  DeviceTensors a(*workload, 11);
  DeviceTensors b(*workload, 12);
  if (!a.Upload() || !b.Upload()) {
    return;
  }
  const uint64_t loads_before = tune_gpurt_module_loads();
  std::latch start(2);
  int rc_a = -100;
  int rc_b = -100;
  std::thread ta([&] {
    std::vector<float*> p = a.Pointers();
    start.arrive_and_wait();
    rc_a = concurrent_gemm(p[0], p[1], p[2], stream);
  });
  std::thread tb([&] {
    std::vector<float*> p = b.Pointers();
    start.arrive_and_wait();
    rc_b = concurrent_gemm(p[0], p[1], p[2], nullptr);
    if (rc_b == 0) {
      rc_b = cu.cuCtxSynchronize();  // this thread's context is current now
    }
  });
  ta.join();
  tb.join();
  if (rc_a != 0 || rc_b != 0) {
    Fail("concurrent first calls returned " + std::to_string(rc_a) + " and " +
         std::to_string(rc_b));
    return;
  }
  const uint64_t loads = tune_gpurt_module_loads() - loads_before;
  if (loads != 1) {
    Fail("concurrent first calls loaded the module " + std::to_string(loads) + " times");
  }
  if (!Ok(cu.cuStreamSynchronize(stream), "concurrent: cuStreamSynchronize")) {
    return;
  }
  a.Check("concurrent first call on a stream");
  b.Check("concurrent first call on the NULL stream");
}

// The runtime's failure codes on a real device: device code the driver rejects, a kernel the
// module lacks, a launch the device refuses. Each names its cause.
void RuntimeErrors() {
  static const char kNoop[] =
      ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry noop()\n{\nret;\n}\n";
  static const char kGarbage[] = "this is not PTX";
  tune_gpurt_module noop{TUNE_GPURT_ABI_VERSION, TUNE_GPURT_API_CUDA, kNoop, sizeof kNoop, nullptr};
  tune_gpurt_module garbage{TUNE_GPURT_ABI_VERSION, TUNE_GPURT_API_CUDA, kGarbage, sizeof kGarbage,
                            nullptr};
  const uint32_t one[3] = {1, 1, 1};
  const uint32_t too_many_threads[3] = {4096, 1, 1};
  struct Case {
    const char* what;
    tune_gpurt_module* module;
    const char* kernel;
    const uint32_t* block;
    int32_t want;
    const char* says;
  };
  for (const Case& c : {
           Case{"a rejected module", &garbage, "noop", one, TUNE_GPURT_ERROR_MODULE_LOAD,
                "cuModuleLoadDataEx"},
           Case{"a missing kernel", &noop, "missing", one, TUNE_GPURT_ERROR_KERNEL_NOT_FOUND,
                "no kernel 'missing'"},
           Case{"a refused launch", &noop, "noop", too_many_threads, TUNE_GPURT_ERROR_LAUNCH,
                "block (4096,1,1)"},
           Case{"a good launch", &noop, "noop", one, TUNE_GPURT_OK, ""},
       }) {
    int32_t rc = tune_gpurt_launch(c.module, c.kernel, one, c.block, 0, nullptr, nullptr, 0);
    std::string text = tune_gpurt_last_error();
    if (rc != c.want || text.find(c.says) == std::string::npos) {
      Fail(std::string(c.what) + ": returned " + std::to_string(rc) + " (want " +
           std::to_string(c.want) + "), message '" + text + "' (want it to say '" + c.says + "')");
    } else {
      std::printf("ok: %s: %d %s\n", c.what, rc, text.c_str());
    }
  }
  Ok(cu.cuCtxSynchronize(), "runtime errors: cuCtxSynchronize");
}

}  // namespace

int main() {
  if (!LoadDriver()) {
    return kSkip;
  }
  int devices = 0;
  if (cu.cuInit(0) != 0 || cu.cuDeviceGetCount(&devices) != 0 || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return kSkip;
  }

  // The concurrency check first, while the libraries have loaded nothing; its threads start with
  // no current context.
  CUdevice device = 0;
  CUcontext context = nullptr;
  if (!Ok(cu.cuDeviceGet(&device, 0), "cuDeviceGet") ||
      !Ok(cu.cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain") ||
      !Ok(cu.cuCtxSetCurrent(context), "cuCtxSetCurrent")) {
    return 1;
  }
  CUstream stream = nullptr;
  if (!Ok(cu.cuStreamCreate(&stream, 0), "cuStreamCreate")) {
    return 1;
  }
  ConcurrentFirstCalls(stream);

  auto call3 = [](int (*f)(const float*, const float*, float*, void*)) -> Call {
    return [f](const std::vector<float*>& p, void* s) { return f(p[0], p[1], p[2], s); };
  };
  auto call4 = [](int (*f)(const float*, const float*, const float*, float*, void*)) -> Call {
    return [f](const std::vector<float*>& p, void* s) { return f(p[0], p[1], p[2], p[3], s); };
  };
  RunOne("gemm on a stream", "gemm:M=128,N=96,K=64", call3(gpu_gemm), stream);
  RunOne("gemm, odd shape, bias, on a stream", "gemm:M=100,N=70,K=33,epilogue=bias",
         call4(gpu_gemm_bias), stream);
  RunOne("gemm on the NULL stream", "gemm:M=128,N=96,K=64", call3(gpu_gemm), nullptr);
  // Its blocks add into a zeroed C: a second call must give the same answer, not twice it.
  RunOne("gemm with the reduction split across blocks, bias, called twice",
         "gemm:M=16,N=256,K=2048,epilogue=bias", call4(gpu_gemm_splitk), stream,
         /*vendor=*/false, /*calls=*/2);
  RunOne("conv2d on a stream", "conv2d:N=1,C=16,H=14,W=14,K=32,R=3,S=3,stride=1,pad=1",
         call3(gpu_conv), stream);
  RunOne("conv2d, stride 2, bias_relu, on a stream",
         "conv2d:N=2,C=3,H=10,W=12,K=8,R=3,S=3,stride=2,pad=1,epilogue=bias_relu",
         call4(gpu_conv_bias_relu), stream);
  // One library, three kinds of kernel: cuBLAS and cuDNN through tune's shims (host code), and
  // a generated kernel launched through libtune_gpurt.
  RunOne("cuBLAS gemm, bias_relu, in a GPU library", "gemm:M=128,N=96,K=64,epilogue=bias_relu",
         call4(vendor_gemm), stream, /*vendor=*/true);
  RunOne("cuDNN conv2d, bias, in a GPU library",
         "conv2d:N=1,C=16,H=14,W=14,K=32,R=3,S=3,stride=1,pad=1,epilogue=bias", call4(vendor_conv),
         stream, /*vendor=*/true);
  RunOne("generated gemm beside them", "gemm:M=64,N=48,K=40", call3(mixed_generated_gemm), stream);
  // Shape ranges: sizes with a kernel of their own, in pieces (M, the batch) and padded on the
  // device with stream-ordered copies (N), all through libtune_range.so.
  for (int64_t m : {1, 7, 8, 9, 11, 13, 29, 37, 40}) {
    RunOne(
        "range entry over M", tune::StrCat("gemm:M=", m, ",N=48,K=32,epilogue=bias"),
        [m](const std::vector<float*>& p, void* s) {
          return gpu_range_m(m, p[0], p[1], p[2], p[3], s);
        },
        stream);
  }
  for (int64_t n : {2, 9, 11, 13, 17, 33, 39}) {
    RunOne(
        "range entry over N (padded copies)", tune::StrCat("gemm:M=16,N=", n, ",K=24"),
        [n](const std::vector<float*>& p, void* s) { return gpu_range_n(n, p[0], p[1], p[2], s); },
        stream);
  }
  for (int64_t b : {1, 3, 5}) {
    RunOne(
        "range entry over a batch",
        tune::StrCat("conv2d:N=", b, ",C=8,H=6,W=6,K=8,R=3,S=3,stride=1,pad=1"),
        [b](const std::vector<float*>& p, void* s) {
          return gpu_range_batch(b, p[0], p[1], p[2], s);
        },
        stream);
  }
  cu.cuStreamDestroy(stream);
  RuntimeErrors();

  if (failures != 0) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  std::printf("ok: every GPU kernel matched the reference\n");
  return 0;
}
