// GEMM through GPU vendor libraries, as candidates beside generated kernels (-libs=...):
//
//   gemm.cuda.cublas    cuBLAS's sgemm through libtune_cublas.so (cuda targets, -libs=cublas).
//                       Knob `epilogue` (when the workload has one): 0 cublasSgemm, then the
//                       shim's bias/ReLU kernel on the same stream; 1 cublasLtMatmul with the
//                       epilogue fused (CUBLASLT_EPILOGUE_BIAS, _RELU or _RELU_BIAS).
//   gemm.cuda.cublaslt  cublasLtMatmul through libtune_cublas.so (cuda targets, -libs=cublas) for
//                       tf32, f16, bf16 and fp8 (e4m3, e5m2; layout=NT with K and N
//                       multiples of 16), NN and NT, f32 accumulation, the epilogue fused.
//                       Knob `algo`: the n-th of cuBLASLt's heuristic algorithms for the problem.
//   gemm.rocm.rocblas   rocblas_sgemm through libtune_rocblas.so (rocm targets, -libs=rocblas);
//                       no knobs, workloads without an epilogue only.
//   gemm.rocm.hipblaslt hipblasLtMatmul through libtune_hipblaslt.so (rocm targets,
//                       -libs=hipblaslt) for f16, bf16, i8 (out=i32, no epilogue) and fp8 (the
//                       FNUZ encodings on gfx942, the OCP ones where the target runs them), NN
//                       and NT, f32 accumulation, the epilogue fused. Knob `algo`: the n-th of
//                       hipBLASLt's heuristic algorithms for the problem. Built and tested
//                       without an AMD GPU; never run on one.
//
// The kernel is host code with the GPU host ABI: `int32_t f(A, B, [bias,] C, [scale_A, scale_B,]
// void* stream)` on device pointers of the workload's element types; it returns the shim's code
// (tune_gpu_runtime.h).
#pragma once

#include "codegen/templates/template.h"

namespace tune {

extern const KernelTemplate kGemmCudaCublas;
extern const KernelTemplate kGemmCudaCublasLt;
extern const KernelTemplate kGemmRocmRocblas;
extern const KernelTemplate kGemmRocmHipblasLt;

}  // namespace tune
