// Measured single-core floating-point peak: the yardstick next to which kernel GFLOPS are read.
#pragma once

#include <optional>

namespace tune::bench {

/// Single-thread fp32 FMA throughput in GFLOPS using 256-bit (AVX2+FMA) vectors, measured as
/// the best of `trials` timed runs of independent FMA chains. nullopt without AVX2/FMA.
std::optional<double> MeasureFmaPeakAvx2(int trials = 5);
/// The same with 512-bit (AVX-512F) vectors; nullopt without AVX-512F.
std::optional<double> MeasureFmaPeakAvx512(int trials = 5);

}  // namespace tune::bench
