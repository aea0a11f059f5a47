/* The runtime shims of tune's GPU library candidates: a C ABI of tune's own over the vendor
 * libraries, one function per operator, called by the host kernels of the library templates
 * (gemm.cuda.cublas, gemm.cuda.cublaslt, conv2d.cuda.cudnn, gemm.rocm.rocblas,
 * conv2d.rocm.miopen).
 *
 *   libtune_cublas.so    tune_cublas_sgemm, tune_cublaslt_gemm,      (loads libcublas.so.13/.12,
 *                        tune_cublas_describe, tune_cublas_version    libcublasLt, libcuda.so.1)
 *   libtune_cudnn.so     tune_cudnn_conv2d, tune_cudnn_conv2d_typed, (loads libcudnn.so.9,
 *                        tune_cudnn_describe, tune_cudnn_version      libcuda.so.1)
 *   libtune_rocblas.so   tune_rocblas_sgemm, tune_rocblas_describe,  (loads librocblas.so)
 *                        tune_rocblas_version
 *   libtune_hipblaslt.so tune_hipblaslt_gemm,                        (loads libhipblaslt.so,
 *                        tune_hipblaslt_describe, tune_hipblaslt_version  libamdhip64.so)
 *   libtune_miopen.so    tune_miopen_conv2d, tune_miopen_conv2d_typed, (loads libMIOpen.so,
 *                        tune_miopen_describe, tune_miopen_version    libamdhip64.so)
 *
 * The shims need nothing of CUDA or ROCm to build or to load: each opens its vendor library
 * with dlopen at its first call, so preloading a shim never touches a GPU. Pointers are device
 * pointers (cuMemAlloc/hipMalloc); `stream` is the CUstream/hipStream_t the call is queued on
 * (the caller's context is current on the calling thread). Tensors are float32 in the canonical
 * layouts of tune's workloads (GEMM row-major; conv2d NCHW input, KCRS weights, NKPQ output);
 * arithmetic is FP32 (TF32 and other reduced-precision modes are switched off).
 *
 * Every operator returns 0 on success or one of the negative TUNE_GPU_* codes; the last failure
 * is described by tune_gpu_last_error() and by the shim's describe line. */
#ifndef TUNE_GPU_RUNTIME_H_
#define TUNE_GPU_RUNTIME_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The epilogue a call applies: per output column of a GEMM, per output channel of a conv2d. */
#define TUNE_GPU_EPILOGUE_NONE 0
#define TUNE_GPU_EPILOGUE_BIAS 1
#define TUNE_GPU_EPILOGUE_RELU 2
#define TUNE_GPU_EPILOGUE_BIAS_RELU 3

/* How it is applied: a small kernel of the shim after the library call, on the same stream
 * (separate), or the library's own fused epilogue (cublasLt's epilogues, cuDNN's
 * cudnnConvolutionBiasActivationForward). */
#define TUNE_GPU_EPILOGUE_SEPARATE 0
#define TUNE_GPU_EPILOGUE_LIBRARY 1

/* conv2d `algo`: the library's own search (cudnnFindConvolutionForwardAlgorithm,
 * miopenFindConvolutionForwardAlgorithm); 0..7 name a cudnnConvolutionFwdAlgo_t. */
#define TUNE_GPU_ALGO_SEARCH (-1)

/* Failure codes. */
#define TUNE_GPU_NOT_FOUND (-1)     /* a library could not be opened (dlopen failed) */
#define TUNE_GPU_UNSUPPORTED (-2)   /* no implementation for this shape and these knobs */
#define TUNE_GPU_LIBRARY_ERROR (-3) /* the library or the driver failed (status in the message) */
#define TUNE_GPU_BAD_ARGUMENT (-4)  /* a shape, knob or pointer out of range */
#define TUNE_GPU_LT_NOT_FOUND (-5)  /* the library epilogue of cuBLAS needs libcublasLt */
#define TUNE_GPU_ALGO_UNSUPPORTED (-6) /* the library rejects the requested algorithm here */

/* C[M][N] = A[M][K] x B[K][N] (+ bias[N]) (ReLU), row-major, through cuBLAS's column-major sgemm
 * (C^T = B^T A^T) with CUBLAS_DEFAULT_MATH, or cublasLtMatmul with CUBLAS_COMPUTE_32F and an
 * epilogue when epilogue_mode is TUNE_GPU_EPILOGUE_LIBRARY and there is an epilogue. */
int32_t tune_cublas_sgemm(const float* A, const float* B, const float* bias_or_null, float* C,
                          int64_t M, int64_t N, int64_t K, int32_t epilogue, int32_t epilogue_mode,
                          void* stream);

/* Element types of tune_cublaslt_gemm and tune_cudnn_conv2d_typed: the workload's dtype=
 * (inputs) and out=. */
#define TUNE_GPU_TYPE_F32 0
#define TUNE_GPU_TYPE_TF32 1 /* inputs only: f32 storage, multiplied on TF32 tensor cores */
#define TUNE_GPU_TYPE_F16 2
#define TUNE_GPU_TYPE_BF16 3
#define TUNE_GPU_TYPE_FP8E4M3 4
#define TUNE_GPU_TYPE_FP8E5M2 5
#define TUNE_GPU_TYPE_I8 6  /* inputs only (s8 x s8, cuBLASLt's IMMA kernels: TN, i32 output) */
#define TUNE_GPU_TYPE_I32 7 /* outputs only: the raw integer sums */

/* C[M][N] = epilogue(scale_a * scale_b * A[M][K] x B) (+ bias[N], of C's type) (ReLU) through
 * cublasLtMatmul, f32 accumulation: A and B of `in_type`, B stored [K][N] (nt = 0) or [N][K]
 * (nt = 1, cuBLASLt's TN order, the one its fp8 kernels take), C of `out_type`. `algo` picks the
 * algo-th of the heuristic's first eight algorithms for this problem (0: its first choice;
 * TUNE_GPU_ALGO_UNSUPPORTED beyond those it returns). The scales are device pointers to one f32
 * each, read by fp8 and ignored (may be NULL) otherwise. i8 inputs sum in i32 into an i32 C
 * (CUBLAS_COMPUTE_32I), nt = 1 and no epilogue (cuBLASLt's IMMA kernels). */
int32_t tune_cublaslt_gemm(const void* A, const void* B, const void* bias_or_null, void* C,
                           const float* scale_a, const float* scale_b, int64_t M, int64_t N,
                           int64_t K, int32_t in_type, int32_t out_type, int32_t nt,
                           int32_t epilogue, int32_t algo, void* stream);

/* y[N][K][P][Q] = conv(x[N][C][H][W], w[K][C][R][S]) (+ bias[K]) (ReLU) with cuDNN's
 * convolution (CUDNN_FMA_MATH: no TF32). The library epilogue is
 * cudnnConvolutionBiasActivationForward (a bias without ReLU needs algorithm 1,
 * IMPLICIT_PRECOMP_GEMM; a ReLU without bias adds a zero bias). */
int32_t tune_cudnn_conv2d(const float* x, const float* w, const float* bias_or_null, float* y,
                          int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R,
                          int64_t S, int64_t stride, int64_t pad, int64_t dilation,
                          int32_t epilogue, int32_t epilogue_mode, int32_t algo, void* stream);

/* y[N][P][Q][K] = epilogue(scale_x * scale_w * conv(x[N][H][W][C], w[K][R][S][C]) + bias[K])
 * (NHWC input, KRSC weights, NPQK output) through cuDNN's graph API: the convolution and its
 * epilogue (scales, bias of y's type, ReLU) are one operation graph, run by one execution plan
 * with cudnnBackendExecute on `stream`. Inputs of `in_type`, y of `out_type` (TUNE_GPU_TYPE_*):
 * f16 -> f16|f32, bf16 -> bf16|f32 and f32 -> f32 (tensor cores off) or tf32 -> f32 (TF32
 * allowed), f32 accumulation; fp8e4m3|fp8e5m2 -> bf16|f32 and i8 -> f32 (s8 x s8 summed in i32)
 * with the scales, device pointers to one f32 each (NULL otherwise); i8 -> i32 is the raw sums
 * (no scales). `algo` picks the algo-th engine configuration of cuDNN's heuristic (mode A) that
 * finalizes into a plan, engines computing through FFT or Winograd transforms, reduced-precision
 * reductions or (for f32 data) down-converted inputs passed over: 0 its first choice;
 * TUNE_GPU_ALGO_UNSUPPORTED beyond those; TUNE_GPU_UNSUPPORTED when cuDNN has none for the
 * graph. The describe line names the engine (global index, knobs) that ran. */
int32_t tune_cudnn_conv2d_typed(const void* x, const void* w, const void* bias_or_null, void* y,
                                const float* scale_x, const float* scale_w, int64_t N, int64_t C,
                                int64_t H, int64_t W, int64_t K, int64_t R, int64_t S,
                                int64_t stride, int64_t pad, int64_t dilation, int32_t in_type,
                                int32_t out_type, int32_t epilogue, int32_t algo, void* stream);

/* The ROCm counterparts: rocblas_sgemm and MIOpen's convolution (algo must be
 * TUNE_GPU_ALGO_SEARCH: MIOpen's find). They have no epilogue: any other than NONE is
 * TUNE_GPU_UNSUPPORTED. */
int32_t tune_rocblas_sgemm(const float* A, const float* B, const float* bias_or_null, float* C,
                           int64_t M, int64_t N, int64_t K, int32_t epilogue, int32_t epilogue_mode,
                           void* stream);
int32_t tune_miopen_conv2d(const float* x, const float* w, const float* bias_or_null, float* y,
                           int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R,
                           int64_t S, int64_t stride, int64_t pad, int64_t dilation,
                           int32_t epilogue, int32_t epilogue_mode, int32_t algo, void* stream);

/* The FNUZ encodings of fp8 (AMD gfx942's; common/element_type.h), inputs of tune_hipblaslt_gemm
 * beside the TUNE_GPU_TYPE_* codes above. */
#define TUNE_GPU_TYPE_FP8E4M3FNUZ 8
#define TUNE_GPU_TYPE_FP8E5M2FNUZ 9

/* tune_cublaslt_gemm's product and arguments through hipblasLtMatmul (hipBLASLt 0.6 or later,
 * ROCm 6.0 on): f32 accumulation in HIPBLAS_COMPUTE_32F (never xf32), the epilogue fused
 * (HIPBLASLT_EPILOGUE_BIAS, _RELU or _RELU_BIAS; the bias of C's type), `algo` the algo-th of the
 * heuristic's first eight algorithms (TUNE_GPU_ALGO_UNSUPPORTED beyond those it returns;
 * TUNE_GPU_UNSUPPORTED when it returns none). Served: f32 -> f32, f16 -> f16|f32,
 * bf16 -> bf16|f32; i8 -> i32 (s8 x s8 summed in HIPBLAS_COMPUTE_32I), NN or NT, no epilogue;
 * fp8e4m3fnuz|fp8e5m2fnuz (gfx942) and fp8e4m3|fp8e5m2 (gfx950 and later) -> f16|bf16|f32 with
 * the two scales (device pointers, HIPBLASLT_MATMUL_DESC_A/B_SCALE_POINTER). Any other
 * combination of known types, tf32 inputs among them, is TUNE_GPU_UNSUPPORTED with a message
 * naming these. Never run on an AMD GPU. */
int32_t tune_hipblaslt_gemm(const void* A, const void* B, const void* bias_or_null, void* C,
                            const float* scale_a, const float* scale_b, int64_t M, int64_t N,
                            int64_t K, int32_t in_type, int32_t out_type, int32_t nt,
                            int32_t epilogue, int32_t algo, void* stream);

/* y[N][P][Q][K] = conv(x[N][H][W][C], w[K][R][S][C]) (NHWC input, KRSC weights, NPQK output;
 * tune_cudnn_conv2d_typed's arguments) through MIOpen's find and miopenConvolutionForward, the
 * tensors described by their NHWC strides. Served: f32 -> f32, f16 -> f16, bf16 -> bf16 and
 * i8 -> i32 (the raw sums); `algo` must be TUNE_GPU_ALGO_SEARCH (TUNE_GPU_ALGO_UNSUPPORTED
 * otherwise). MIOpen's call has no fused epilogue, and its alpha is a host scalar while the scales
 * are device pointers that only the stream may read: an epilogue and every scaled form
 * (i8 -> f32, fp8), like any other combination, are TUNE_GPU_UNSUPPORTED with a message naming
 * what is served. Never run on an AMD GPU. */
int32_t tune_miopen_conv2d_typed(const void* x, const void* w, const void* bias_or_null, void* y,
                                 const float* scale_x, const float* scale_w, int64_t N, int64_t C,
                                 int64_t H, int64_t W, int64_t K, int64_t R, int64_t S,
                                 int64_t stride, int64_t pad, int64_t dilation, int32_t in_type,
                                 int32_t out_type, int32_t epilogue, int32_t algo, void* stream);

/* Writes a NUL-terminated line on how the library ran in this process into buf[size] (version,
 * the algorithm chosen, the math mode, the last error); returns 0. Loads nothing. */
int32_t tune_cublas_describe(char* buf, int64_t size);
int32_t tune_cudnn_describe(char* buf, int64_t size);
int32_t tune_rocblas_describe(char* buf, int64_t size);
int32_t tune_miopen_describe(char* buf, int64_t size);
int32_t tune_hipblaslt_describe(char* buf, int64_t size);

/* Loads the vendor library (no GPU is opened) and writes its version alone ("13.1.0", "9.14.0")
 * into buf[size], NUL-terminated; returns 0, or TUNE_GPU_NOT_FOUND when the library does not
 * load (tune_gpu_last_error says why). Worker fingerprints carry it. hipBLASLt, whose API tells
 * its version only through a handle on a device, reports its file's version
 * (libhipblaslt.so.0.8.60200: "0.8.60200"). */
int32_t tune_cublas_version(char* buf, int64_t size);
int32_t tune_cudnn_version(char* buf, int64_t size);
int32_t tune_rocblas_version(char* buf, int64_t size);
int32_t tune_miopen_version(char* buf, int64_t size);
int32_t tune_hipblaslt_version(char* buf, int64_t size);

/* The last failure of any GPU shim in this process ("" when none), e.g. "libcublas.so.13:
 * cannot open shared object file". Valid until the calling thread's next call of it. */
const char* tune_gpu_last_error(void);

/* The PTX text (sm_80, PTX ISA 7.0) of the shim's epilogue kernel: `tune_bias_relu(float* y,
 * const float* bias, uint64 total, uint64 channels, uint64 inner, uint32 mode)` applies
 * y[i] = relu?(y[i] + bias[(i / inner) % channels]) with mode bit 0 bias, bit 1 ReLU. */
const char* tune_cuda_epilogue_ptx(void);

#ifdef __cplusplus
}
#endif

#endif /* TUNE_GPU_RUNTIME_H_ */
