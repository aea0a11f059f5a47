// conv2d.rocm.mfma and conv2d.rocm.wmma: convolutions in layout=NHWC (KRSC weights, NPQK output)
// as implicit GEMMs (tensor_core_gemm.h's ImplicitGemm) on gemm.rocm.mfma's kernel
// (gemm_rocm_mfma.h): of f16, bf16, i8 and (gfx942) the FNUZ 8-bit floats on the MFMA matrix
// engines of gfx90a and gfx942, and of f16, bf16, i8 and u8i8 on RDNA3's WMMA (gfx1100).
//
// The GEMM view is conv2d.cuda.mma's: m = the N*P*Q output pixels, n = the K output channels,
// k = the R*S*C filter taps in (r, s, c) order; B is the weights as they lie ([K][R*S*C]) and C
// the output ([N*P*Q][K]). Each global read of a step gathers a pixel's `copy` bytes of one tap's
// channels from the input (clamped into the image) into registers, and the store into LDS writes
// zeros where the window reaches into the padding. A read stays within one tap's channels, so
// its width divides C's bytes (element reads where C's bytes are not a multiple of 4). Knobs,
// seeds and the epilogue are the GEMM template's. Never run on an AMD GPU: checked on the
// simulator and by inspecting its code objects.
#pragma once

#include "codegen/templates/template.h"

namespace tune {

/// conv2d.rocm.mfma, for rocm -mcpu=gfx90a and gfx942.
extern const KernelTemplate kConv2dRocmMfma;
/// conv2d.rocm.wmma, for rocm -mcpu=gfx1100.
extern const KernelTemplate kConv2dRocmWmma;

}  // namespace tune
