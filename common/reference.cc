#include "common/reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "common/conv_layout.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

// Where the reference puts each result: scales, bias and ReLU applied (or the requantisation),
// then stored in ReferenceType at the output's index.
class OutputWriter {
 public:
  OutputWriter(const Workload& workload, const void* bias, double scale_product, void* out,
               double zero_point = 0)
      : epilogue_(workload.epilogue()),
        bias_type_(workload.out_type()),
        bias_(bias),
        scale_product_(scale_product),
        zero_point_(zero_point),
        type_(ReferenceType(workload)),
        out_(out) {}

  void Put(int64_t index, double sum, int64_t channel) const {
    if (epilogue_ == Epilogue::kRequant) {  // i8 in an i32: saturated, to nearest even
      const double v = std::nearbyint(sum * scale_product_ + zero_point_);
      static_cast<int32_t*>(out_)[index] = static_cast<int32_t>(std::clamp(v, -128.0, 127.0));
      return;
    }
    double v = sum * scale_product_;  // exact when there are no scales (1)
    if (EpilogueHasBias(epilogue_)) {
      v += DecodeElement(bias_type_, bias_, channel);
    }
    if (EpilogueHasRelu(epilogue_)) {
      v = std::max(v, 0.0);
    }
    if (type_ == ElementType::kI32) {
      // Exact in double (|v| < 2^53 for any reduction a workload allows), wrapped to 32 bits.
      static_cast<int32_t*>(out_)[index] =
          static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(v)));
    } else {
      static_cast<float*>(out_)[index] = static_cast<float>(v);
    }
  }

 private:
  Epilogue epilogue_;
  ElementType bias_type_;
  const void* bias_;
  double scale_product_;
  double zero_point_;
  ElementType type_;
  void* out_;
};

// a: [M][K], b: [K][N], both exact as floats.
void ReferenceGemm(const GemmShape& g, const float* a, const float* b, const OutputWriter& out) {
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
      out.Put(i * g.n + j, row[j], j);
    }
  }
}

// The index of output element (n, k, p, q) in the workload's output layout.
int64_t ConvOutputIndex(const Conv2dShape& s, int64_t n, int64_t k, int64_t p, int64_t q) {
  const int64_t p_size = s.p(), q_size = s.q();
  if (s.blocked()) {
    const int64_t b = s.block;
    return (((n * (s.k / b) + k / b) * p_size + p) * q_size + q) * b + k % b;
  }
  if (s.nhwc) {
    return ((n * p_size + p) * q_size + q) * s.k + k;
  }
  return ((n * s.k + k) * p_size + p) * q_size + q;
}

// input: NCHW, weight: KCRS, both exact as floats.
void ReferenceConv2d(const Conv2dShape& s, const float* input, const float* weight,
                     const OutputWriter& out) {
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
      for (int64_t p = 0; p < p_size; ++p) {
        for (int64_t q = 0; q < q_size; ++q) {
          out.Put(ConvOutputIndex(s, n, k, p, q), acc[p * q_size + q], k);
        }
      }
    }
  }
}

// The values of `arg`'s tensor at `data` as floats (exact for every element type). f32 tensors
// are used in place: `storage` is filled only for the others.
const float* AsFloats(const TensorArg& arg, const void* data, std::vector<float>* storage) {
  if (arg.type == ElementType::kF32) {
    return static_cast<const float*>(data);
  }
  const int64_t n = arg.NumElements();
  storage->resize(n);
  for (int64_t i = 0; i < n; ++i) {
    (*storage)[i] = static_cast<float>(DecodeElement(arg.type, data, i));
  }
  return storage->data();
}

// The root mean square of a uniform integer in [lo, hi].
double UniformIntRms(int64_t lo, int64_t hi) {
  double sum = 0;
  for (int64_t v = lo; v <= hi; ++v) {
    sum += static_cast<double>(v) * static_cast<double>(v);
  }
  return std::sqrt(sum / static_cast<double>(hi - lo + 1));
}

// A requantisation's scale: about 32 / (the spread of an accumulator), so that outputs spread
// over most of i8's range (rounding matters) and saturate only in the tails (so does that).
float RequantScale(const Workload& workload, uint64_t seed) {
  auto rms = [](ElementType t) {
    return t == ElementType::kU8 ? UniformIntRms(0, 255) : UniformIntRms(-128, 127);
  };
  const double spread = std::sqrt(static_cast<double>(ReductionLength(workload))) *
                        rms(workload.input_type()) * rms(workload.weight_type());
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> jitter(1.0, 1.5);
  return static_cast<float>(32.0 * jitter(gen) / spread);
}

// The seeded values of argument `arg` of `workload`.
void FillTyped(const TensorArg& arg, const Workload& workload, void* data, uint64_t seed) {
  const int64_t n = arg.NumElements();
  std::mt19937_64 gen(seed);
  if (arg.role == ArgRole::kZeroPoint) {
    std::uniform_int_distribution<int32_t> dist(-16, 16);
    for (int64_t i = 0; i < n; ++i) {
      static_cast<int32_t*>(data)[i] = dist(gen);
    }
    return;
  }
  if (arg.role == ArgRole::kScale && workload.requantizes()) {
    *static_cast<float*>(data) = RequantScale(workload, seed);
    return;
  }
  if (arg.role == ArgRole::kScale) {
    std::uniform_real_distribution<float> dist(2.0f, 4.0f);
    for (int64_t i = 0; i < n; ++i) {
      static_cast<float*>(data)[i] = dist(gen);
    }
    return;
  }
  if (IsIntegerElement(arg.type)) {
    int64_t lo = -128, hi = 127;
    if (arg.type == ElementType::kU8) {
      lo = 0;
      hi = 255;
    } else if (arg.type == ElementType::kI32) {
      lo = -(int64_t{1} << 15);
      hi = int64_t{1} << 15;
    }
    std::uniform_int_distribution<int64_t> dist(lo, hi);
    for (int64_t i = 0; i < n; ++i) {
      EncodeElement(arg.type, static_cast<double>(dist(gen)), data, i);
    }
    return;
  }
  if (arg.type == ElementType::kF32 && workload.dtype() != Dtype::kTf32) {
    FillRandom(static_cast<float*>(data), n, seed);
    return;
  }
  // The f32 inputs' values, rounded into the type (to tf32 for tf32's inputs; a bias of an f32
  // output stays f32).
  std::vector<float> values(n);
  FillRandom(values.data(), n, seed);
  const Dtype reading = arg.role == ArgRole::kBias ? Dtype::kF32 : workload.dtype();
  for (int64_t i = 0; i < n; ++i) {
    EncodeElement(arg.type, RoundForInput(reading, arg.type, values[i]), data, i);
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

ElementType ReferenceType(const Workload& workload) {
  return IsIntegerElement(workload.out_type()) ? ElementType::kI32 : ElementType::kF32;
}

void RunReference(const Workload& workload, const std::vector<const void*>& inputs, void* want) {
  std::vector<TensorArg> args = workload.Arguments();
  const int out_index = workload.OutputIndex();
  TUNE_CHECK(inputs.size() + 1 == args.size())
      << workload.ToString() << " takes " << args.size() - 1 << " inputs, not " << inputs.size();
  args.erase(args.begin() + out_index);
  const void* bias = EpilogueHasBias(workload.epilogue()) ? inputs[2] : nullptr;
  double scale_product = 1;
  double zero_point = 0;
  if (workload.has_scales()) {
    scale_product = static_cast<double>(*static_cast<const float*>(inputs[out_index])) *
                    static_cast<double>(*static_cast<const float*>(inputs[out_index + 1]));
  } else if (workload.requantizes()) {
    scale_product = *static_cast<const float*>(inputs[out_index]);
    zero_point = *static_cast<const int32_t*>(inputs[out_index + 1]);
  }
  const OutputWriter out(workload, bias, scale_product, want, zero_point);
  std::vector<float> a_storage, b_storage;
  const float* a = AsFloats(args[0], inputs[0], &a_storage);
  const float* b = AsFloats(args[1], inputs[1], &b_storage);
  switch (workload.op()) {
    case OpKind::kGemm: {
      const GemmShape& g = workload.gemm();
      std::vector<float> b_nn;
      if (g.layout == GemmLayout::kNT) {  // B[N][K] -> B[K][N]
        b_nn.resize(g.k * g.n);
        for (int64_t j = 0; j < g.n; ++j) {
          for (int64_t k = 0; k < g.k; ++k) {
            b_nn[k * g.n + j] = b[j * g.k + k];
          }
        }
        b = b_nn.data();
      }
      ReferenceGemm(g, a, b, out);
      break;
    }
    case OpKind::kConv2d: {
      const Conv2dShape& s = workload.conv2d();
      std::vector<float> input, weight;
      if (s.blocked()) {
        input = UnblockActivations(a, s.n, s.c, s.h, s.w, s.block);
        weight = UnblockWeights(b, s);
        a = input.data();
        b = weight.data();
      } else if (s.nhwc) {
        input = NhwcToNchw(a, s.n, s.c, s.h, s.w);
        weight = KrscToKcrs(b, s);
        a = input.data();
        b = weight.data();
      }
      ReferenceConv2d(s, a, b, out);
      break;
    }
  }
}

void RunReference(const Workload& workload, const std::vector<const float*>& inputs,
                  float* output) {
  TUNE_CHECK(workload.dtype() == Dtype::kF32 && workload.out_type() == ElementType::kF32)
      << "the float reference computes f32 workloads, not " << workload.ToString();
  RunReference(workload, std::vector<const void*>(inputs.begin(), inputs.end()), output);
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

double OutputBound(const Workload& workload, double want, double got, double scale_product,
                   double tolerance_scale) {
  const ElementType out = workload.out_type();
  if (workload.requantizes()) {
    return 1;  // one rounding step: f32 arithmetic may round a near-tie the other way
  }
  if (IsIntegerElement(out)) {
    return 0;
  }
  const double scale = std::max(1.0, tolerance_scale);
  const double atol = 1e-6 * (static_cast<double>(ReductionLength(workload)) + 1) * scale_product;
  double relative = 1e-5 * std::abs(want);
  if (out != ElementType::kF32) {
    const double m = std::isfinite(got) ? std::max(std::abs(got), std::abs(want)) : std::abs(want);
    relative = std::max(relative, 2 * UlpOf(out, m));
  }
  return scale * (atol + relative);
}

CompareResult CompareOutputs(const Workload& workload, const void* got, const void* want, int64_t n,
                             double tolerance_scale, double scale_product) {
  CompareResult result;
  const ElementType out = workload.out_type();
  const ElementType ref = ReferenceType(workload);
  const double scale = std::max(1.0, tolerance_scale);
  for (int64_t i = 0; i < n; ++i) {
    const double g = DecodeElement(out, got, i);
    const double w = DecodeElement(ref, want, i);
    const double err = std::abs(g - w);
    const double bound = OutputBound(workload, w, g, scale_product, tolerance_scale);
    const bool bad = !std::isfinite(g) || err > bound;
    if (std::isfinite(err)) {
      result.max_abs_error = std::max(result.max_abs_error, err);
      if (bound > 0) {
        result.max_error_ratio = std::max(result.max_error_ratio, err / bound);
      } else if (err > 0) {
        result.max_error_ratio = HUGE_VAL;
      }
    }
    if (bad) {
      if (result.mismatches == 0) {
        result.first_bad_index = i;
        std::string what = StrCat("tolerance ", bound);
        if (out != ElementType::kF32) {
          StrAppend(&what, " for ", ElementTypeName(out), " output");
        }
        if (scale > 1) {
          StrAppend(&what, ": ", scale, " times the standard bound");
        }
        result.message = StrCat("output[", i, "] = ", g, ", expected ", w, " (", what, ")");
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

CompareResult CompareOutputs(const Workload& workload, const float* got, const float* want,
                             int64_t n, double tolerance_scale) {
  TUNE_CHECK(workload.out_type() == ElementType::kF32)
      << "the float comparison takes f32 outputs, not " << workload.ToString();
  return CompareOutputs(workload, static_cast<const void*>(got), static_cast<const void*>(want), n,
                        tolerance_scale, 1.0);
}

TensorSet::TensorSet(const Workload& workload, uint64_t seed) {
  const std::vector<TensorArg> args = workload.Arguments();
  output_index_ = static_cast<size_t>(workload.OutputIndex());
  for (size_t i = 0; i < args.size(); ++i) {
    const TensorArg& arg = args[i];
    const int64_t bytes = arg.NumBytes();
    buffers_.emplace_back((bytes + 3) / 4);
    types_.push_back(arg.type);
    sizes_.push_back(arg.NumElements());
    void* data = buffers_.back().data();
    if (arg.role != ArgRole::kOutput) {
      FillTyped(arg, workload, data, seed * 1000003u + i);
      if (arg.role == ArgRole::kScale) {
        scale_product_ *= static_cast<const float*>(data)[0];
      }
      continue;
    }
    // A value no kernel computes by accident: NaN for floats, 0x7f7f7f7f for integers.
    if (IsIntegerElement(arg.type)) {
      std::memset(data, 0x7f, bytes);
    } else {
      for (int64_t e = 0; e < arg.NumElements(); ++e) {
        EncodeElement(arg.type, std::nan(""), data, e);
      }
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

std::vector<const void*> TensorSet::Inputs() const {
  std::vector<const void*> out;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    if (i != output_index_) {
      out.push_back(buffers_[i].data());
    }
  }
  return out;
}

std::vector<const float*> TensorSet::InputPointers() const {
  std::vector<const float*> out;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    if (i != output_index_) {
      TUNE_CHECK(types_[i] == ElementType::kF32) << "argument " << i << " is not f32";
      out.push_back(reinterpret_cast<const float*>(buffers_[i].data()));
    }
  }
  return out;
}

float* TensorSet::output() {
  TUNE_CHECK(output_type() == ElementType::kF32)
      << "the output is " << ElementTypeName(output_type()) << ", not f32";
  return reinterpret_cast<float*>(buffers_[output_index_].data());
}

}  // namespace tune
