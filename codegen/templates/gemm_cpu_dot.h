// gemm.cpu.dot: bf16, i8 and u8i8 GEMM on the CPU's vector dot-product instructions: AVX512-BF16
// vdpbf16ps (pairs of bf16 into f32) and AVX512-VNNI vpdpbusd (quads of u8 x s8 into i32), the
// same sums in plain vector code on CPUs without them. The loop nest is in gemm_cpu_dot.cc.
#pragma once

#include "codegen/templates/template.h"

namespace tune {

extern const KernelTemplate kGemmCpuDot;

}  // namespace tune
