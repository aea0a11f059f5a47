// gemm.gpu.tiled: shared-memory tiled SGEMM for CUDA and ROCm GPUs.
//
// Each block computes a bm x bn tile of C: per reduction step of bk, the threads copy the A
// tile (stored transposed, As[bk][bm], so a thread reads its tm rows as one vector) and the B
// tile (Bs[bk][bn]) from global memory with vec-wide loads, then each thread multiplies its
// tm x tn register tile over the step, fully unrolled. With 2 stages the next step's tiles are
// loaded into registers while the current step computes and stored to the other shared
// buffer (one barrier per step). With splitk > 1 the threads form splitk groups that share each
// step's reduction, summed through shared memory before the store (the skinny-shape path: few
// rows, more threads along N and K). Edge tiles use clamped loads (zero outside A and B) and
// guarded stores; the epilogue (bias, relu, bias_relu) is applied at the store.
//
// Knobs: bm, bn, tm, tn, bk, stages, vec, splitk. One entry for cuda and rocm targets
// (TemplateTargets::kGpu).
#pragma once

#include "codegen/templates/template.h"

namespace tune {

/// gemm.gpu.tiled, for cuda and rocm targets.
extern const KernelTemplate kGemmGpuTiled;

}  // namespace tune
