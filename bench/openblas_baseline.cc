#include "bench/openblas_baseline.h"

#include <cblas.h>

#include <algorithm>

extern "C" char* openblas_get_corename(void);

namespace tune::bench {
namespace {

void ApplyEpilogue(Epilogue epilogue, const float* bias, float* out, int64_t rows, int64_t cols,
                   bool bias_per_row) {
  if (epilogue == Epilogue::kNone) {
    return;
  }
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      float v = out[i * cols + j];
      if (EpilogueHasBias(epilogue)) {
        v += bias_per_row ? bias[i] : bias[j];
      }
      if (EpilogueHasRelu(epilogue)) {
        v = std::max(v, 0.0f);
      }
      out[i * cols + j] = v;
    }
  }
}

}  // namespace

std::string OpenblasCoreName() { return openblas_get_corename(); }

void SetOpenblasThreads(int threads) { openblas_set_num_threads(threads); }

OpenblasKernel::OpenblasKernel(const Workload& workload) : workload_(workload) {
  if (workload.op() == OpKind::kConv2d) {
    const Conv2dShape& s = workload.conv2d();
    columns_.resize(s.c * s.r * s.s * s.p() * s.q());
  }
}

int OpenblasKernel::Run(const std::vector<const float*>& inputs, float* output) {
  const bool has_bias = EpilogueHasBias(workload_.epilogue());
  const float* bias = has_bias ? inputs[2] : nullptr;
  switch (workload_.op()) {
    case OpKind::kGemm: {
      const GemmShape& g = workload_.gemm();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g.m, g.n, g.k, 1.0f, inputs[0], g.k,
                  inputs[1], g.n, 0.0f, output, g.n);
      ApplyEpilogue(workload_.epilogue(), bias, output, g.m, g.n, /*bias_per_row=*/false);
      return 0;
    }
    case OpKind::kConv2d: {
      const Conv2dShape& s = workload_.conv2d();
      const int64_t p_size = s.p(), q_size = s.q(), pq = p_size * q_size;
      for (int64_t n = 0; n < s.n; ++n) {
        const float* in = inputs[0] + n * s.c * s.h * s.w;
        // columns[(c, r, s)][(p, q)]
        for (int64_t c = 0; c < s.c; ++c) {
          for (int64_t r = 0; r < s.r; ++r) {
            for (int64_t t = 0; t < s.s; ++t) {
              float* col = columns_.data() + ((c * s.r + r) * s.s + t) * pq;
              for (int64_t p = 0; p < p_size; ++p) {
                int64_t h = p * s.stride - s.pad + r * s.dilation;
                for (int64_t q = 0; q < q_size; ++q) {
                  int64_t w = q * s.stride - s.pad + t * s.dilation;
                  col[p * q_size + q] =
                      (h >= 0 && h < s.h && w >= 0 && w < s.w) ? in[(c * s.h + h) * s.w + w] : 0.0f;
                }
              }
            }
          }
        }
        float* out = output + n * s.k * pq;
        const int64_t crs = s.c * s.r * s.s;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.k, pq, crs, 1.0f, inputs[1], crs,
                    columns_.data(), pq, 0.0f, out, pq);
        ApplyEpilogue(workload_.epilogue(), bias, out, s.k, pq, /*bias_per_row=*/true);
      }
      return 0;
    }
  }
  return 1;
}

}  // namespace tune::bench
