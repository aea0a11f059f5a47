// What oneDNN 2.6 computes on this host, for the tests that run it: bf16 from AVX-512 (its
// avx512_core: F, BW, VL and DQ; bf16 instructions are optional), exact sums of 8-bit inputs
// from VNNI (AVX512-VNNI or AVX-VNNI). Where the CPU lacks them (a Zen 3 core has AVX2 only),
// the dnnl shim and tune-bench's oneDNN baseline refuse those types as unsupported
// (runtime/tune_runtime.h), and these tests expect the refusals.
#pragma once

#include "common/element_type.h"
#include "common/host_cpu.h"

namespace tune::testing {

inline bool DnnlRunsBf16() {
  const HostCpu& cpu = GetHostCpu();
  return cpu.HasFeature("avx512f") && cpu.HasFeature("avx512bw") && cpu.HasFeature("avx512vl") &&
         cpu.HasFeature("avx512dq");
}

inline bool DnnlSumsInt8Exactly() {
  const HostCpu& cpu = GetHostCpu();
  return cpu.HasFeature("avx512vnni") || cpu.HasFeature("avxvnni");
}

/// Whether oneDNN computes products of `dtype`'s inputs on this host.
inline bool DnnlRuns(Dtype dtype) {
  switch (dtype) {
    case Dtype::kBf16:
      return DnnlRunsBf16();
    case Dtype::kI8:
    case Dtype::kU8I8:
      return DnnlSumsInt8Exactly();
    default:
      return true;
  }
}

}  // namespace tune::testing
