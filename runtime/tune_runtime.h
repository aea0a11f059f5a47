/* The runtime shims of tune's library candidates: a C ABI, one function per operator, through
 * which generated kernels call external libraries (OpenBLAS, oneDNN). A kernel built by tune
 * calls these from its IR (a call-extern node); workers preload the shim libraries
 * (`tune-server --libs openblas,dnnl`), and libraries built by tune-compile link them.
 *
 *   libtune_openblas.so   tune_openblas_sgemm, tune_openblas_describe,  (needs libopenblas0)
 *                         tune_openblas_version
 *   libtune_dnnl.so       tune_dnnl_matmul(_typed), tune_dnnl_conv2d(_typed),
 *                         tune_dnnl_describe, tune_dnnl_version          (needs libdnnl2)
 *
 * Every operator function returns 0 on success and a positive code on failure; the kernel that
 * called it returns that code, and the describe function of the same library says what went
 * wrong. Tensors are float32 in the canonical layouts of tune's workloads (GEMM row-major;
 * conv2d NCHW input, KCRS weights, NKPQ output). `threads` is the kernel's thread count
 * (the target's -threads). Every function is thread-safe. */
#ifndef TUNE_RUNTIME_H_
#define TUNE_RUNTIME_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* post_ops bits: the library adds the bias (per output column of a GEMM, per output channel of
 * a convolution) and/or applies ReLU after the operator, in one pass. */
#define TUNE_POST_BIAS 1
#define TUNE_POST_RELU 2

/* Failure codes. */
#define TUNE_RUNTIME_BAD_ARGUMENT 1  /* a shape, stride or knob out of range */
#define TUNE_RUNTIME_UNSUPPORTED 2   /* the library has no implementation for this case */
#define TUNE_RUNTIME_LIBRARY_ERROR 3 /* the library failed (see *_describe) */

/* C[M][ldc] = A[M][lda] x B[K][ldb] + beta * C (row-major, cblas_sgemm). */
int32_t tune_openblas_sgemm(const float* A, const float* B, float* C, int64_t M, int64_t N,
                            int64_t K, int64_t lda, int64_t ldb, int64_t ldc, float beta,
                            int32_t threads);

/* C[M][N] = A[M][K] x B[K][N] (+ bias[N]) (ReLU), with oneDNN's matmul primitive. layout 0: B
 * as given (plain); 1: B reordered into the layout oneDNN prefers on every call (the reorder is
 * part of the call's time). `bias` may be C when post_ops has no TUNE_POST_BIAS. */
int32_t tune_dnnl_matmul(const float* A, const float* B, const float* bias, float* C, int64_t M,
                         int64_t N, int64_t K, int32_t layout, int32_t post_ops, int32_t threads);

/* Element types of tune_dnnl_matmul_typed. */
#define TUNE_DNNL_F32 0
#define TUNE_DNNL_BF16 1
#define TUNE_DNNL_S8 2
#define TUNE_DNNL_U8 3
#define TUNE_DNNL_S32 4

/* C[M][N] = scale (A[M][K] x B) (+ bias[N]) (ReLU), with oneDNN's matmul primitive, in the
 * element types given (TUNE_DNNL_*: A of a_type, B of b_type, C and bias of c_type); B is
 * B[K][N], or with b_transposed B[N][K]. `scaled` 0: scale 1 (scale_a, scale_b and zero_point
 * are not read); 1: scale = *scale_a * *scale_b (each one f32); TUNE_DNNL_REQUANT: C (of
 * TUNE_DNNL_S8) = saturate(nearest(*scale_a * (A x B) + *zero_point)), scale_b not read, no
 * post_ops. layout and post_ops as tune_dnnl_matmul's. 8-bit inputs (TUNE_DNNL_S8, TUNE_DNNL_U8)
 * on a CPU without VNNI (AVX512-VNNI or AVX-VNNI) are TUNE_RUNTIME_UNSUPPORTED: oneDNN's kernels
 * there add u8 x s8 products in saturating 16-bit pairs, so their sums are not exact. */
#define TUNE_DNNL_REQUANT 2
int32_t tune_dnnl_matmul_typed(const void* A, const void* B, const void* bias, void* C,
                               const float* scale_a, const float* scale_b,
                               const int32_t* zero_point, int64_t M, int64_t N, int64_t K,
                               int32_t a_type, int32_t b_type, int32_t c_type, int32_t b_transposed,
                               int32_t scaled, int32_t layout, int32_t post_ops, int32_t threads);

/* dst[N][K][P][Q] = conv(src[N][C][H][W], weights[K][C][R][S]) (+ bias[K]) (ReLU), with
 * oneDNN's convolution primitive. algorithm 0: direct, 1: Winograd, 2: oneDNN's choice.
 * layout 0: plain NCHW tensors given to the primitive; 1: the primitive's preferred (blocked)
 * layouts, with the reorders of src, weights and dst inside the call. */
int32_t tune_dnnl_conv2d(const float* src, const float* weights, const float* bias, float* dst,
                         int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R,
                         int64_t S, int64_t stride, int64_t pad, int64_t dilation,
                         int32_t algorithm, int32_t layout, int32_t post_ops, int32_t threads);

/* Data layouts of tune_dnnl_conv2d_typed: NCHW (weights KCRS), NHWC (weights KRSC), or channels
 * in blocks of 4, 8 or 16 (input [N][C/b][H][W][b], weights [K/b][C/b][R][S][b][b] with the input
 * channel before the output channel innermost, output [N][K/b][P][Q][b]). */
#define TUNE_DNNL_NCHW 0
#define TUNE_DNNL_NHWC 1
/* dst = scale conv(src, weights) (+ bias[K]) (ReLU), with oneDNN's convolution primitive, in the
 * element types and scaling of tune_dnnl_matmul_typed (src of src_type, weights of wei_type, dst
 * and bias of dst_type) and the data layout `data_layout` (TUNE_DNNL_NCHW, TUNE_DNNL_NHWC, or the
 * block 4, 8 or 16). algorithm 0: direct, 2: oneDNN's choice. layout 0: the tensors given to the
 * primitive as they are; 1: the primitive's preferred layouts, with the reorders inside the call.
 * A combination that oneDNN computes only with its reference loops is TUNE_RUNTIME_UNSUPPORTED,
 * and so are 8-bit inputs on a CPU without VNNI (as for tune_dnnl_matmul_typed).
 * The scale and zero point are fixed when the primitive is made (oneDNN 2.6's convolutions take
 * run-time ones only in those loops): a call with new values makes a new primitive. */
int32_t tune_dnnl_conv2d_typed(const void* src, const void* weights, const void* bias, void* dst,
                               const float* scale_a, const float* scale_b,
                               const int32_t* zero_point, int64_t N, int64_t C, int64_t H,
                               int64_t W, int64_t K, int64_t R, int64_t S, int64_t stride,
                               int64_t pad, int64_t dilation, int32_t src_type, int32_t wei_type,
                               int32_t dst_type, int32_t data_layout, int32_t scaled,
                               int32_t algorithm, int32_t layout, int32_t post_ops,
                               int32_t threads);

/* Writes a NUL-terminated line describing the library as it runs in this process (version,
 * the kernel or ISA it chose, the last error if any) into buf[size]; returns 0. */
int32_t tune_openblas_describe(char* buf, int64_t size);
int32_t tune_dnnl_describe(char* buf, int64_t size);

/* Writes the library's version alone ("0.3.21", "2.6.0") into buf[size], NUL-terminated; returns
 * 0. Worker fingerprints carry it, so that records say which version measured them. */
int32_t tune_openblas_version(char* buf, int64_t size);
int32_t tune_dnnl_version(char* buf, int64_t size);

#ifdef __cplusplus
}
#endif

#endif /* TUNE_RUNTIME_H_ */
