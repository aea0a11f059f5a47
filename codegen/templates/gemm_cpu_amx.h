// gemm.cpu.amx: bf16, i8 and u8i8 GEMM on Intel's AMX tiles (tdpbf16ps, tdpbssd, tdpbusd), for
// CPUs with AMX (Sapphire Rapids and later). The loop nest is in gemm_cpu_amx.cc.
#pragma once

#include "codegen/templates/template.h"

namespace tune {

extern const KernelTemplate kGemmCpuAmx;

}  // namespace tune
