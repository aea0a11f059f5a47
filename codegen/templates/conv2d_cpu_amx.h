// conv2d.cpu.amx: bf16, i8 and u8i8 convolutions on Intel's AMX tiles (tdpbf16ps, tdpbssd,
// tdpbusd), for CPUs with AMX (Sapphire Rapids and later), in NCHW, NCHW<b>c and NHWC: an
// implicit GEMM whose rows are output pixels of a phased, padded copy of the input (so that every
// A tile is one strided tile load) and whose columns are output channels, the weights packed into
// VNNI panels (cpu_matrix_gemm.h). The loop nest is in conv2d_cpu_amx_nest.cc.
#pragma once

#include "codegen/templates/template.h"

namespace tune {

extern const KernelTemplate kConv2dCpuAmx;

}  // namespace tune
