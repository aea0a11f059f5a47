// GEMM through external libraries, as candidates beside generated kernels (-libs=...):
//
//   gemm.cpu.openblas   cblas_sgemm through libtune_openblas.so. Knob `epilogue` (when the
//                       workload has one): 0 sgemm then a generated bias/ReLU pass; 1 the bias
//                       broadcast into C first and added by sgemm (beta = 1), ReLU generated.
//   gemm.cpu.dnnl       oneDNN's matmul primitive through libtune_dnnl.so. Knobs `layout`: 0 B
//                       as given; 1 B reordered into oneDNN's preferred layout on every call (the
//                       reorder is timed); `epilogue`: 0 generated pass; 1 oneDNN's bias and
//                       ReLU post-op.
//
// The kernels keep the canonical C ABI of the workload; -threads sets the library's threads.
#pragma once

#include "codegen/templates/template.h"

namespace tune {

extern const KernelTemplate kGemmCpuOpenblas;
extern const KernelTemplate kGemmCpuDnnl;

}  // namespace tune
