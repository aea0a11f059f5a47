// What the CPU templates need to know about a target's vector unit: how many float lanes one
// register holds and how many registers there are. Derived from the host's CPUID for
// `-mcpu=native`, else from a table of LLVM CPU names.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/target.h"

namespace tune {

struct CpuVectorInfo {
  int lanes = 4;       // float32 lanes of one vector register: 16 (AVX-512), 8 (AVX), 4 (SSE)
  int registers = 16;  // architectural vector registers: 32 with AVX-512, else 16
  bool fma = false;    // fused multiply-add instructions exist
  // The matrix instructions (common/host_cpu.h's features of the same names).
  bool avx512bf16 = false;  // vdpbf16ps
  bool avx512vnni = false;  // vpdpbusd
  bool avx512fp16 = false;
  bool amx_bf16 = false;  // AMX tiles with tdpbf16ps
  bool amx_int8 = false;  // AMX tiles with tdpbssd / tdpbusd
};

/// How the channels of a block (layout=NCHW<b>c) map onto vectors of `lanes` floats: one
/// vector of `width` = min(block, lanes) lanes, `per_block` = block / width of them.
struct BlockVectors {
  int64_t width = 1, per_block = 1;
};
BlockVectors VectorsOfBlock(int64_t block, int lanes);

/// The vector and matrix units of an LLVM CPU name ("znver4", "haswell", "x86-64-v3", ...). Unknown
/// names get the SSE baseline every x86-64 CPU has.
CpuVectorInfo CpuVectorInfoForName(std::string_view cpu);

/// The vector unit of a CPU target: the host's features when the target says `-mcpu=native`,
/// else CpuVectorInfoForName(target.cpu).
CpuVectorInfo CpuVectorInfoFor(const Target& target);

}  // namespace tune
