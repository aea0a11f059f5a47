#include "common/reference.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/conv_layout.h"
#include "common/strings.h"

namespace tune {
namespace {

void ReferenceGemm(const GemmShape& g, Epilogue epilogue, const float* a, const float* b,
                   const float* bias, float* c) {
  std::vector<double> row(g.n);
  for (int64_t i = 0; i < g.m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (int64_t k = 0; k < g.k; ++k) {
      double aik = a[i * g.k + k];
      const float* brow = b + k * g.n;
      for (int64_t j = 0; j < g.n; ++j) {
        row[j] += aik * brow[j];
      }
    }
    for (int64_t j = 0; j < g.n; ++j) {
      double v = row[j];
      if (EpilogueHasBias(epilogue)) {
        v += bias[j];
      }
      if (EpilogueHasRelu(epilogue)) {
        v = std::max(v, 0.0);
      }
      c[i * g.n + j] = static_cast<float>(v);
    }
  }
}

void ReferenceConv2d(const Conv2dShape& s, Epilogue epilogue, const float* input,
                     const float* weight, const float* bias, float* output) {
  const int64_t p_size = s.p(), q_size = s.q();
  std::vector<double> acc(p_size * q_size);
  for (int64_t n = 0; n < s.n; ++n) {
    for (int64_t k = 0; k < s.k; ++k) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t c = 0; c < s.c; ++c) {
        const float* in = input + (n * s.c + c) * s.h * s.w;
        for (int64_t r = 0; r < s.r; ++r) {
          for (int64_t t = 0; t < s.s; ++t) {
            double wv = weight[((k * s.c + c) * s.r + r) * s.s + t];
            for (int64_t p = 0; p < p_size; ++p) {
              int64_t h = p * s.stride - s.pad + r * s.dilation;
              if (h < 0 || h >= s.h) {
                continue;
              }
              for (int64_t q = 0; q < q_size; ++q) {
                int64_t w = q * s.stride - s.pad + t * s.dilation;
                if (w < 0 || w >= s.w) {
                  continue;
                }
                acc[p * q_size + q] += wv * in[h * s.w + w];
              }
            }
          }
        }
      }
      float* out = output + (n * s.k + k) * p_size * q_size;
      for (int64_t i = 0; i < p_size * q_size; ++i) {
        double v = acc[i];
        if (EpilogueHasBias(epilogue)) {
          v += bias[k];
        }
        if (EpilogueHasRelu(epilogue)) {
          v = std::max(v, 0.0);
        }
        out[i] = static_cast<float>(v);
      }
    }
  }
}

}  // namespace

void FillRandom(float* data, int64_t n, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) {
    data[i] = dist(gen);
  }
}

void RunReference(const Workload& workload, const std::vector<const float*>& inputs,
                  float* output) {
  const bool has_bias = EpilogueHasBias(workload.epilogue());
  const float* bias = has_bias ? inputs[2] : nullptr;
  switch (workload.op()) {
    case OpKind::kGemm:
      ReferenceGemm(workload.gemm(), workload.epilogue(), inputs[0], inputs[1], bias, output);
      break;
    case OpKind::kConv2d: {
      const Conv2dShape& s = workload.conv2d();
      if (!s.blocked()) {
        ReferenceConv2d(s, workload.epilogue(), inputs[0], inputs[1], bias, output);
        break;
      }
      // The blocked layout: the same computation on the plain tensors, its output blocked.
      std::vector<float> input = UnblockActivations(inputs[0], s.n, s.c, s.h, s.w, s.block);
      std::vector<float> weight = UnblockWeights(inputs[1], s);
      std::vector<float> plain(s.n * s.k * s.p() * s.q());
      ReferenceConv2d(s, workload.epilogue(), input.data(), weight.data(), bias, plain.data());
      std::vector<float> blocked = BlockActivations(plain.data(), s.n, s.k, s.p(), s.q(), s.block);
      std::copy(blocked.begin(), blocked.end(), output);
      break;
    }
  }
}

int64_t ReductionLength(const Workload& workload) {
  switch (workload.op()) {
    case OpKind::kGemm:
      return workload.gemm().k;
    case OpKind::kConv2d: {
      const Conv2dShape& s = workload.conv2d();
      return s.c * s.r * s.s;
    }
  }
  return 1;
}

CompareResult CompareOutputs(const Workload& workload, const float* got, const float* want,
                             int64_t n, double tolerance_scale) {
  CompareResult result;
  const double scale = std::max(1.0, tolerance_scale);
  const double atol = scale * (1e-6 * static_cast<double>(ReductionLength(workload)) + 1e-6);
  const double rtol = scale * 1e-5;
  for (int64_t i = 0; i < n; ++i) {
    double g = got[i], w = want[i];
    double err = std::abs(g - w);
    const double bound = atol + rtol * std::abs(w);
    bool bad = !std::isfinite(g) || err > bound;
    if (std::isfinite(err)) {
      result.max_abs_error = std::max(result.max_abs_error, err);
      result.max_error_ratio = std::max(result.max_error_ratio, err / bound);
    }
    if (bad) {
      if (result.mismatches == 0) {
        result.first_bad_index = i;
        result.message =
            StrCat("output[", i, "] = ", g, ", expected ", w, " (tolerance ", bound,
                   scale > 1 ? StrCat(": ", scale, " times the standard bound") : "", ")");
      }
      ++result.mismatches;
    }
  }
  result.ok = result.mismatches == 0;
  if (!result.ok) {
    StrAppend(&result.message, "; ", result.mismatches, " of ", n, " elements differ");
  }
  return result;
}

TensorSet::TensorSet(const Workload& workload, uint64_t seed) {
  std::vector<TensorArg> args = workload.Arguments();
  for (size_t i = 0; i < args.size(); ++i) {
    buffers_.emplace_back(args[i].NumElements());
    if (!args[i].is_output) {
      FillRandom(buffers_.back().data(), args[i].NumElements(), seed * 1000003u + i);
    } else {
      std::fill(buffers_.back().begin(), buffers_.back().end(), std::nanf(""));
    }
  }
}

std::vector<void*> TensorSet::AbiPointers() {
  std::vector<void*> out;
  for (auto& b : buffers_) {
    out.push_back(b.data());
  }
  return out;
}

std::vector<const float*> TensorSet::InputPointers() const {
  std::vector<const float*> out;
  for (size_t i = 0; i + 1 < buffers_.size(); ++i) {
    out.push_back(buffers_[i].data());
  }
  return out;
}

}  // namespace tune
