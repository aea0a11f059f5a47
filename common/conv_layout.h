// Conversions between conv2d's plain layouts (NCHW activations, KCRS weights) and its blocked
// ones (NCHW<b>c activations, OIhw<b>i<b>o weights; Conv2dShape documents both), for the
// reference, the benchmarks and tests.
#pragma once

#include <cstdint>
#include <vector>

#include "common/workload.h"

namespace tune {

/// [N][C][H][W] -> [N][C/b][H][W][b]; `channels` must be a multiple of `block`.
std::vector<float> BlockActivations(const float* plain, int64_t n, int64_t channels, int64_t h,
                                    int64_t w, int64_t block);
/// [N][C/b][H][W][b] -> [N][C][H][W].
std::vector<float> UnblockActivations(const float* blocked, int64_t n, int64_t channels, int64_t h,
                                      int64_t w, int64_t block);
/// [K][C][R][S] -> [K/b][C/b][R][S][b (c)][b (k)].
std::vector<float> BlockWeights(const float* plain, const Conv2dShape& s);
/// [K/b][C/b][R][S][b (c)][b (k)] -> [K][C][R][S].
std::vector<float> UnblockWeights(const float* blocked, const Conv2dShape& s);

}  // namespace tune
