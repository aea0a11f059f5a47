// libtune_hipblaslt.so: tune's shim over hipBLASLt's typed GEMMs (runtime/tune_gpu_runtime.h).
//
// tune_hipblaslt_gemm takes tune_cublaslt_gemm's arguments and means the same product, through
// hipblasLtMatmul. libhipblaslt and the HIP runtime are opened at the first call. Handles are
// made per (thread, device) and kept; so are the descriptors, the algorithm chosen among the
// heuristic's and its workspace, per (thread, device, shape, types, layout, epilogue,
// algorithm), so that after the warm-up a call only queues work on the caller's stream.
//
// This shim has been compiled and its refusals tested, but it has never run on an AMD GPU: no
// such GPU was at hand and Debian packages no hipBLASLt. The ABI below is declared by hand from
// hipBLASLt's public headers (hipblaslt.h, hipblas-common.h, hip/library_types.h) of 0.6 and
// later (ROCm 6.0 on), the first to take hipDataType and hipblasComputeType_t; an older library
// is refused when the first handle reports its version.
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "runtime/gpu_shim_util.h"
#include "runtime/tune_gpu_runtime.h"

namespace {

using tune_gpu::Format;

// The hipBLASLt ABI this shim uses. Handles and descriptors are pointers; hipblasStatus_t and
// every enum are ints.
using hipblasStatus_t = int;
using hipblasLtHandle_t = void*;
using hipblasLtMatmulDesc_t = void*;
using hipblasLtMatrixLayout_t = void*;
using hipblasLtMatmulPreference_t = void*;
// hipblasOperation_t (hipblas-common.h): rocBLAS's numbering, not cuBLAS's.
constexpr int32_t HIPBLAS_OP_N = 111;
constexpr int32_t HIPBLAS_OP_T = 112;
// hipblasComputeType_t (hipblas-common.h). _32F is plain FP32 accumulation; xf32 would be
// _32F_FAST_TF32 (6), which this shim never asks for.
constexpr int HIPBLAS_COMPUTE_32F = 2;
constexpr int HIPBLAS_COMPUTE_32I = 9;
// hipDataType (hip/library_types.h). The OCP fp8 codes exist from ROCm 6.3 on (hipBLASLt runs
// them on gfx950 and gfx12); the FNUZ ones are gfx942's.
constexpr int HIP_R_32F = 0;
constexpr int HIP_R_16F = 2;
constexpr int HIP_R_8I = 3;
constexpr int HIP_R_32I = 10;
constexpr int HIP_R_16BF = 14;
constexpr int HIP_R_8F_E4M3 = 28;
constexpr int HIP_R_8F_E5M2 = 29;
constexpr int HIP_R_8F_E4M3_FNUZ = 1000;
constexpr int HIP_R_8F_E5M2_FNUZ = 1001;
// hipblasLtMatmulDescAttributes_t (hipblaslt.h; the same numbers from 0.6 on).
constexpr int HIPBLASLT_MATMUL_DESC_TRANSA = 0;           // int32_t
constexpr int HIPBLASLT_MATMUL_DESC_TRANSB = 1;           // int32_t
constexpr int HIPBLASLT_MATMUL_DESC_EPILOGUE = 2;         // uint32_t
constexpr int HIPBLASLT_MATMUL_DESC_BIAS_POINTER = 3;     // const void*
constexpr int HIPBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 4;   // int32_t (a hipDataType)
constexpr int HIPBLASLT_MATMUL_DESC_A_SCALE_POINTER = 5;  // const float* on the device
constexpr int HIPBLASLT_MATMUL_DESC_B_SCALE_POINTER = 6;
// hipblasLtEpilogue_t.
constexpr uint32_t HIPBLASLT_EPILOGUE_DEFAULT = 1;
constexpr uint32_t HIPBLASLT_EPILOGUE_RELU = 2;
constexpr uint32_t HIPBLASLT_EPILOGUE_BIAS = 4;
constexpr uint32_t HIPBLASLT_EPILOGUE_RELU_BIAS = 6;
// hipblasLtMatmulPreferenceAttributes_t.
constexpr int HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1;  // uint64_t
// hipblasLtMatmulAlgo_t: 16 opaque bytes and the workspace bound the heuristic set.
struct hipblasLtMatmulAlgo_t {
  uint8_t data[16];
  size_t max_workspace_bytes;
};
struct hipblasLtMatmulHeuristicResult_t {
  hipblasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  hipblasStatus_t state;
  float wavesCount;
  int reserved[4];
};
static_assert(sizeof(hipblasLtMatmulAlgo_t) == 24 && sizeof(hipblasLtMatmulHeuristicResult_t) == 56,
              "the layouts of hipblaslt.h on LP64");
// hipblasLtGetVersion's number: major * 100000 + minor * 100 + patch.
constexpr int kMinVersion = 600;  // 0.6.0, ROCm 6.0
constexpr uint64_t kWorkspaceLimit = uint64_t{32} << 20;
constexpr int kAlgos = 8;

struct HipblasLt {
  std::string file;
  hipblasStatus_t (*Create)(hipblasLtHandle_t*);
  hipblasStatus_t (*GetVersion)(hipblasLtHandle_t, int*);
  hipblasStatus_t (*MatmulDescCreate)(hipblasLtMatmulDesc_t*, int, int);
  hipblasStatus_t (*MatmulDescSetAttribute)(hipblasLtMatmulDesc_t, int, const void*, size_t);
  hipblasStatus_t (*MatrixLayoutCreate)(hipblasLtMatrixLayout_t*, int, uint64_t, uint64_t, int64_t);
  hipblasStatus_t (*PreferenceCreate)(hipblasLtMatmulPreference_t*);
  hipblasStatus_t (*PreferenceSetAttribute)(hipblasLtMatmulPreference_t, int, const void*, size_t);
  hipblasStatus_t (*AlgoGetHeuristic)(hipblasLtHandle_t, hipblasLtMatmulDesc_t,
                                      hipblasLtMatrixLayout_t, hipblasLtMatrixLayout_t,
                                      hipblasLtMatrixLayout_t, hipblasLtMatrixLayout_t,
                                      hipblasLtMatmulPreference_t, int,
                                      hipblasLtMatmulHeuristicResult_t*, int*);
  hipblasStatus_t (*Matmul)(hipblasLtHandle_t, hipblasLtMatmulDesc_t, const void*, const void*,
                            hipblasLtMatrixLayout_t, const void*, hipblasLtMatrixLayout_t,
                            const void*, const void*, hipblasLtMatrixLayout_t, void*,
                            hipblasLtMatrixLayout_t, const hipblasLtMatmulAlgo_t*, void*, size_t,
                            void*);
  const tune_hip_runtime* hip;  // the HIP runtime (tune_hip_runtime.h)
};

std::mutex g_mu;
std::string g_version;     // guarded by g_mu
std::string g_last_path;   // guarded by g_mu: how the last call ran
std::string g_last_error;  // guarded by g_mu

int32_t Failed(int32_t code, const std::string& message) {
  {
    std::lock_guard lock(g_mu);
    g_last_error = message;
  }
  return tune_gpu::Fail(code, "hipblaslt: " + message);
}

const HipblasLt* Load(int32_t* code) {
  static std::string error;
  static const HipblasLt* lib = []() -> const HipblasLt* {
    std::string opened;
    void* h = tune_gpu::OpenFirst({"libhipblaslt.so", "libhipblaslt.so.1", "libhipblaslt.so.0"},
                                  &error, &opened);
    if (h == nullptr) {
      return nullptr;
    }
    const tune_hip_runtime* hip = tune_gpu::HipRuntime(&error);
    if (hip == nullptr) {
      return nullptr;
    }
    auto* l = new HipblasLt();  // lives as long as the process
    l->file = opened;
    l->hip = hip;
    std::string missing;
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          tune_gpu::Symbol(h, name, &missing));
    };
    get(l->Create, "hipblasLtCreate");
    get(l->GetVersion, "hipblasLtGetVersion");
    get(l->MatmulDescCreate, "hipblasLtMatmulDescCreate");
    get(l->MatmulDescSetAttribute, "hipblasLtMatmulDescSetAttribute");
    get(l->MatrixLayoutCreate, "hipblasLtMatrixLayoutCreate");
    get(l->PreferenceCreate, "hipblasLtMatmulPreferenceCreate");
    get(l->PreferenceSetAttribute, "hipblasLtMatmulPreferenceSetAttribute");
    get(l->AlgoGetHeuristic, "hipblasLtMatmulAlgoGetHeuristic");
    get(l->Matmul, "hipblasLtMatmul");
    if (!missing.empty()) {
      error = opened + ": " + missing;
      return nullptr;
    }
    std::lock_guard lock(g_mu);
    g_version = Format("hipBLASLt (%s; version read at the first handle)", opened.c_str());
    return l;
  }();
  *code = lib != nullptr ? 0 : Failed(TUNE_GPU_NOT_FOUND, error);
  return lib;
}

// hipblasStatus_t's names (hipblas-common.h): hipBLASLt exports no function that says them.
std::string Status(const char* what, hipblasStatus_t s) {
  static constexpr const char* kNames[] = {
      "SUCCESS",       "NOT_INITIALIZED",   "ALLOC_FAILED",   "INVALID_VALUE",
      "MAPPING_ERROR", "EXECUTION_FAILED",  "INTERNAL_ERROR", "NOT_SUPPORTED",
      "ARCH_MISMATCH", "HANDLE_IS_NULLPTR", "INVALID_ENUM",   "UNKNOWN"};
  return Format("%s failed: hipBLAS status %d (HIPBLAS_STATUS_%s)", what, s,
                s >= 0 && s <= 11 ? kNames[s] : "?");
}

// The calling thread's hipBLASLt handle for `device` (the current one: hipblasLtCreate ties a
// handle to it). Each new handle reports the library's version, which must be 0.6 or later.
int32_t Handle(const HipblasLt& l, int device, hipblasLtHandle_t* out) {
  thread_local std::map<int, std::pair<hipblasLtHandle_t, int>> handles;  // and its version
  auto it = handles.find(device);
  if (it == handles.end()) {
    hipblasLtHandle_t h = nullptr;
    if (hipblasStatus_t s = l.Create(&h); s != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status("hipblasLtCreate", s));
    }
    int version = 0;
    if (hipblasStatus_t s = l.GetVersion(h, &version); s != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR, Status("hipblasLtGetVersion", s));
    }
    std::lock_guard lock(g_mu);
    g_version = Format("hipBLASLt %d.%d.%d (%s)", version / 100000, version / 100 % 1000,
                       version % 100, l.file.c_str());
    it = handles.emplace(device, std::make_pair(h, version)).first;
  }
  if (const int version = it->second.second; version < kMinVersion) {
    // Before 0.6 the types were hipblasDatatype_t and hipblasLtComputeType_t, numbered
    // differently: the library is there but is not one this shim can call.
    return Failed(TUNE_GPU_NOT_FOUND,
                  Format("%s is hipBLASLt %d.%d.%d; tune_hipblaslt_gemm needs 0.6 or later "
                         "(ROCm 6.0 or later)",
                         l.file.c_str(), version / 100000, version / 100 % 1000, version % 100));
  }
  *out = it->second.first;
  return 0;
}

bool IsFp8(int32_t type) {
  return type == TUNE_GPU_TYPE_FP8E4M3 || type == TUNE_GPU_TYPE_FP8E5M2 ||
         type == TUNE_GPU_TYPE_FP8E4M3FNUZ || type == TUNE_GPU_TYPE_FP8E5M2FNUZ;
}

// The hipDataType of a TUNE_GPU_TYPE_* (tf32 inputs are f32 data); -1 for an unknown code.
int HipType(int32_t type) {
  switch (type) {
    case TUNE_GPU_TYPE_F32:
    case TUNE_GPU_TYPE_TF32:
      return HIP_R_32F;
    case TUNE_GPU_TYPE_F16:
      return HIP_R_16F;
    case TUNE_GPU_TYPE_BF16:
      return HIP_R_16BF;
    case TUNE_GPU_TYPE_FP8E4M3:
      return HIP_R_8F_E4M3;
    case TUNE_GPU_TYPE_FP8E5M2:
      return HIP_R_8F_E5M2;
    case TUNE_GPU_TYPE_I8:
      return HIP_R_8I;
    case TUNE_GPU_TYPE_I32:
      return HIP_R_32I;
    case TUNE_GPU_TYPE_FP8E4M3FNUZ:
      return HIP_R_8F_E4M3_FNUZ;
    case TUNE_GPU_TYPE_FP8E5M2FNUZ:
      return HIP_R_8F_E5M2_FNUZ;
    default:
      return -1;
  }
}

const char* TypeName(int32_t type) {
  static constexpr const char* kNames[] = {"f32",     "tf32", "f16", "bf16",        "fp8e4m3",
                                           "fp8e5m2", "i8",   "i32", "fp8e4m3fnuz", "fp8e5m2fnuz"};
  return type >= 0 && type <= TUNE_GPU_TYPE_FP8E5M2FNUZ ? kNames[type] : "?";
}

// The combinations served, for refusals.
constexpr char kServed[] =
    "tune_hipblaslt_gemm serves f32 -> f32, f16 -> f16|f32, bf16 -> bf16|f32, i8 -> i32 without "
    "an epilogue (HIPBLAS_COMPUTE_32I), and fp8e4m3fnuz|fp8e5m2fnuz (gfx942) or fp8e4m3|fp8e5m2 "
    "(gfx950 and later) -> f16|bf16|f32 with their two scales";

// Empty when hipBLASLt serves `in` -> `out` with `epilogue` here, else why not.
std::string Unserved(int32_t in, int32_t out, int32_t epilogue) {
  const bool served =
      (in == TUNE_GPU_TYPE_F32 && out == TUNE_GPU_TYPE_F32) ||
      ((in == TUNE_GPU_TYPE_F16 || in == TUNE_GPU_TYPE_BF16) &&
       (out == in || out == TUNE_GPU_TYPE_F32)) ||
      (in == TUNE_GPU_TYPE_I8 && out == TUNE_GPU_TYPE_I32 && epilogue == TUNE_GPU_EPILOGUE_NONE) ||
      (IsFp8(in) &&
       (out == TUNE_GPU_TYPE_F16 || out == TUNE_GPU_TYPE_BF16 || out == TUNE_GPU_TYPE_F32));
  if (served) {
    return "";
  }
  const char* why = in == TUNE_GPU_TYPE_TF32
                        ? " (hipBLASLt's fast f32 is xf32, not known to round as tf32 does)"
                    : in == TUNE_GPU_TYPE_I8 && out == TUNE_GPU_TYPE_I32
                        ? " (an integer GEMM here is the raw i32 sums, without an epilogue)"
                        : "";
  return Format("%s -> %s%s is not served%s; %s", TypeName(in), TypeName(out),
                epilogue != TUNE_GPU_EPILOGUE_NONE ? " with an epilogue" : "", why, kServed);
}

// A hipBLASLt matmul of one problem (Gemm's key): descriptors, the algorithm and its workspace.
struct Plan {
  hipblasLtMatmulDesc_t desc = nullptr;
  hipblasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  hipblasLtMatmulAlgo_t algo = {};
  void* workspace = nullptr;
  size_t workspace_size = 0;
  std::string name;
};

int32_t MakePlan(const HipblasLt& l, hipblasLtHandle_t handle, int64_t M, int64_t N, int64_t K,
                 int32_t in_type, int32_t out_type, int32_t nt, int32_t epilogue, int32_t algo,
                 const float* scale_a, const float* scale_b, Plan* p) {
  const bool integer = in_type == TUNE_GPU_TYPE_I8;
  const uint32_t lt_epilogue = epilogue == TUNE_GPU_EPILOGUE_NONE   ? HIPBLASLT_EPILOGUE_DEFAULT
                               : epilogue == TUNE_GPU_EPILOGUE_BIAS ? HIPBLASLT_EPILOGUE_BIAS
                               : epilogue == TUNE_GPU_EPILOGUE_RELU ? HIPBLASLT_EPILOGUE_RELU
                                                                    : HIPBLASLT_EPILOGUE_RELU_BIAS;
  // Row-major C[M][N] = A B is column-major C^T[N][M] = op(B) A^T: hipBLASLt's first operand is
  // our B, [K][N] row-major (N x K column-major, no transpose) or [N][K] row-major (K x N
  // column-major, transposed: the TN order); its second is A^T, K x M column-major.
  const int in = HipType(in_type), out = HipType(out_type);
  const int32_t transa = nt ? HIPBLAS_OP_T : HIPBLAS_OP_N, transb = HIPBLAS_OP_N;
  // Integers sum in i32 with i32 alpha and beta; everything else in plain f32.
  hipblasStatus_t s =
      l.MatmulDescCreate(&p->desc, integer ? HIPBLAS_COMPUTE_32I : HIPBLAS_COMPUTE_32F,
                         integer ? HIP_R_32I : HIP_R_32F);
  auto step = [&](auto&& next) {
    if (s == 0) {
      s = next();
    }
  };
  auto set = [&](int attribute, const auto& value) {
    step([&] { return l.MatmulDescSetAttribute(p->desc, attribute, &value, sizeof(value)); });
  };
  set(HIPBLASLT_MATMUL_DESC_TRANSA, transa);
  set(HIPBLASLT_MATMUL_DESC_TRANSB, transb);
  set(HIPBLASLT_MATMUL_DESC_EPILOGUE, lt_epilogue);
  if ((epilogue & TUNE_GPU_EPILOGUE_BIAS) != 0) {
    // The bias is of C's type; hipBLASLt's default for an fp8 GEMM's f32 output is bf16.
    const int32_t bias_type = out;
    set(HIPBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, bias_type);
  }
  if (IsFp8(in_type)) {
    // The heuristic picks among the kernels that scale: hipBLASLt's A is our B, so its scale
    // is scale_b. The pointers are set again on every call (a plan outlives its buffers).
    set(HIPBLASLT_MATMUL_DESC_A_SCALE_POINTER, scale_b);
    set(HIPBLASLT_MATMUL_DESC_B_SCALE_POINTER, scale_a);
  }
  step([&] {
    return nt ? l.MatrixLayoutCreate(&p->a, in, K, N, K) : l.MatrixLayoutCreate(&p->a, in, N, K, N);
  });
  step([&] { return l.MatrixLayoutCreate(&p->b, in, K, M, K); });
  step([&] { return l.MatrixLayoutCreate(&p->c, out, N, M, N); });
  hipblasLtMatmulPreference_t pref = nullptr;
  step([&] { return l.PreferenceCreate(&pref); });
  step([&] {
    return l.PreferenceSetAttribute(pref, HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                    &kWorkspaceLimit, sizeof(kWorkspaceLimit));
  });
  if (s != 0) {
    return Failed(TUNE_GPU_LIBRARY_ERROR, Status("hipBLASLt descriptors", s));
  }
  hipblasLtMatmulHeuristicResult_t results[kAlgos] = {};
  int found = 0;
  s = l.AlgoGetHeuristic(handle, p->desc, p->a, p->b, p->c, p->c, pref, kAlgos, results, &found);
  const char* order = nt ? "TN" : "NN";
  if (s != 0 || found == 0) {
    return Failed(
        TUNE_GPU_UNSUPPORTED,
        Format("hipblasLtMatmulAlgoGetHeuristic found no algorithm for %s x %s -> %s "
               "M=%lld N=%lld K=%lld (%s) with epilogue %u on this device (%s)",
               TypeName(in_type), TypeName(in_type), TypeName(out_type), static_cast<long long>(M),
               static_cast<long long>(N), static_cast<long long>(K), order, lt_epilogue,
               Status("the heuristic", s).c_str()));
  }
  if (algo >= found) {
    return Failed(
        TUNE_GPU_ALGO_UNSUPPORTED,
        Format("the heuristic returned %d algorithms for this problem, not %d", found, algo + 1));
  }
  p->algo = results[algo].algo;
  p->workspace_size = results[algo].workspaceSize;
  if (p->workspace_size > 0) {
    if (int e = l.hip->hipMalloc(&p->workspace, p->workspace_size); e != 0) {
      return Failed(TUNE_GPU_LIBRARY_ERROR,
                    Format("hipMalloc(%zu) failed: HIP error %d", p->workspace_size, e));
    }
  }
  p->name = Format(
      "hipblasLtMatmul (%s) %s -> %s %s, heuristic choice %d of %d, epilogue %u, workspace %zu "
      "B, compute %s",
      l.file.c_str(), TypeName(in_type), TypeName(out_type), order, algo + 1, found, lt_epilogue,
      p->workspace_size, integer ? "32I" : "32F");
  return 0;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int32_t tune_hipblaslt_gemm(
    const void* A, const void* B, const void* bias_or_null, void* C, const float* scale_a,
    const float* scale_b, int64_t M, int64_t N, int64_t K, int32_t in_type, int32_t out_type,
    int32_t nt, int32_t epilogue, int32_t algo, void* stream) {
  if (A == nullptr || B == nullptr || C == nullptr || M < 1 || N < 1 || K < 1 || M > 0x7fffffff ||
      N > 0x7fffffff || K > 0x7fffffff || HipType(in_type) < 0 || HipType(out_type) < 0 ||
      (nt != 0 && nt != 1) || algo < 0 || algo >= kAlgos ||
      (IsFp8(in_type) && (scale_a == nullptr || scale_b == nullptr)) ||
      !tune_gpu::ValidEpilogue(epilogue, TUNE_GPU_EPILOGUE_LIBRARY,
                               static_cast<const float*>(bias_or_null))) {
    return Failed(TUNE_GPU_BAD_ARGUMENT,
                  "tune_hipblaslt_gemm: null pointer, shape out of [1, 2^31), type not a "
                  "TUNE_GPU_TYPE_* code, nt not 0 or 1, algo not in [0, 8), missing fp8 scales, "
                  "or a bias epilogue without a bias");
  }
  if (std::string why = Unserved(in_type, out_type, epilogue); !why.empty()) {
    return Failed(TUNE_GPU_UNSUPPORTED, why);
  }
  int32_t rc = 0;
  const HipblasLt* l = Load(&rc);
  if (l == nullptr) {
    return rc;
  }
  int device = 0;
  if (int e = l->hip->hipGetDevice(&device); e != 0) {
    return Failed(TUNE_GPU_LIBRARY_ERROR, Format("hipGetDevice failed: HIP error %d", e));
  }
  hipblasLtHandle_t handle = nullptr;
  if (rc = Handle(*l, device, &handle); rc != 0) {
    return rc;
  }
  using Key =
      std::tuple<int, int64_t, int64_t, int64_t, int32_t, int32_t, int32_t, int32_t, int32_t>;
  thread_local std::map<Key, Plan> plans;
  const Key key{device, M, N, K, in_type, out_type, nt, epilogue, algo};
  auto it = plans.find(key);
  if (it == plans.end()) {
    Plan p;
    if (rc = MakePlan(*l, handle, M, N, K, in_type, out_type, nt, epilogue, algo, scale_a, scale_b,
                      &p);
        rc != 0) {
      return rc;
    }
    it = plans.emplace(key, p).first;
  }
  Plan& p = it->second;
  hipblasStatus_t s = 0;
  if ((epilogue & TUNE_GPU_EPILOGUE_BIAS) != 0) {
    s = l->MatmulDescSetAttribute(p.desc, HIPBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_or_null,
                                  sizeof(bias_or_null));
  }
  if (s == 0 && IsFp8(in_type)) {
    s = l->MatmulDescSetAttribute(p.desc, HIPBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_b,
                                  sizeof(scale_b));
    if (s == 0) {
      s = l->MatmulDescSetAttribute(p.desc, HIPBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_a,
                                    sizeof(scale_a));
    }
  }
  if (s != 0) {
    return Failed(TUNE_GPU_LIBRARY_ERROR, Status("hipBLASLt bias/scale pointers", s));
  }
  const float alpha = 1.0f, beta = 0.0f;
  const int32_t int_alpha = 1, int_beta = 0;
  const bool integer = in_type == TUNE_GPU_TYPE_I8;
  const void* alpha_ptr = integer ? static_cast<const void*>(&int_alpha) : &alpha;
  const void* beta_ptr = integer ? static_cast<const void*>(&int_beta) : &beta;
  if (s = l->Matmul(handle, p.desc, alpha_ptr, B, p.a, A, p.b, beta_ptr, C, p.c, C, p.c, &p.algo,
                    p.workspace, p.workspace_size, stream);
      s != 0) {
    return Failed(TUNE_GPU_LIBRARY_ERROR, Status("hipblasLtMatmul", s));
  }
  std::lock_guard lock(g_mu);
  g_last_path = p.name;
  return 0;
}

extern "C" __attribute__((visibility("default"))) int32_t tune_hipblaslt_describe(char* buf,
                                                                                  int64_t size) {
  if (buf == nullptr || size < 1) {
    return TUNE_GPU_BAD_ARGUMENT;
  }
  std::lock_guard lock(g_mu);
  std::snprintf(buf, static_cast<size_t>(size), "%s; compute 32F (no xf32); last call: %s%s%s",
                g_version.empty() ? "hipBLASLt not loaded yet" : g_version.c_str(),
                g_last_path.empty() ? "none yet" : g_last_path.c_str(),
                g_last_error.empty() ? "" : "; last error: ", g_last_error.c_str());
  return 0;
}

extern "C" __attribute__((visibility("default"))) int32_t tune_hipblaslt_version(char* buf,
                                                                                 int64_t size) {
  if (buf == nullptr || size < 1) {
    return TUNE_GPU_BAD_ARGUMENT;  // before anything is loaded
  }
  int32_t rc = 0;
  const HipblasLt* l = Load(&rc);
  if (l == nullptr) {
    return rc;
  }
  // hipblasLtGetVersion needs a handle, and a handle a device: the file's version instead.
  return tune_gpu::WriteVersion(buf, size,
                                tune_gpu::FileVersion(reinterpret_cast<const void*>(l->Create)));
}
