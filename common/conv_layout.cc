#include "common/conv_layout.h"

namespace tune {
namespace {

// Index of (n, c, y, x) in [N][C/b][H][W][b].
int64_t BlockedIndex(int64_t n, int64_t c, int64_t y, int64_t x, int64_t channels, int64_t h,
                     int64_t w, int64_t b) {
  return (((n * (channels / b) + c / b) * h + y) * w + x) * b + c % b;
}

// Index of (k, c, r, s) in [K/b][C/b][R][S][b][b].
int64_t BlockedWeightIndex(const Conv2dShape& s, int64_t k, int64_t c, int64_t r, int64_t t) {
  const int64_t b = s.block;
  return ((((k / b) * (s.c / b) + c / b) * s.r + r) * s.s + t) * b * b + (c % b) * b + k % b;
}

}  // namespace

std::vector<float> BlockActivations(const float* plain, int64_t n, int64_t channels, int64_t h,
                                    int64_t w, int64_t block) {
  std::vector<float> out(n * channels * h * w);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          out[BlockedIndex(i, c, y, x, channels, h, w, block)] =
              plain[((i * channels + c) * h + y) * w + x];
        }
      }
    }
  }
  return out;
}

std::vector<float> UnblockActivations(const float* blocked, int64_t n, int64_t channels, int64_t h,
                                      int64_t w, int64_t block) {
  std::vector<float> out(n * channels * h * w);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          out[((i * channels + c) * h + y) * w + x] =
              blocked[BlockedIndex(i, c, y, x, channels, h, w, block)];
        }
      }
    }
  }
  return out;
}

std::vector<float> BlockWeights(const float* plain, const Conv2dShape& s) {
  std::vector<float> out(s.k * s.c * s.r * s.s);
  for (int64_t k = 0; k < s.k; ++k) {
    for (int64_t c = 0; c < s.c; ++c) {
      for (int64_t r = 0; r < s.r; ++r) {
        for (int64_t t = 0; t < s.s; ++t) {
          out[BlockedWeightIndex(s, k, c, r, t)] = plain[((k * s.c + c) * s.r + r) * s.s + t];
        }
      }
    }
  }
  return out;
}

std::vector<float> UnblockWeights(const float* blocked, const Conv2dShape& s) {
  std::vector<float> out(s.k * s.c * s.r * s.s);
  for (int64_t k = 0; k < s.k; ++k) {
    for (int64_t c = 0; c < s.c; ++c) {
      for (int64_t r = 0; r < s.r; ++r) {
        for (int64_t t = 0; t < s.s; ++t) {
          out[((k * s.c + c) * s.r + r) * s.s + t] = blocked[BlockedWeightIndex(s, k, c, r, t)];
        }
      }
    }
  }
  return out;
}

}  // namespace tune
