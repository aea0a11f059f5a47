// What the tests of libtune_range.so share (range_runtime_test.cc, range_recording_test.cc): host
// GEMM kernels compiled for fixed sizes (adapters of tune_range_fn, one per size 1..kMaxSize of
// an M, an N and a K range), plans over them, and operands with guard regions.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/tune_range.h"

namespace tune_range_test {

// ---- The kernels: C = alpha * A x B, row-major, A [M][K], B [K][N], C [M][N], alpha a scalar
// argument that carries no ranged dimension. Arguments: A, B, C, &alpha.

inline void Gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c,
                 float alpha) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        sum += a[i * k + p] * b[p * n + j];
      }
      c[i * n + j] = alpha * sum;
    }
  }
}

// What the kernels of the calling thread did (when a test sets t_log).
struct KernelLog {
  std::vector<int64_t> sizes;  // each call's compiled size
  std::vector<void*> streams;  // each call's stream
  std::vector<void*> scalars;  // each call's args[3]
  int64_t fail_size = -1;      // the kernel of this size fails...
  int32_t fail_code = 0;       // ...with this code
};
inline thread_local KernelLog* t_log = nullptr;

// Returns the kernel's code: 0, or the injected failure.
inline int32_t Note(int64_t size, void* const* args, void* stream) {
  if (t_log == nullptr) {
    return 0;
  }
  t_log->sizes.push_back(size);
  t_log->streams.push_back(stream);
  t_log->scalars.push_back(args[3]);
  return size == t_log->fail_size ? t_log->fail_code : 0;
}

// The fixed dimensions of each family (the ranged one is the kernel's size).
inline constexpr int64_t kMRangeN = 3, kMRangeK = 5;
inline constexpr int64_t kNRangeM = 4, kNRangeK = 3;
inline constexpr int64_t kKRangeM = 3, kKRangeN = 4;

template <int64_t M>
inline int32_t GemmM(void* const* args, void* stream) {
  if (int32_t rc = Note(M, args, stream); rc != 0) {
    return rc;
  }
  Gemm(M, kMRangeN, kMRangeK, static_cast<const float*>(args[0]),
       static_cast<const float*>(args[1]), static_cast<float*>(args[2]),
       *static_cast<const float*>(args[3]));
  return 0;
}

template <int64_t N>
inline int32_t GemmN(void* const* args, void* stream) {
  if (int32_t rc = Note(N, args, stream); rc != 0) {
    return rc;
  }
  Gemm(kNRangeM, N, kNRangeK, static_cast<const float*>(args[0]),
       static_cast<const float*>(args[1]), static_cast<float*>(args[2]),
       *static_cast<const float*>(args[3]));
  return 0;
}

template <int64_t K>
inline int32_t GemmK(void* const* args, void* stream) {
  if (int32_t rc = Note(K, args, stream); rc != 0) {
    return rc;
  }
  Gemm(kKRangeM, kKRangeN, K, static_cast<const float*>(args[0]),
       static_cast<const float*>(args[1]), static_cast<float*>(args[2]),
       *static_cast<const float*>(args[3]));
  return 0;
}

inline constexpr int64_t kMaxSize = 24;  // kernels exist for sizes 1..kMaxSize

template <size_t... I>
constexpr std::array<tune_range_fn, sizeof...(I)> MTable(std::index_sequence<I...>) {
  return {&GemmM<static_cast<int64_t>(I) + 1>...};
}
template <size_t... I>
constexpr std::array<tune_range_fn, sizeof...(I)> NTable(std::index_sequence<I...>) {
  return {&GemmN<static_cast<int64_t>(I) + 1>...};
}
template <size_t... I>
constexpr std::array<tune_range_fn, sizeof...(I)> KTable(std::index_sequence<I...>) {
  return {&GemmK<static_cast<int64_t>(I) + 1>...};
}
inline constexpr auto kMKernels = MTable(std::make_index_sequence<kMaxSize>());
inline constexpr auto kNKernels = NTable(std::make_index_sequence<kMaxSize>());
inline constexpr auto kKKernels = KTable(std::make_index_sequence<kMaxSize>());

inline int32_t Noop(void* const*, void*) { return 0; }

// ---- Plans.

enum class Dim { kM, kN, kK };

struct Dims {
  int64_t m, n, k;
};

inline Dims DimsAt(Dim dim, int64_t size) {
  switch (dim) {
    case Dim::kM:
      return {size, kMRangeN, kMRangeK};
    case Dim::kN:
      return {kNRangeM, size, kNRangeK};
    case Dim::kK:
      return {kKRangeM, kKRangeN, size};
  }
  return {};
}

// A plan and the arrays it points at (not copyable: held by pointer).
struct Plan {
  std::string before, after;
  std::vector<tune_range_kernel> kernels;
  std::vector<tune_range_tensor> tensors;
  tune_range_plan plan{};
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  // Points the plan at the arrays again after an edit of them.
  void Relink() {
    plan.text_before = before.c_str();
    plan.text_after = after.c_str();
    plan.kernels = kernels.data();
    plan.num_kernels = static_cast<int32_t>(kernels.size());
    plan.tensors = tensors.data();
    plan.num_tensors = static_cast<int32_t>(tensors.size());
  }
};

// The GEMM range over `dim` with kernels of `sizes` (their seconds when given), hi the largest.
inline std::unique_ptr<Plan> GemmPlan(Dim dim, const std::vector<int64_t>& sizes,
                                      const std::vector<double>& seconds = {}, int64_t lo = 1) {
  auto p = std::make_unique<Plan>();
  const auto& table = dim == Dim::kM ? kMKernels : dim == Dim::kN ? kNKernels : kKKernels;
  for (size_t i = 0; i < sizes.size(); ++i) {
    p->kernels.push_back({sizes[i], seconds.empty() ? 0.0 : seconds[i],
                          sizes[i] <= kMaxSize ? table[sizes[i] - 1] : &Noop, /*measured=*/1});
  }
  constexpr int32_t kF = sizeof(float);
  switch (dim) {
    case Dim::kM:  // A [M][K], C [M][N]: M outermost, no sum over it
      p->before = "gemm:M=";
      p->after = ",N=" + std::to_string(kMRangeN) + ",K=" + std::to_string(kMRangeK);
      p->tensors = {{0, 0, 1, kMRangeK * kF}, {2, 1, 1, kMRangeN * kF}};
      p->plan.splittable = 1;
      break;
    case Dim::kN:  // B [K][N], C [M][N]
      p->before = "gemm:M=" + std::to_string(kNRangeM) + ",N=";
      p->after = ",K=" + std::to_string(kNRangeK);
      p->tensors = {{1, 0, kNRangeK, kF}, {2, 1, kNRangeM, kF}};
      break;
    case Dim::kK:  // A [M][K], B [K][N]: inputs only, summed over K
      p->before = "gemm:M=" + std::to_string(kKRangeM) + ",N=" + std::to_string(kKRangeN) + ",K=";
      p->tensors = {{0, 0, kKRangeM, kF}, {1, 0, 1, kKRangeN * kF}};
      break;
  }
  p->plan.abi_version = TUNE_RANGE_ABI_VERSION;
  p->plan.lo = lo;
  p->plan.hi = sizes.back();
  p->plan.num_args = 4;
  p->Relink();
  return p;
}

// ---- Buffers with guards on both sides, to catch writes outside a tensor.

inline constexpr size_t kGuard = 64;
inline constexpr float kCanary = 12345.0f;

class Guarded {
 public:
  explicit Guarded(size_t n) : n_(n), buf_(n + 2 * kGuard, kCanary) {}
  float* data() { return buf_.data() + kGuard; }
  const float* data() const { return buf_.data() + kGuard; }
  size_t size() const { return n_; }
  bool GuardsIntact() const {
    for (size_t i = 0; i < kGuard; ++i) {
      if (buf_[i] != kCanary || buf_[kGuard + n_ + i] != kCanary) {
        return false;
      }
    }
    return true;
  }

 private:
  size_t n_;
  std::vector<float> buf_;
};

// The operands of one size, filled with small integers (every sum exact in float).
struct Operands {
  Dims d;
  Guarded a, b, c;
  float alpha = 2.0f;
  std::array<void*, 4> args;
  explicit Operands(Dims dims)
      : d(dims),
        a(static_cast<size_t>(dims.m * dims.k)),
        b(static_cast<size_t>(dims.k * dims.n)),
        c(static_cast<size_t>(dims.m * dims.n)) {
    for (size_t i = 0; i < a.size(); ++i) {
      a.data()[i] = static_cast<float>(static_cast<int>((i * 7 + 3) % 11) - 5);
    }
    for (size_t i = 0; i < b.size(); ++i) {
      b.data()[i] = static_cast<float>(static_cast<int>((i * 5 + 1) % 7) - 3);
    }
    for (size_t i = 0; i < c.size(); ++i) {
      c.data()[i] = -999.0f;  // every element must be written
    }
    args = {a.data(), b.data(), c.data(), &alpha};
  }
  std::vector<float> Reference() const {
    std::vector<float> want(c.size());
    Gemm(d.m, d.n, d.k, a.data(), b.data(), want.data(), alpha);
    return want;
  }
};

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The (kernel size, piece length) pairs of `size`, or the code as one pair {code, 0}.
inline std::vector<std::pair<int64_t, int64_t>> Pieces(const tune_range_plan& plan, int64_t size) {
  int64_t sizes[2 * 64];
  int32_t n = tune_range_plan_pieces(&plan, size, sizes, 64);
  if (n < 0) {
    return {{n, 0}};
  }
  std::vector<std::pair<int64_t, int64_t>> pieces;
  for (int32_t i = 0; i < n && i < 64; ++i) {
    pieces.emplace_back(sizes[2 * i], sizes[2 * i + 1]);
  }
  return pieces;
}

using PieceList = std::vector<std::pair<int64_t, int64_t>>;

}  // namespace tune_range_test
