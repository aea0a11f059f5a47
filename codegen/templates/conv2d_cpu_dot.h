// conv2d.cpu.dot: bf16, f16, i8 and u8i8 convolutions on the CPU's vector dot-product
// instructions (AVX512-BF16 vdpbf16ps, AVX512-VNNI vpdpbusd; AVX512-FP16's conversions for f16),
// in NCHW, NCHW<b>c and NHWC: an implicit GEMM whose rows are output pixels and whose columns are
// output channels, B the weights packed into VNNI panels (cpu_matrix_gemm.h). The loop nest is
// in conv2d_cpu_dot_nest.cc.
#pragma once

#include "codegen/templates/template.h"

namespace tune {

extern const KernelTemplate kConv2dCpuDot;

}  // namespace tune
