// conv2d through GPU vendor libraries, as candidates beside generated kernels (-libs=...):
//
//   conv2d.cuda.cudnn    cuDNN's convolution through libtune_cudnn.so (cuda targets,
//                        -libs=cudnn). Knobs `algorithm`: -1 cuDNN's own search
//                        (cudnnFindConvolutionForwardAlgorithm, once per shape), 0..7 a
//                        cudnnConvolutionFwdAlgo_t (0 IMPLICIT_GEMM, 1 IMPLICIT_PRECOMP_GEMM,
//                        2 GEMM, 3 DIRECT, 4 FFT, 5 FFT_TILING, 6 WINOGRAD, 7 WINOGRAD_NONFUSED;
//                        4..7 only where cuDNN can run them: stride 1 and dilation 1, 3x3 for
//                        6, 3x3 or 5x5 for 7); `epilogue` (when the workload has one): 0
//                        cudnnConvolutionForward, then the shim's bias/ReLU kernel; 1
//                        cudnnConvolutionBiasActivationForward (a bias without ReLU needs
//                        algorithm -1 or 1, as cuDNN requires).
//   conv2d.rocm.miopen   MIOpen's convolution through libtune_miopen.so (rocm targets,
//                        -libs=miopen): the algorithm miopenFindConvolutionForwardAlgorithm
//                        chooses (`algorithm` -1 only); workloads without an epilogue only.
//
// The kernel is host code with the GPU host ABI: `int32_t f(float* input, float* weight,
// [float* bias,] float* output, void* stream)` on device pointers; it returns the shim's code.
#pragma once

#include "codegen/templates/template.h"

namespace tune {

extern const KernelTemplate kConv2dCudaCudnn;
extern const KernelTemplate kConv2dRocmMiopen;

}  // namespace tune
