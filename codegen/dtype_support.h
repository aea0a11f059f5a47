// Which element types (workload field dtype=) each target's hardware runs: the refusal matrix
// that tune-daemon checks at submit time and tune-compile before it builds.
//
//   target                   f32 tf32 f16 bf16 i8 u8i8 fp8e4m3 fp8e5m2 *fnuz
//   cuda -arch=sm_80, sm_86   y   y    y   y    y   y    -       -       -
//   cuda -arch=sm_89, sm_90,  y   y    y   y    y   y    y       y       -
//             sm_90a
//   rocm -mcpu=gfx90a         y   -    y   y    y   -    -       -       -
//   rocm -mcpu=gfx942         y   -    y   y    y   -    -       -       y
//   rocm -mcpu=gfx1100        y   -    y   y    y   y    -       -       -
//   llvm (x86-64)             y   -    (1) y    y   y    -       -       -
//
// FP8 tensor cores arrive with sm_89 (Ada) and sm_90 (Hopper); the FNUZ encodings are AMD's
// (gfx942's MFMA), the OCP ones NVIDIA's (AMD runs them from gfx950 on, which tune does not
// target). CDNA's integer MFMA is s8 x s8 only; RDNA3's WMMA takes unsigned operands too.
// tf32 is a tensor-core reading of f32: gfx942's xf32 is not known to round alike, and CPUs
// have none. (1) f16 on x86-64 only where the -mcpu has AVX512-FP16 (Sapphire Rapids and later);
// bf16, i8 and u8i8 run on every x86-64 CPU, with AVX512-BF16, VNNI or AMX where it has them.
//
// A dtype the hardware runs still needs a template that builds it (KernelTemplate::dtypes).
#pragma once

#include "absl/status/status.h"
#include "common/element_type.h"
#include "common/target.h"
#include "common/workload.h"

namespace tune {

/// The dtypes the target's hardware runs (the table above); empty for an unknown GPU arch.
DtypeSet TargetDtypes(const Target& target);

/// OK when the target runs the workload's dtype (or names a GPU arch tune does not know: that is
/// the target's error, which GpuArchFor names); otherwise InvalidArgument naming the dtype, the
/// target, why, and the dtypes it accepts:
///   "dtype=fp8e4m3 is not run on 'cuda -arch=sm_80': FP8 tensor cores need sm_89 or later;
///    accepted there: f32|tf32|f16|bf16|i8|u8i8"
absl::Status CheckDtypeOnTarget(const Workload& workload, const Target& target);

}  // namespace tune
