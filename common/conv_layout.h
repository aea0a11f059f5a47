// Conversions between conv2d's plain layouts (NCHW activations, KCRS weights) and its blocked
// ones (NCHW<b>c activations, OIhw<b>i<b>o weights) and channels-last ones (NHWC activations,
// KRSC weights; Conv2dShape documents all three), for the reference, the benchmarks and tests.
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

/// [N][C][H][W] -> [N][H][W][C].
std::vector<float> NchwToNhwc(const float* nchw, int64_t n, int64_t channels, int64_t h, int64_t w);
/// [N][H][W][C] -> [N][C][H][W].
std::vector<float> NhwcToNchw(const float* nhwc, int64_t n, int64_t channels, int64_t h, int64_t w);
/// [K][C][R][S] -> [K][R][S][C].
std::vector<float> KcrsToKrsc(const float* kcrs, const Conv2dShape& s);
/// [K][R][S][C] -> [K][C][R][S].
std::vector<float> KrscToKcrs(const float* krsc, const Conv2dShape& s);

}  // namespace tune
