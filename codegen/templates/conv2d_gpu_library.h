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
//   conv2d.cuda.cudnn_graph
//                        cuDNN's typed NHWC convolution through its graph API
//                        (tune_cudnn_conv2d_typed of libtune_cudnn.so; cuda targets, -libs=cudnn):
//                        layout=NHWC with dtype=f32|tf32|f16|bf16|i8|fp8e4m3|fp8e5m2 and their
//                        outputs, the epilogue and the scales fused into the graph (i8 with out=i32
//                        and a ReLU alone is refused: cuDNN has no engine for it). Knob `algo`: the
//                        index among cuDNN's heuristic engine configurations that finalize (0 its
//                        first choice). conv2d.cuda.cudnn keeps NCHW f32 and its knobs.
//   conv2d.rocm.miopen   MIOpen's convolution through libtune_miopen.so (rocm targets,
//                        -libs=miopen): the algorithm miopenFindConvolutionForwardAlgorithm
//                        chooses (`algorithm` -1 only); workloads without an epilogue only.
//   conv2d.rocm.miopen_nhwc
//                        MIOpen's typed convolution in layout=NHWC (tune_miopen_conv2d_typed of
//                        libtune_miopen.so; rocm targets, -libs=miopen): dtype=f32|f16|bf16 into
//                        their own type and i8 with out=i32 (the raw sums), no epilogue and no
//                        scaled form (MIOpen's alpha is a host scalar, the scales device
//                        pointers). The algorithm MIOpen's find chooses (`algorithm` -1 only).
//                        Built and tested without an AMD GPU; never run on one.
//
// The kernel is host code with the GPU host ABI: `int32_t f(float* input, float* weight,
// [float* bias,] float* output, void* stream)` on device pointers (the element types follow the
// workload's dtype and out=; scale pointers follow the output where it takes them); it returns
// the shim's code.
#pragma once

#include "codegen/templates/template.h"

namespace tune {

extern const KernelTemplate kConv2dCudaCudnn;
extern const KernelTemplate kConv2dCudaCudnnGraph;
extern const KernelTemplate kConv2dRocmMiopen;
extern const KernelTemplate kConv2dRocmMiopenNhwc;

}  // namespace tune
