// conv2d through external libraries, as candidates beside generated kernels (-libs=...):
//
//   conv2d.cpu.im2col_openblas   per image, generated im2col into a column buffer, then
//                                cblas_sgemm (weights[K][C*R*S] x columns). Knobs `im2col`: 0
//                                explicit; 1 implicit (1x1, stride 1, no padding: sgemm reads
//                                the input as it is); `pq_block`: output positions per column
//                                block (the column buffer is C*R*S x pq_block); `epilogue` as
//                                for gemm.cpu.openblas.
//   conv2d.cpu.dnnl              oneDNN's convolution primitive, in every layout (NCHW, NHWC,
//                                NCHW<b>c) and in f32, bf16, i8 and u8i8 (with their scales and
//                                requantisation). Knobs `algorithm`: 0 direct, 2 oneDNN's choice,
//                                1 Winograd (f32, 3x3, stride 1, dilation 1 only); `layout`: 0
//                                the tensors given to oneDNN in the workload's layout; 1 oneDNN's
//                                preferred layouts with the reorders of input, weights and output
//                                timed inside the call; `epilogue` (f32 NCHW): 0 generated pass,
//                                1 oneDNN's bias and ReLU post-op (fused in the other forms, but
//                                after a scaled product).
//
// The kernels keep the canonical C ABI of the workload; -threads sets the library's threads.
#pragma once

#include "codegen/templates/template.h"

namespace tune {

extern const KernelTemplate kConv2dCpuIm2colOpenblas;
extern const KernelTemplate kConv2dCpuDnnl;

}  // namespace tune
