#include "common/conv_layout.h"

namespace tune {
namespace {

// Calls f(plain index, blocked index) for every element of [N][C][H][W] and its place in
// [N][C/b][H][W][b].
template <typename F>
void ForEachActivation(int64_t n, int64_t channels, int64_t h, int64_t w, int64_t b, F f) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          f(((i * channels + c) * h + y) * w + x,
            (((i * (channels / b) + c / b) * h + y) * w + x) * b + c % b);
        }
      }
    }
  }
}

// Calls f(plain index, blocked index) for every weight of [K][C][R][S] and its place in
// [K/b][C/b][R][S][b][b].
template <typename F>
void ForEachWeight(const Conv2dShape& s, F f) {
  const int64_t b = s.block;
  for (int64_t k = 0; k < s.k; ++k) {
    for (int64_t c = 0; c < s.c; ++c) {
      for (int64_t r = 0; r < s.r; ++r) {
        for (int64_t t = 0; t < s.s; ++t) {
          f(((k * s.c + c) * s.r + r) * s.s + t,
            ((((k / b) * (s.c / b) + c / b) * s.r + r) * s.s + t) * b * b + (c % b) * b + k % b);
        }
      }
    }
  }
}

// Calls f(nchw index, nhwc index) for every element of [N][C][H][W].
template <typename F>
void ForEachChannelsLast(int64_t n, int64_t channels, int64_t h, int64_t w, F f) {
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t y = 0; y < h; ++y) {
        for (int64_t x = 0; x < w; ++x) {
          f(((i * channels + c) * h + y) * w + x, ((i * h + y) * w + x) * channels + c);
        }
      }
    }
  }
}

}  // namespace

std::vector<float> BlockActivations(const float* plain, int64_t n, int64_t channels, int64_t h,
                                    int64_t w, int64_t block) {
  std::vector<float> out(n * channels * h * w);
  ForEachActivation(n, channels, h, w, block,
                    [&](int64_t p, int64_t blocked) { out[blocked] = plain[p]; });
  return out;
}

std::vector<float> UnblockActivations(const float* blocked, int64_t n, int64_t channels, int64_t h,
                                      int64_t w, int64_t block) {
  std::vector<float> out(n * channels * h * w);
  ForEachActivation(n, channels, h, w, block, [&](int64_t p, int64_t b) { out[p] = blocked[b]; });
  return out;
}

std::vector<float> BlockWeights(const float* plain, const Conv2dShape& s) {
  std::vector<float> out(s.k * s.c * s.r * s.s);
  ForEachWeight(s, [&](int64_t p, int64_t blocked) { out[blocked] = plain[p]; });
  return out;
}

std::vector<float> UnblockWeights(const float* blocked, const Conv2dShape& s) {
  std::vector<float> out(s.k * s.c * s.r * s.s);
  ForEachWeight(s, [&](int64_t p, int64_t b) { out[p] = blocked[b]; });
  return out;
}

std::vector<float> NchwToNhwc(const float* nchw, int64_t n, int64_t channels, int64_t h,
                              int64_t w) {
  std::vector<float> out(n * channels * h * w);
  ForEachChannelsLast(n, channels, h, w, [&](int64_t p, int64_t last) { out[last] = nchw[p]; });
  return out;
}

std::vector<float> NhwcToNchw(const float* nhwc, int64_t n, int64_t channels, int64_t h,
                              int64_t w) {
  std::vector<float> out(n * channels * h * w);
  ForEachChannelsLast(n, channels, h, w, [&](int64_t p, int64_t last) { out[p] = nhwc[last]; });
  return out;
}

// KCRS and KRSC are NCHW and NHWC with K images of C channels of R x S.
std::vector<float> KcrsToKrsc(const float* kcrs, const Conv2dShape& s) {
  return NchwToNhwc(kcrs, s.k, s.c, s.r, s.s);
}

std::vector<float> KrscToKcrs(const float* krsc, const Conv2dShape& s) {
  return NhwcToNchw(krsc, s.k, s.c, s.r, s.s);
}

}  // namespace tune
