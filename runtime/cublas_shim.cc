// libtune_cublas.so: tune's shim over cuBLAS and cuBLASLt (runtime/tune_gpu_runtime.h).
//
// libcublas (and libcublasLt, for fused epilogues and typed GEMMs) are opened at the first call.
// Handles are made per (thread, device) and kept; so are the cuBLASLt descriptors, the algorithm
// chosen among its heuristic's and its workspace, per (thread, device, shape, types, layout,
// epilogue, algorithm), so that after the warm-up a call only queues work on the caller's
// stream. tune_cublas_sgemm is FP32 throughout: the cuBLAS handle's math mode is
// CUBLAS_DEFAULT_MATH (no TF32 tensor ops) and cuBLASLt computes in CUBLAS_COMPUTE_32F.
// tune_cublaslt_gemm computes in CUBLAS_COMPUTE_32F too, CUBLAS_COMPUTE_32F_FAST_TF32 for tf32
// inputs only, and reduces split-K partial sums in f32.
#include <dlfcn.h>

#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>

#include "runtime/gpu_shim_util.h"
#include "runtime/tune_gpu_runtime.h"

namespace {

using tune_gpu::CudaDriver;
using tune_gpu::CUdevice;
using tune_gpu::CUdeviceptr;
using tune_gpu::Fail;
using tune_gpu::Format;

// The cuBLAS/cuBLASLt ABI this shim uses (cublas_api.h, cublasLt.h, library_types.h).
using cublasStatus_t = int;
using cublasHandle_t = void*;
using cublasLtHandle_t = void*;
using cublasLtMatmulDesc_t = void*;
using cublasLtMatrixLayout_t = void*;
using cublasLtMatmulPreference_t = void*;
constexpr int CUBLAS_OP_N = 0;
constexpr int CUBLAS_OP_T = 1;
constexpr int CUBLAS_COMPUTE_32F_FAST_TF32 = 77;
constexpr int CUDA_R_16F = 2;
constexpr int CUDA_R_16BF = 14;
constexpr int CUDA_R_8F_E4M3 = 28;
constexpr int CUDA_R_8F_E5M2 = 29;
constexpr int CUBLASLT_MATMUL_DESC_TRANSA = 3;
constexpr int CUBLASLT_MATMUL_DESC_TRANSB = 4;
constexpr int CUBLASLT_MATMUL_DESC_A_SCALE_POINTER = 17;
constexpr int CUBLASLT_MATMUL_DESC_B_SCALE_POINTER = 18;
constexpr int CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26;
constexpr int CUBLAS_DEFAULT_MATH = 0;
constexpr int CUBLAS_TF32_TENSOR_OP_MATH = 3;
constexpr int CUBLAS_COMPUTE_32F = 68;
constexpr int CUBLAS_COMPUTE_32I = 72;
constexpr int CUDA_R_8I = 3;
constexpr int CUDA_R_32I = 10;
constexpr int CUDA_R_32F = 0;
constexpr int CUBLASLT_MATMUL_DESC_EPILOGUE = 7;
constexpr int CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8;
constexpr int CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1;
constexpr int CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK = 3;
constexpr uint32_t CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE = 2;
constexpr int CUBLASLT_ALGO_CONFIG_ID = 0;
constexpr uint32_t CUBLASLT_EPILOGUE_RELU = 2;
constexpr uint32_t CUBLASLT_EPILOGUE_BIAS = 4;
constexpr uint32_t CUBLASLT_EPILOGUE_RELU_BIAS = 6;
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};
constexpr size_t kLtWorkspaceLimit = size_t{32} << 20;

struct Cublas {
  std::string file;
  cublasStatus_t (*Create)(cublasHandle_t*);
  cublasStatus_t (*SetStream)(cublasHandle_t, void*);
  cublasStatus_t (*SetMathMode)(cublasHandle_t, int);
  cublasStatus_t (*GetMathMode)(cublasHandle_t, int*);
  cublasStatus_t (*GetVersion)(cublasHandle_t, int*);
  cublasStatus_t (*Sgemm)(cublasHandle_t, int, int, int, int, int, const float*, const float*, int,
                          const float*, int, const float*, float*, int);
  const char* (*GetStatusString)(cublasStatus_t);  // may be absent
};

struct CublasLt {
  std::string file;
  cublasStatus_t (*Create)(cublasLtHandle_t*);
  size_t (*GetVersion)();
  cublasStatus_t (*MatmulDescCreate)(cublasLtMatmulDesc_t*, int, int);
  cublasStatus_t (*MatmulDescSetAttribute)(cublasLtMatmulDesc_t, int, const void*, size_t);
  cublasStatus_t (*MatrixLayoutCreate)(cublasLtMatrixLayout_t*, int, uint64_t, uint64_t, int64_t);
  cublasStatus_t (*PreferenceCreate)(cublasLtMatmulPreference_t*);
  cublasStatus_t (*PreferenceSetAttribute)(cublasLtMatmulPreference_t, int, const void*, size_t);
  cublasStatus_t (*AlgoGetHeuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                                     cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                     cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,
                                     cublasLtMatmulHeuristicResult_t*, int*);
  cublasStatus_t (*AlgoConfigGetAttribute)(const cublasLtMatmulAlgo_t*, int, void*, size_t,
                                           size_t*);  // may be absent
  cublasStatus_t (*Matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*,
                           cublasLtMatrixLayout_t, const void*, cublasLtMatrixLayout_t, const void*,
                           const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,
                           const cublasLtMatmulAlgo_t*, void*, size_t, void*);
};

std::mutex g_mu;
std::string g_version;     // guarded by g_mu
std::string g_last_path;   // guarded by g_mu: how the last call ran
std::string g_last_error;  // guarded by g_mu
int g_math_mode = -1;      // guarded by g_mu: the handle's math mode as cuBLAS reports it

int32_t Failed(int32_t code, const std::string& message) {
  {
    std::lock_guard lock(g_mu);
    g_last_error = message;
  }
  return Fail(code, "cublas: " + message);
}

const Cublas* LoadCublas(int32_t* code) {
  static std::string error;
  static const Cublas* lib = []() -> const Cublas* {
    std::string opened;
    void* h = tune_gpu::OpenFirst({"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, &error,
                                  &opened);
    if (h == nullptr) {
      return nullptr;
    }
    auto* c = new Cublas();  // lives as long as the process
    c->file = opened;
    std::string missing;
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          tune_gpu::Symbol(h, name, &missing));
    };
    get(c->Create, "cublasCreate_v2");
    get(c->SetStream, "cublasSetStream_v2");
    get(c->SetMathMode, "cublasSetMathMode");
    get(c->GetMathMode, "cublasGetMathMode");
    get(c->GetVersion, "cublasGetVersion_v2");
    get(c->Sgemm, "cublasSgemm_v2");
    if (!missing.empty()) {
      error = opened + ": " + missing;
      return nullptr;
    }
    c->GetStatusString =
        reinterpret_cast<const char* (*)(cublasStatus_t)>(dlsym(h, "cublasGetStatusString"));
    return c;
  }();
  *code = lib != nullptr ? 0 : Failed(TUNE_GPU_NOT_FOUND, error);
  return lib;
}

const CublasLt* LoadCublasLt(int32_t* code) {
  static std::string error;
  static const CublasLt* lib = []() -> const CublasLt* {
    std::string opened;
    void* h = tune_gpu::OpenFirst({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"},
                                  &error, &opened);
    if (h == nullptr) {
      return nullptr;
    }
    auto* c = new CublasLt();  // lives as long as the process
    c->file = opened;
    std::string missing;
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          tune_gpu::Symbol(h, name, &missing));
    };
    get(c->Create, "cublasLtCreate");
    get(c->GetVersion, "cublasLtGetVersion");
    get(c->MatmulDescCreate, "cublasLtMatmulDescCreate");
    get(c->MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute");
    get(c->MatrixLayoutCreate, "cublasLtMatrixLayoutCreate");
    get(c->PreferenceCreate, "cublasLtMatmulPreferenceCreate");
    get(c->PreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute");
    get(c->AlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic");
    get(c->Matmul, "cublasLtMatmul");
    if (!missing.empty()) {
      error = opened + ": " + missing;
      return nullptr;
    }
    c->AlgoConfigGetAttribute = reinterpret_cast<decltype(c->AlgoConfigGetAttribute)>(
        dlsym(h, "cublasLtMatmulAlgoConfigGetAttribute"));
    return c;
  }();
  *code = lib != nullptr ? 0 : Failed(TUNE_GPU_LT_NOT_FOUND, error);
  return lib;
}

std::string Status(const Cublas* c, const char* what, cublasStatus_t s) {
  const char* name = c != nullptr && c->GetStatusString != nullptr ? c->GetStatusString(s) : "";
  return Format("%s failed: cuBLAS status %d %s", what, s, name != nullptr ? name : "");
}

// The calling thread's cuBLAS handle for the current device, FP32 math.
int32_t Handle(const Cublas& c, CUdevice device, cublasHandle_t* out) {
  thread_local std::map<CUdevice, cublasHandle_t> handles;
  auto it = handles.find(device);
  if (it == handles.end()) {
    cublasHandle_t h = nullptr;
    if (cublasStatus_t s = c.Create(&h); s != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status(&c, "cublasCreate", s));
    }
    if (cublasStatus_t s = c.SetMathMode(h, CUBLAS_DEFAULT_MATH); s != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status(&c, "cublasSetMathMode(DEFAULT)", s));
    }
    int mode = -1, version = 0;
    c.GetMathMode(h, &mode);
    c.GetVersion(h, &version);
    {
      std::lock_guard lock(g_mu);
      g_math_mode = mode;
      g_version = Format("cuBLAS %d (%s)", version, c.file.c_str());
    }
    it = handles.emplace(device, h).first;
  }
  *out = it->second;
  return 0;
}

// A cuBLASLt matmul of one problem (LtTypedGemm's key): descriptors, the algorithm and its
// workspace.
struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo = {};
  CUdeviceptr workspace = 0;
  size_t workspace_size = 0;
  std::string name;
};

// The cuBLASLt handle of the calling thread for `device`.
int32_t LtHandle(const CublasLt& lt, CUdevice device, cublasLtHandle_t* out) {
  thread_local std::map<CUdevice, cublasLtHandle_t> handles;
  auto h = handles.find(device);
  if (h == handles.end()) {
    cublasLtHandle_t handle = nullptr;
    if (cublasStatus_t s = lt.Create(&handle); s != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status(nullptr, "cublasLtCreate", s));
    }
    h = handles.emplace(device, handle).first;
  }
  *out = h->second;
  return 0;
}

// cudaDataType of a TUNE_GPU_TYPE_* (TF32 inputs are f32 data); -1 for an unknown code.
int CudaType(int32_t type) {
  switch (type) {
    case TUNE_GPU_TYPE_F32:
    case TUNE_GPU_TYPE_TF32:
      return CUDA_R_32F;
    case TUNE_GPU_TYPE_F16:
      return CUDA_R_16F;
    case TUNE_GPU_TYPE_BF16:
      return CUDA_R_16BF;
    case TUNE_GPU_TYPE_FP8E4M3:
      return CUDA_R_8F_E4M3;
    case TUNE_GPU_TYPE_FP8E5M2:
      return CUDA_R_8F_E5M2;
    case TUNE_GPU_TYPE_I8:
      return CUDA_R_8I;
    case TUNE_GPU_TYPE_I32:
      return CUDA_R_32I;
    default:
      return -1;
  }
}

const char* TypeName(int32_t type) {
  static constexpr const char* kNames[] = {"f32",     "tf32",    "f16", "bf16",
                                           "fp8e4m3", "fp8e5m2", "i8",  "i32"};
  return type >= 0 && type <= TUNE_GPU_TYPE_I32 ? kNames[type] : "?";
}

// A typed cuBLASLt matmul of one (device, shape, types, layout, epilogue, algorithm).
int32_t LtTypedGemm(const CudaDriver& cu, CUdevice device, const void* A, const void* B,
                    const void* bias, void* C, const float* scale_a, const float* scale_b,
                    int64_t M, int64_t N, int64_t K, int32_t in_type, int32_t out_type, int32_t nt,
                    int32_t epilogue, int32_t algo, void* stream) {
  int32_t rc = 0;
  const CublasLt* lt = LoadCublasLt(&rc);
  if (lt == nullptr) {
    return rc;
  }
  cublasLtHandle_t handle = nullptr;
  if (rc = LtHandle(*lt, device, &handle); rc != 0) {
    return rc;
  }
  const bool fp8 = in_type == TUNE_GPU_TYPE_FP8E4M3 || in_type == TUNE_GPU_TYPE_FP8E5M2;
  const bool integer = in_type == TUNE_GPU_TYPE_I8;
  const uint32_t lt_epilogue = epilogue == TUNE_GPU_EPILOGUE_NONE ? 1u  // CUBLASLT_EPILOGUE_DEFAULT
                               : epilogue == TUNE_GPU_EPILOGUE_BIAS ? CUBLASLT_EPILOGUE_BIAS
                               : epilogue == TUNE_GPU_EPILOGUE_RELU ? CUBLASLT_EPILOGUE_RELU
                                                                    : CUBLASLT_EPILOGUE_RELU_BIAS;
  using Key =
      std::tuple<CUdevice, int64_t, int64_t, int64_t, int32_t, int32_t, int32_t, int32_t, int32_t>;
  thread_local std::map<Key, LtPlan> plans;
  const Key key{device, M, N, K, in_type, out_type, nt, epilogue, algo};
  auto it = plans.find(key);
  if (it == plans.end()) {
    LtPlan p;
    // Row-major C[M][N] = A B is column-major C^T[N][M] = op(B) A^T: cuBLASLt's first operand is
    // our B, [K][N] row-major (an N x K column-major matrix, no transpose) or [N][K] row-major
    // (K x N column-major, transposed: the TN order); its second is A^T, K x M column-major.
    const int in = CudaType(in_type), out = CudaType(out_type);
    // Integers: s8 x s8 summed in i32, alpha and beta i32 too (the IMMA kernels).
    const int compute = integer                         ? CUBLAS_COMPUTE_32I
                        : in_type == TUNE_GPU_TYPE_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                        : CUBLAS_COMPUTE_32F;
    const int transa = nt ? CUBLAS_OP_T : CUBLAS_OP_N, transb = CUBLAS_OP_N;
    cublasStatus_t s = lt->MatmulDescCreate(&p.desc, compute, integer ? CUDA_R_32I : CUDA_R_32F);
    if (s == 0) {
      s = lt->MatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa));
    }
    if (s == 0) {
      s = lt->MatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb));
    }
    if (s == 0) {
      s = lt->MatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &lt_epilogue,
                                     sizeof(lt_epilogue));
    }
    if (s == 0 && (epilogue & TUNE_GPU_EPILOGUE_BIAS) != 0) {
      s = lt->MatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &out,
                                     sizeof(out));
    }
    if (s == 0 && fp8) {
      // cuBLASLt's A is our B: its scale is scale_b.
      s = lt->MatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_b,
                                     sizeof(scale_b));
      if (s == 0) {
        s = lt->MatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_a,
                                       sizeof(scale_a));
      }
    }
    if (s == 0) {
      s = nt ? lt->MatrixLayoutCreate(&p.a, in, K, N, K)
             : lt->MatrixLayoutCreate(&p.a, in, N, K, N);
    }
    if (s == 0) {
      s = lt->MatrixLayoutCreate(&p.b, in, K, M, K);
    }
    if (s == 0) {
      s = lt->MatrixLayoutCreate(&p.c, out, N, M, N);
    }
    cublasLtMatmulPreference_t pref = nullptr;
    if (s == 0) {
      s = lt->PreferenceCreate(&pref);
    }
    if (s == 0) {
      s = lt->PreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                     &kLtWorkspaceLimit, sizeof(kLtWorkspaceLimit));
    }
    if (s == 0 && out_type != TUNE_GPU_TYPE_F32) {
      // Split-K reductions in place or in the output type add partial sums in bf16/f16: measured
      // on an H200 (bf16, 333 x 4096 x 777), four of the heuristic's eight algorithms then stood
      // 4% off the f32-accumulated result. Only reductions in the compute type (f32) are asked for.
      const uint32_t mask = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
      s = lt->PreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask,
                                     sizeof(mask));
    }
    if (s != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status(nullptr, "cublasLt descriptors", s));
    }
    constexpr int kAlgos = 8;
    cublasLtMatmulHeuristicResult_t results[kAlgos] = {};
    int found = 0;
    s = lt->AlgoGetHeuristic(handle, p.desc, p.a, p.b, p.c, p.c, pref, kAlgos, results, &found);
    if (s != 0 || found == 0) {
      return Failed(TUNE_GPU_UNSUPPORTED,
                    Format("cublasLtMatmulAlgoGetHeuristic found no algorithm for %s x %s -> %s "
                           "M=%lld N=%lld K=%lld (%s) with epilogue %u (status %d)",
                           TypeName(in_type), TypeName(in_type), TypeName(out_type),
                           static_cast<long long>(M), static_cast<long long>(N),
                           static_cast<long long>(K), nt ? "TN" : "NN", lt_epilogue, s));
    }
    if (algo >= found) {
      return Failed(
          TUNE_GPU_ALGO_UNSUPPORTED,
          Format("the heuristic returned %d algorithms for this problem, not %d", found, algo + 1));
    }
    p.algo = results[algo].algo;
    p.workspace_size = results[algo].workspaceSize;
    if (int32_t a = tune_gpu::AllocDevice(cu, p.workspace_size, &p.workspace); a != 0) {
      return a;
    }
    int id = -1;
    if (lt->AlgoConfigGetAttribute != nullptr) {
      lt->AlgoConfigGetAttribute(&p.algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id), nullptr);
    }
    p.name = Format(
        "cublasLtMatmul (cuBLASLt %zu, %s) %s -> %s %s, heuristic choice %d of %d (algo id %d), "
        "epilogue %u, workspace %zu B, compute %s",
        lt->GetVersion(), lt->file.c_str(), TypeName(in_type), TypeName(out_type), nt ? "TN" : "NN",
        algo + 1, found, id, lt_epilogue, p.workspace_size,
        integer                         ? "32I"
        : in_type == TUNE_GPU_TYPE_TF32 ? "32F_FAST_TF32"
                                        : "32F");
    it = plans.emplace(key, p).first;
  }
  LtPlan& p = it->second;
  if ((epilogue & TUNE_GPU_EPILOGUE_BIAS) != 0) {
    if (cublasStatus_t s = lt->MatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                      &bias, sizeof(bias));
        s != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status(nullptr, "cublasLt bias pointer", s));
    }
  }
  if (fp8) {  // the pointers of this call (a plan outlives the buffers it was made with)
    cublasStatus_t s = lt->MatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                                  &scale_b, sizeof(scale_b));
    if (s == 0) {
      s = lt->MatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_a,
                                     sizeof(scale_a));
    }
    if (s != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status(nullptr, "cublasLt scale pointers", s));
    }
  }
  const float alpha = 1.0f, beta = 0.0f;
  const int32_t int_alpha = 1, int_beta = 0;
  const void* alpha_ptr = integer ? static_cast<const void*>(&int_alpha) : &alpha;
  const void* beta_ptr = integer ? static_cast<const void*>(&int_beta) : &beta;
  if (cublasStatus_t s =
          lt->Matmul(handle, p.desc, alpha_ptr, B, p.a, A, p.b, beta_ptr, C, p.c, C, p.c, &p.algo,
                     reinterpret_cast<void*>(p.workspace), p.workspace_size, stream);
      s != 0) {
    return Failed(TUNE_GPU_LIBRARY_ERROR, Status(nullptr, "cublasLtMatmul", s));
  }
  std::lock_guard lock(g_mu);
  g_last_path = p.name;
  return 0;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int32_t tune_cublaslt_gemm(
    const void* A, const void* B, const void* bias_or_null, void* C, const float* scale_a,
    const float* scale_b, int64_t M, int64_t N, int64_t K, int32_t in_type, int32_t out_type,
    int32_t nt, int32_t epilogue, int32_t algo, void* stream) {
  const bool fp8 = in_type == TUNE_GPU_TYPE_FP8E4M3 || in_type == TUNE_GPU_TYPE_FP8E5M2;
  // i8 inputs take an i32 output, the TN order and no epilogue; i32 is an output type only.
  const bool integer_mismatch =
      (in_type == TUNE_GPU_TYPE_I8) != (out_type == TUNE_GPU_TYPE_I32) ||
      in_type == TUNE_GPU_TYPE_I32 || out_type == TUNE_GPU_TYPE_I8 ||
      (in_type == TUNE_GPU_TYPE_I8 && (nt != 1 || epilogue != TUNE_GPU_EPILOGUE_NONE));
  if (A == nullptr || B == nullptr || C == nullptr || M < 1 || N < 1 || K < 1 || M > 0x7fffffff ||
      N > 0x7fffffff || K > 0x7fffffff || CudaType(in_type) < 0 || CudaType(out_type) < 0 ||
      integer_mismatch || out_type == TUNE_GPU_TYPE_TF32 || (nt != 0 && nt != 1) || algo < 0 ||
      algo >= 8 || (fp8 && (scale_a == nullptr || scale_b == nullptr)) ||
      !tune_gpu::ValidEpilogue(epilogue, TUNE_GPU_EPILOGUE_LIBRARY,
                               static_cast<const float*>(bias_or_null))) {
    return Failed(TUNE_GPU_BAD_ARGUMENT,
                  "tune_cublaslt_gemm: null pointer, shape out of [1, 2^31), unknown type, nt "
                  "not 0 or 1, algo not in [0, 8), missing fp8 scales, bad epilogue, or i8 "
                  "inputs without an i32 output in the TN order without an epilogue");
  }
  const CudaDriver* cu = tune_gpu::Driver();
  if (cu == nullptr) {
    return Failed(TUNE_GPU_NOT_FOUND, tune_gpu_last_error());
  }
  CUdevice device = 0;
  if (int32_t rc = tune_gpu::CurrentDevice(*cu, &device); rc != 0) {
    return Failed(rc, tune_gpu_last_error());
  }
  return LtTypedGemm(*cu, device, A, B, bias_or_null, C, scale_a, scale_b, M, N, K, in_type,
                     out_type, nt, epilogue, algo, stream);
}

extern "C" __attribute__((visibility("default"))) int32_t
tune_cublas_sgemm(const float* A, const float* B, const float* bias_or_null, float* C, int64_t M,
                  int64_t N, int64_t K, int32_t epilogue, int32_t epilogue_mode, void* stream) {
  if (A == nullptr || B == nullptr || C == nullptr || M < 1 || N < 1 || K < 1 || M > 0x7fffffff ||
      N > 0x7fffffff || K > 0x7fffffff ||
      !tune_gpu::ValidEpilogue(epilogue, epilogue_mode, bias_or_null)) {
    return Failed(TUNE_GPU_BAD_ARGUMENT,
                  "tune_cublas_sgemm: null pointer, shape out of [1, 2^31) or bad epilogue");
  }
  int32_t rc = 0;
  const Cublas* c = LoadCublas(&rc);
  if (c == nullptr) {
    return rc;
  }
  const CudaDriver* cu = tune_gpu::Driver();
  if (cu == nullptr) {
    return Failed(TUNE_GPU_NOT_FOUND, tune_gpu_last_error());
  }
  CUdevice device = 0;
  if (rc = tune_gpu::CurrentDevice(*cu, &device); rc != 0) {
    return Failed(rc, tune_gpu_last_error());
  }
  if (epilogue != TUNE_GPU_EPILOGUE_NONE && epilogue_mode == TUNE_GPU_EPILOGUE_LIBRARY) {
    return LtTypedGemm(*cu, device, A, B, bias_or_null, C, nullptr, nullptr, M, N, K,
                       TUNE_GPU_TYPE_F32, TUNE_GPU_TYPE_F32, /*nt=*/0, epilogue, /*algo=*/0,
                       stream);
  }
  cublasHandle_t h = nullptr;
  if (rc = Handle(*c, device, &h); rc != 0) {
    return rc;
  }
  if (cublasStatus_t s = c->SetStream(h, stream); s != 0) {
    return Failed(TUNE_GPU_LIBRARY_ERROR, Status(c, "cublasSetStream", s));
  }
  const float alpha = 1.0f, beta = 0.0f;
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  // Row-major C[M][N] = A B is column-major C^T[N][M] = B^T[N][K] A^T[K][M].
  if (cublasStatus_t s =
          c->Sgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, B, n, A, k, &beta, C, n);
      s != 0) {
    return Failed(TUNE_GPU_LIBRARY_ERROR, Status(c, "cublasSgemm", s));
  }
  if (epilogue != TUNE_GPU_EPILOGUE_NONE) {
    if (rc = tune_gpu::LaunchEpilogue(*cu, C, bias_or_null, static_cast<uint64_t>(M * N),
                                      static_cast<uint64_t>(N), 1, static_cast<uint32_t>(epilogue),
                                      stream);
        rc != 0) {
      return Failed(rc, tune_gpu_last_error());
    }
  }
  std::lock_guard lock(g_mu);
  g_last_path = epilogue == TUNE_GPU_EPILOGUE_NONE
                    ? "cublasSgemm"
                    : "cublasSgemm, then tune's bias/ReLU kernel on the same stream";
  return 0;
}

extern "C" __attribute__((visibility("default"))) int32_t tune_cublas_describe(char* buf,
                                                                               int64_t size) {
  if (buf == nullptr || size < 1) {
    return TUNE_GPU_BAD_ARGUMENT;
  }
  std::lock_guard lock(g_mu);
  const char* tf32 = g_math_mode < 0                                     ? "not yet set"
                     : (g_math_mode & 0xf) == CUBLAS_TF32_TENSOR_OP_MATH ? "ON"
                                                                         : "off";
  std::snprintf(buf, static_cast<size_t>(size), "%s; math mode %d (TF32 %s); last call: %s%s%s",
                g_version.empty() ? "cuBLAS not loaded yet" : g_version.c_str(), g_math_mode, tf32,
                g_last_path.empty() ? "none yet" : g_last_path.c_str(),
                g_last_error.empty() ? "" : "; last error: ", g_last_error.c_str());
  return 0;
}

extern "C" __attribute__((visibility("default"))) int32_t tune_cublas_version(char* buf,
                                                                              int64_t size) {
  if (buf == nullptr || size < 1) {
    return TUNE_GPU_BAD_ARGUMENT;  // before anything is loaded
  }
  int32_t rc = 0;
  const CublasLt* lt = LoadCublasLt(&rc);
  if (lt == nullptr) {
    return TUNE_GPU_NOT_FOUND;  // as for every shim's version (LoadCublasLt's own code is _LT_)
  }
  const size_t v = lt->GetVersion();  // major * 10000 + minor * 100 + patch
  return tune_gpu::WriteVersion(buf, size,
                                Format("%zu.%zu.%zu", v / 10000, v / 100 % 100, v % 100));
}
