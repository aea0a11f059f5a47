// libtune_range.so (runtime/tune_range.h) with host kernels: a GEMM compiled for fixed sizes
// answers every size of an M range (split and padded), an N range and a K range (padded copies)
// exactly; the planner's choices; the refusals of bad plans and sizes; the memory operations, their
// failures and the release of every padded copy; and the recording of sizes, run in child
// processes (TUNE_RECORD_SHAPES is read once per process).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/tune_gpurt.h"
#include "runtime/tune_range.h"

extern char** environ;

namespace {

// ---- The kernels: C = alpha * A x B, row-major, A [M][K], B [K][N], C [M][N], alpha a scalar
// argument that carries no ranged dimension. Arguments: A, B, C, &alpha.

void Gemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c, float alpha) {
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
thread_local KernelLog* t_log = nullptr;

// Returns the kernel's code: 0, or the injected failure.
int32_t Note(int64_t size, void* const* args, void* stream) {
  if (t_log == nullptr) {
    return 0;
  }
  t_log->sizes.push_back(size);
  t_log->streams.push_back(stream);
  t_log->scalars.push_back(args[3]);
  return size == t_log->fail_size ? t_log->fail_code : 0;
}

// The fixed dimensions of each family (the ranged one is the kernel's size).
constexpr int64_t kMRangeN = 3, kMRangeK = 5;
constexpr int64_t kNRangeM = 4, kNRangeK = 3;
constexpr int64_t kKRangeM = 3, kKRangeN = 4;

template <int64_t M>
int32_t GemmM(void* const* args, void* stream) {
  if (int32_t rc = Note(M, args, stream); rc != 0) {
    return rc;
  }
  Gemm(M, kMRangeN, kMRangeK, static_cast<const float*>(args[0]),
       static_cast<const float*>(args[1]), static_cast<float*>(args[2]),
       *static_cast<const float*>(args[3]));
  return 0;
}

template <int64_t N>
int32_t GemmN(void* const* args, void* stream) {
  if (int32_t rc = Note(N, args, stream); rc != 0) {
    return rc;
  }
  Gemm(kNRangeM, N, kNRangeK, static_cast<const float*>(args[0]),
       static_cast<const float*>(args[1]), static_cast<float*>(args[2]),
       *static_cast<const float*>(args[3]));
  return 0;
}

template <int64_t K>
int32_t GemmK(void* const* args, void* stream) {
  if (int32_t rc = Note(K, args, stream); rc != 0) {
    return rc;
  }
  Gemm(kKRangeM, kKRangeN, K, static_cast<const float*>(args[0]),
       static_cast<const float*>(args[1]), static_cast<float*>(args[2]),
       *static_cast<const float*>(args[3]));
  return 0;
}

constexpr int64_t kMaxSize = 24;  // kernels exist for sizes 1..kMaxSize

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
constexpr auto kMKernels = MTable(std::make_index_sequence<kMaxSize>());
constexpr auto kNKernels = NTable(std::make_index_sequence<kMaxSize>());
constexpr auto kKKernels = KTable(std::make_index_sequence<kMaxSize>());

int32_t Noop(void* const*, void*) { return 0; }

// ---- Plans.

enum class Dim { kM, kN, kK };

struct Dims {
  int64_t m, n, k;
};

Dims DimsAt(Dim dim, int64_t size) {
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
std::unique_ptr<Plan> GemmPlan(Dim dim, const std::vector<int64_t>& sizes,
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

constexpr size_t kGuard = 64;
constexpr float kCanary = 12345.0f;

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

// The (kernel size, piece length) pairs of `size`, or the code as one pair {code, 0}.
std::vector<std::pair<int64_t, int64_t>> Pieces(const tune_range_plan& plan, int64_t size) {
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

// Runs `size` on the plan and checks the result against the reference, the guards, the inputs,
// and that the kernels called are those tune_range_plan_pieces reports.
void ExpectExact(const Plan& p, Dim dim, int64_t size, void* stream = nullptr) {
  SCOPED_TRACE(p.before + std::to_string(size) + p.after);
  Operands ops(DimsAt(dim, size));
  const std::vector<float> a(ops.a.data(), ops.a.data() + ops.a.size());
  const std::vector<float> b(ops.b.data(), ops.b.data() + ops.b.size());
  const std::vector<float> want = ops.Reference();
  KernelLog log;
  t_log = &log;
  const int32_t rc = tune_range_call(&p.plan, size, ops.args.data(), stream);
  t_log = nullptr;
  ASSERT_EQ(rc, 0) << tune_range_last_error();
  EXPECT_STREQ(tune_range_last_error(), "");
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(ops.c.data()[i], want[i]) << "C element " << i;
  }
  EXPECT_TRUE(ops.a.GuardsIntact() && ops.b.GuardsIntact() && ops.c.GuardsIntact());
  EXPECT_EQ(std::vector<float>(ops.a.data(), ops.a.data() + ops.a.size()), a);
  EXPECT_EQ(std::vector<float>(ops.b.data(), ops.b.data() + ops.b.size()), b);
  std::vector<int64_t> planned;
  for (const auto& piece : Pieces(p.plan, size)) {
    planned.push_back(piece.first);
  }
  EXPECT_EQ(log.sizes, planned);
  for (size_t i = 0; i < log.sizes.size(); ++i) {
    EXPECT_EQ(log.streams[i], stream);
    EXPECT_EQ(log.scalars[i], &ops.alpha) << "an argument without the dimension is passed as is";
  }
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// ---- Every size answered exactly.

TEST(RangeCall, EverySizeOfASplittableMRangeIsExact) {
  auto powers = GemmPlan(Dim::kM, {1, 2, 4, 8, 16});
  for (int64_t size = 1; size <= 16; ++size) {
    ExpectExact(*powers, Dim::kM, size);
  }
  // No kernel of size 1: remainders below 5 are padded; seconds make some splits cheap.
  auto sparse = GemmPlan(Dim::kM, {5, 12, 20}, {5e-6, 7e-6, 30e-6});
  for (int64_t size = 1; size <= 20; ++size) {
    ExpectExact(*sparse, Dim::kM, size);
  }
  EXPECT_EQ(Pieces(sparse->plan, 17), (PieceList{{12, 12}, {5, 5}}));
  EXPECT_EQ(Pieces(sparse->plan, 19), (PieceList{{12, 12}, {12, 7}}));
  EXPECT_EQ(Pieces(sparse->plan, 3), (PieceList{{5, 3}}));
}

TEST(RangeCall, EverySizeOfAnNRangeIsExactThroughOnePaddedCopy) {
  auto plan = GemmPlan(Dim::kN, {2, 5, 9, 16});
  for (int64_t size = 1; size <= 16; ++size) {
    ExpectExact(*plan, Dim::kN, size);
  }
  EXPECT_EQ(Pieces(plan->plan, 10), (PieceList{{16, 10}})) << "not splittable: one padded piece";
}

TEST(RangeCall, EverySizeOfAKRangeSumsExactlyOverItsZeroPadding) {
  auto plan = GemmPlan(Dim::kK, {3, 8, 13});
  for (int64_t size = 1; size <= 13; ++size) {
    ExpectExact(*plan, Dim::kK, size);
  }
}

TEST(RangeCall, ARangeFromLoAboveOneAnswersLoToHi) {
  auto plan = GemmPlan(Dim::kM, {6, 16}, {}, /*lo=*/4);
  for (int64_t size = 4; size <= 16; ++size) {
    ExpectExact(*plan, Dim::kM, size);
  }
  Operands ops(DimsAt(Dim::kM, 3));
  EXPECT_EQ(tune_range_call(&plan->plan, 3, ops.args.data(), nullptr),
            TUNE_RANGE_ERROR_OUT_OF_RANGE);
  EXPECT_STREQ(tune_range_last_error(),
               "size 3 is outside the range gemm:M=4..16,N=3,K=5 (accepted: 4 to 16)");
}

TEST(RangeCall, ASizeWithItsOwnKernelRunsItOnTheCallersPointersAndStream) {
  auto plan = GemmPlan(Dim::kN, {2, 5, 9, 16});
  int stream_cell = 0;
  ExpectExact(*plan, Dim::kN, 9, &stream_cell);
  ExpectExact(*plan, Dim::kN, 7, &stream_cell);  // padded: the stream reaches the kernel too
}

TEST(RangeCall, ConcurrentCallsOnOnePlanAreExact) {
  auto plan = GemmPlan(Dim::kM, {1, 2, 4, 8, 16});
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        const int64_t size = 1 + (round * 5 + t) % 16;
        Operands ops(DimsAt(Dim::kM, size));
        const std::vector<float> want = ops.Reference();
        if (tune_range_call(&plan->plan, size, ops.args.data(), nullptr) != 0 ||
            std::vector<float>(ops.c.data(), ops.c.data() + ops.c.size()) != want) {
          ++wrong;
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  EXPECT_EQ(wrong.load(), 0);
}

// ---- Refusals.

TEST(RangeCall, ASizeOutsideTheRangeIsRefusedNamingTheRangeAndTheAcceptedSizes) {
  std::vector<int64_t> sizes = {1, 64, 4096};
  auto plan = GemmPlan(Dim::kM, sizes);
  plan->after = ",N=4096,K=4096";
  plan->Relink();
  float cell[4] = {};
  void* args[4] = {cell, cell, cell, cell};
  EXPECT_EQ(tune_range_call(&plan->plan, 5000, args, nullptr), TUNE_RANGE_ERROR_OUT_OF_RANGE);
  EXPECT_STREQ(tune_range_last_error(),
               "size 5000 is outside the range gemm:M=1..4096,N=4096,K=4096 (accepted: 1 to 4096)");
  EXPECT_EQ(tune_range_call(&plan->plan, 0, args, nullptr), TUNE_RANGE_ERROR_OUT_OF_RANGE);
  EXPECT_TRUE(Contains(tune_range_last_error(), "size 0 is outside")) << tune_range_last_error();
  EXPECT_EQ(tune_range_call(&plan->plan, -3, args, nullptr), TUNE_RANGE_ERROR_OUT_OF_RANGE);
  int64_t pair[2];
  EXPECT_EQ(tune_range_plan_pieces(&plan->plan, 4097, pair, 1), TUNE_RANGE_ERROR_OUT_OF_RANGE);
  EXPECT_TRUE(Contains(tune_range_last_error(), "size 4097 is outside")) << tune_range_last_error();
  // The next successful call clears the text.
  EXPECT_EQ(tune_range_plan_pieces(&plan->plan, 64, pair, 1), 1);
  EXPECT_STREQ(tune_range_last_error(), "");
}

struct BadPlanCase {
  const char* what;
  void (*edit)(Plan&);
  const char* named;  // in the message
};

const tune_range_memory kNullZeroMemory = {
    [](void*, uint64_t, void*, void** out) -> int32_t { return *out = nullptr, -1; },
    [](void*, void*, void*) -> int32_t { return 0; }, nullptr,
    [](void*, void*, uint64_t, const void*, uint64_t, uint64_t, uint64_t, void*) -> int32_t {
      return 0;
    },
    nullptr};

TEST(RangeCall, ABadPlanIsRefusedNamingTheFieldAndTheAcceptedForm) {
  const BadPlanCase cases[] = {
      {"another ABI", [](Plan& p) { p.plan.abi_version = 2; }, "abi_version"},
      {"no arguments", [](Plan& p) { p.plan.num_args = 0; }, "num_args is 0 (accepted: 1 to 16)"},
      {"17 arguments", [](Plan& p) { p.plan.num_args = 17; }, "num_args is 17"},
      {"no kernels", [](Plan& p) { p.kernels.clear(); }, "num_kernels is 0"},
      {"descending", [](Plan& p) { std::swap(p.kernels[1], p.kernels[2]); },
       "kernels[2].size 2 does not ascend past kernels[1].size 4"},
      {"repeated", [](Plan& p) { p.kernels[2].size = 2; }, "kernels[2].size 2 does not ascend"},
      {"beyond hi", [](Plan& p) { p.kernels[3].size = 17; }, "kernels[3].size 17 is outside"},
      {"below lo", [](Plan& p) { p.plan.lo = 2; },
       "kernels[0].size 1 is outside [lo, hi] = [2, 16]"},
      {"largest not hi", [](Plan& p) { p.plan.hi = 20; }, "is not hi 20"},
      {"no call", [](Plan& p) { p.kernels[2].call = nullptr; }, "kernels[2].call is NULL"},
      {"negative seconds", [](Plan& p) { p.kernels[0].seconds = -1; }, "kernels[0].seconds"},
      {"lo above hi", [](Plan& p) { p.plan.lo = 17; }, "lo 17, hi 16 (accepted: 1 <= lo <= hi)"},
      {"lo 0", [](Plan& p) { p.plan.lo = 0; }, "lo 0"},
      {"arg out of range", [](Plan& p) { p.tensors[1].arg = 4; },
       "tensors[1].arg is 4 (accepted: an argument index, 0 to num_args - 1 = 3)"},
      {"negative arg", [](Plan& p) { p.tensors[0].arg = -1; }, "tensors[0].arg is -1"},
      {"repeated arg", [](Plan& p) { p.tensors[1].arg = 0; }, "tensors[1].arg 0 repeats"},
      {"outer 0", [](Plan& p) { p.tensors[0].outer = 0; }, "tensors[0].outer is 0"},
      {"inner 0", [](Plan& p) { p.tensors[1].inner_bytes = 0; }, "tensors[1].inner_bytes is 0"},
      {"split outer", [](Plan& p) { p.tensors[1].outer = 3; },
       "tensors[1].outer is 3 in a splittable plan"},
      {"overflow", [](Plan& p) { p.tensors[0].inner_bytes = INT64_MAX / 8; }, "overflows"},
      {"too many tensors", [](Plan& p) { p.tensors.resize(5, {3, 0, 1, 4}); }, "num_tensors is 5"},
      {"memory without zero", [](Plan& p) { p.plan.memory = &kNullZeroMemory; },
       "memory->zero is NULL"},
  };
  for (const BadPlanCase& c : cases) {
    SCOPED_TRACE(c.what);
    auto plan = GemmPlan(Dim::kM, {1, 2, 4, 16});
    c.edit(*plan);
    plan->Relink();
    Operands ops(DimsAt(Dim::kM, 3));
    EXPECT_EQ(tune_range_call(&plan->plan, 3, ops.args.data(), nullptr), TUNE_RANGE_ERROR_BAD_PLAN);
    const std::string error = tune_range_last_error();
    EXPECT_TRUE(Contains(error, c.named)) << error;
    if (std::string(c.what) != "another ABI") {
      EXPECT_TRUE(Contains(error, "bad range plan gemm:M=")) << error;
      EXPECT_TRUE(Contains(error, "a bug of the library's generator")) << error;
    } else {
      EXPECT_TRUE(Contains(error, "version 2")) << error;
    }
    int64_t pair[2];
    EXPECT_EQ(tune_range_plan_pieces(&plan->plan, 3, pair, 1), TUNE_RANGE_ERROR_BAD_PLAN);
    EXPECT_EQ(tune_range_last_error(), error);
    EXPECT_EQ(ops.c.data()[0], -999.0f) << "nothing ran";
  }
  EXPECT_EQ(tune_range_call(nullptr, 3, nullptr, nullptr), TUNE_RANGE_ERROR_BAD_PLAN);
  EXPECT_TRUE(Contains(tune_range_last_error(), "tune_range_call: the plan is NULL"));
  auto plan = GemmPlan(Dim::kM, {1, 2, 4, 16});
  EXPECT_EQ(tune_range_call(&plan->plan, 3, nullptr, nullptr), TUNE_RANGE_ERROR_BAD_PLAN);
  EXPECT_TRUE(Contains(tune_range_last_error(), "args is NULL")) << tune_range_last_error();
  EXPECT_EQ(tune_range_plan_pieces(&plan->plan, 3, nullptr, 2), TUNE_RANGE_ERROR_BAD_PLAN);
  EXPECT_TRUE(Contains(tune_range_last_error(), "capacity")) << tune_range_last_error();
}

TEST(RangeCall, ANullTensorOfASizeWithoutItsOwnKernelIsRefused) {
  auto plan = GemmPlan(Dim::kM, {1, 2, 4, 16});
  Operands ops(DimsAt(Dim::kM, 3));
  ops.args[2] = nullptr;
  EXPECT_EQ(tune_range_call(&plan->plan, 3, ops.args.data(), nullptr), TUNE_RANGE_ERROR_COPY);
  EXPECT_TRUE(Contains(tune_range_last_error(), "argument 2")) << tune_range_last_error();
}

// ---- Kernel errors.

TEST(RangeCall, AKernelsErrorStopsTheCallAndIsReturnedAsIs) {
  auto plan = GemmPlan(Dim::kM, {1, 2, 4, 8, 16});
  {
    Operands ops(DimsAt(Dim::kM, 13));  // 8 + 4 + 1
    KernelLog log;
    log.fail_size = 4;
    log.fail_code = 7;
    t_log = &log;
    EXPECT_EQ(tune_range_call(&plan->plan, 13, ops.args.data(), nullptr), 7);
    t_log = nullptr;
    EXPECT_EQ(log.sizes, (std::vector<int64_t>{8, 4})) << "the piece after the failure never ran";
    EXPECT_TRUE(Contains(tune_range_last_error(), "the kernel of size 4 returned 7"))
        << tune_range_last_error();
  }
  {
    auto padded = GemmPlan(Dim::kN, {2, 5, 9, 16});
    Operands ops(DimsAt(Dim::kN, 7));  // padded to 9
    KernelLog log;
    log.fail_size = 9;
    log.fail_code = -5;
    t_log = &log;
    EXPECT_EQ(tune_range_call(&padded->plan, 7, ops.args.data(), nullptr), -5);
    t_log = nullptr;
    EXPECT_EQ(ops.c.data()[0], -999.0f) << "a failed kernel's output is not copied back";
  }
  {
    Operands ops(DimsAt(Dim::kM, 16));
    KernelLog log;
    log.fail_size = 16;
    log.fail_code = 3;
    t_log = &log;
    EXPECT_EQ(tune_range_call(&plan->plan, 16, ops.args.data(), nullptr), 3);
    t_log = nullptr;
  }
}

// ---- Memory operations: a host implementation of the interface that counts, checks and fails
// on request (what a GPU library's tune_gpurt_device_memory does on the device).

struct CountingMemory {
  int allocs = 0, releases = 0, zeros = 0, copies = 0;
  int fail_alloc_at = -1;  // the index of the alloc that fails
  int fail_copy_at = -1;   // the index of the copy_2d that fails
  std::set<void*> live;
  std::map<void*, uint64_t> bytes;
  std::vector<uint64_t> zeroed;  // bytes of each zero()
  std::set<void*> streams;
  std::vector<std::string> misuse;
};

int32_t CountingAlloc(void* ctx, uint64_t bytes, void* stream, void** out) {
  auto* m = static_cast<CountingMemory*>(ctx);
  m->streams.insert(stream);
  if (m->allocs++ == m->fail_alloc_at) {
    *out = nullptr;
    return -1;
  }
  *out = std::malloc(bytes);
  std::memset(*out, 0xff, bytes);  // NaNs: whatever is not zeroed or copied in shows
  m->live.insert(*out);
  m->bytes[*out] = bytes;
  return 0;
}

int32_t CountingRelease(void* ctx, void* ptr, void* stream) {
  auto* m = static_cast<CountingMemory*>(ctx);
  m->streams.insert(stream);
  ++m->releases;
  if (m->live.erase(ptr) != 1) {
    m->misuse.push_back("release of a pointer not allocated");
  }
  std::free(ptr);
  return 0;
}

int32_t CountingZero(void* ctx, void* ptr, uint64_t bytes, void* stream) {
  auto* m = static_cast<CountingMemory*>(ctx);
  m->streams.insert(stream);
  ++m->zeros;
  m->zeroed.push_back(bytes);
  if (bytes % 4 != 0 || m->live.count(ptr) == 0 || bytes > m->bytes[ptr]) {
    m->misuse.push_back("zero of " + std::to_string(bytes) + " bytes");
  }
  std::memset(ptr, 0, bytes);
  return 0;
}

int32_t CountingCopy(void* ctx, void* dst, uint64_t dst_pitch, const void* src, uint64_t src_pitch,
                     uint64_t width, uint64_t height, void* stream) {
  auto* m = static_cast<CountingMemory*>(ctx);
  m->streams.insert(stream);
  if (m->copies++ == m->fail_copy_at) {
    return -3;
  }
  if (width > dst_pitch || width > src_pitch) {
    m->misuse.push_back("copy wider than a pitch");
  }
  for (uint64_t row = 0; row < height; ++row) {
    std::memcpy(static_cast<char*>(dst) + row * dst_pitch,
                static_cast<const char*>(src) + row * src_pitch, width);
  }
  return 0;
}

const char* CountingError() { return "the test's memory refused (injected)"; }

const tune_range_memory kCountingMemory = {CountingAlloc, CountingRelease, CountingZero,
                                           CountingCopy, CountingError};

TEST(RangeMemory, PaddedCopiesGoThroughThePlansMemoryOnTheCallersStreamAndAreReleased) {
  for (Dim dim : {Dim::kM, Dim::kN, Dim::kK}) {
    auto plan = GemmPlan(dim, {3, 8, 13});
    CountingMemory memory;
    plan->plan.memory = &kCountingMemory;
    plan->plan.memory_ctx = &memory;
    int stream_cell = 0;
    for (int64_t size = 1; size <= 13; ++size) {
      ExpectExact(*plan, dim, size, &stream_cell);
    }
    EXPECT_GT(memory.allocs, 0);
    EXPECT_EQ(memory.allocs, memory.releases);
    EXPECT_TRUE(memory.live.empty());
    EXPECT_EQ(memory.streams, (std::set<void*>{&stream_cell}));
    EXPECT_TRUE(memory.misuse.empty()) << memory.misuse.front();
    for (uint64_t zeroed : memory.zeroed) {
      EXPECT_EQ(zeroed % 256, 0u);
    }
  }
  // Sizes with their own kernel allocate nothing.
  auto plan = GemmPlan(Dim::kN, {3, 8, 13});
  CountingMemory memory;
  plan->plan.memory = &kCountingMemory;
  plan->plan.memory_ctx = &memory;
  ExpectExact(*plan, Dim::kN, 8);
  EXPECT_EQ(memory.allocs, 0);
}

TEST(RangeMemory, AFailedAllocationIsNoMemoryAndReleasesTheCopiesMadeBefore) {
  auto plan = GemmPlan(Dim::kN, {3, 8, 13});
  CountingMemory memory;
  memory.fail_alloc_at = 1;  // the second tensor's copy
  plan->plan.memory = &kCountingMemory;
  plan->plan.memory_ctx = &memory;
  Operands ops(DimsAt(Dim::kN, 5));
  KernelLog log;
  t_log = &log;
  EXPECT_EQ(tune_range_call(&plan->plan, 5, ops.args.data(), nullptr), TUNE_RANGE_ERROR_NO_MEMORY);
  t_log = nullptr;
  const std::string error = tune_range_last_error();
  EXPECT_TRUE(Contains(error, "for the zero-padded copy of argument 2")) << error;
  EXPECT_TRUE(Contains(error, "gemm:M=4,N=1..13,K=3")) << error;
  EXPECT_TRUE(Contains(error, "the test's memory refused (injected)")) << error;
  EXPECT_TRUE(log.sizes.empty());
  EXPECT_EQ(memory.releases, 1);
  EXPECT_TRUE(memory.live.empty());
}

TEST(RangeMemory, AFailedCopyIsACopyErrorWithTheMemorysTextAndReleasesEveryCopy) {
  // copy 0: B in (the only input carrying N); copy 1: C out.
  for (int fail_at : {0, 1}) {
    SCOPED_TRACE(fail_at);
    auto plan = GemmPlan(Dim::kN, {3, 8, 13});
    CountingMemory memory;
    memory.fail_copy_at = fail_at;
    plan->plan.memory = &kCountingMemory;
    plan->plan.memory_ctx = &memory;
    Operands ops(DimsAt(Dim::kN, 5));
    KernelLog log;
    t_log = &log;
    EXPECT_EQ(tune_range_call(&plan->plan, 5, ops.args.data(), nullptr), TUNE_RANGE_ERROR_COPY);
    t_log = nullptr;
    const std::string error = tune_range_last_error();
    EXPECT_TRUE(Contains(error, fail_at == 0 ? "copying in the zero-padded copy of argument 1"
                                             : "copying out the zero-padded copy of output "
                                               "argument 2"))
        << error;
    EXPECT_TRUE(Contains(error, "the test's memory refused (injected)")) << error;
    EXPECT_EQ(log.sizes.size(), fail_at == 0 ? 0u : 1u);
    EXPECT_EQ(memory.allocs, fail_at == 0 ? 1 : 2) << "a failed copy in stops the allocations";
    EXPECT_EQ(memory.releases, memory.allocs);
    EXPECT_TRUE(memory.live.empty());
  }
}

TEST(RangeMemory, AKernelsErrorInAPaddedPieceReleasesItsCopies) {
  auto plan = GemmPlan(Dim::kK, {3, 8, 13});
  CountingMemory memory;
  plan->plan.memory = &kCountingMemory;
  plan->plan.memory_ctx = &memory;
  Operands ops(DimsAt(Dim::kK, 6));
  KernelLog log;
  log.fail_size = 8;
  log.fail_code = 11;
  t_log = &log;
  EXPECT_EQ(tune_range_call(&plan->plan, 6, ops.args.data(), nullptr), 11);
  t_log = nullptr;
  EXPECT_EQ(memory.allocs, 2);
  EXPECT_EQ(memory.releases, 2);
  EXPECT_TRUE(memory.live.empty());
}

// The GPU runtime's memory operations without a GPU driver: a padded size says the driver is
// missing; a size with its own kernel needs no memory and runs.
TEST(RangeMemory, GpuDeviceMemoryWithoutADriverSaysSo) {
  struct MissingDriver {  // for this test's first part
    MissingDriver() { setenv("TUNE_GPURT_DRIVER", "libtune_test_missing_driver.so", 1); }
    ~MissingDriver() { unsetenv("TUNE_GPURT_DRIVER"); }
  };
  auto missing = std::make_unique<MissingDriver>();
  for (int32_t api : {TUNE_GPURT_API_CUDA, TUNE_GPURT_API_HIP}) {
    SCOPED_TRACE(api);
    tune_gpurt_module module{TUNE_GPURT_ABI_VERSION, api, nullptr, 0, nullptr};
    auto plan = GemmPlan(Dim::kN, {2, 5, 9, 16});
    plan->plan.memory = &tune_gpurt_device_memory;
    plan->plan.memory_ctx = &module;
    Operands ops(DimsAt(Dim::kN, 7));  // padded to 9
    EXPECT_EQ(tune_range_call(&plan->plan, 7, ops.args.data(), nullptr),
              TUNE_RANGE_ERROR_NO_MEMORY);
    EXPECT_TRUE(Contains(tune_range_last_error(), "libtune_test_missing_driver.so"))
        << tune_range_last_error();
    EXPECT_TRUE(Contains(tune_range_last_error(), api == TUNE_GPURT_API_CUDA
                                                      ? "CUDA driver library not found"
                                                      : "HIP runtime library not found"))
        << tune_range_last_error();
    ExpectExact(*plan, Dim::kN, 9);

    void* ptr = &module;
    EXPECT_EQ(tune_gpurt_device_memory.alloc(&module, 256, nullptr, &ptr),
              TUNE_GPURT_ERROR_DRIVER_NOT_FOUND);
    EXPECT_EQ(ptr, nullptr);
    EXPECT_EQ(tune_gpurt_device_memory.release(&module, &module, nullptr),
              TUNE_GPURT_ERROR_DRIVER_NOT_FOUND);
    EXPECT_EQ(tune_gpurt_device_memory.zero(&module, &module, 256, nullptr),
              TUNE_GPURT_ERROR_DRIVER_NOT_FOUND);
    EXPECT_EQ(tune_gpurt_device_memory.copy_2d(&module, &module, 16, &module, 16, 8, 2, nullptr),
              TUNE_GPURT_ERROR_DRIVER_NOT_FOUND);
    EXPECT_TRUE(Contains(tune_gpurt_device_memory.last_error(), "not found"))
        << tune_gpurt_device_memory.last_error();
  }
  missing.reset();
  void* ptr = nullptr;
  EXPECT_EQ(tune_gpurt_device_memory.alloc(nullptr, 256, nullptr, &ptr),
            TUNE_GPURT_ERROR_BAD_ARGUMENT);
  EXPECT_TRUE(Contains(tune_gpurt_last_error(), "tune_gpurt_device_memory.alloc"))
      << tune_gpurt_last_error();
  tune_gpurt_module old{TUNE_GPURT_ABI_VERSION + 1, TUNE_GPURT_API_CUDA, nullptr, 0, nullptr};
  EXPECT_EQ(tune_gpurt_device_memory.copy_2d(&old, &old, 16, &old, 16, 8, 2, nullptr),
            TUNE_GPURT_ERROR_BAD_ARGUMENT);
  EXPECT_TRUE(Contains(tune_gpurt_last_error(), "ABI version")) << tune_gpurt_last_error();
}

// ---- The planner.

// Kernels of `sizes` that are never run, seconds as given.
std::unique_ptr<Plan> PricedPlan(const std::vector<int64_t>& sizes,
                                 const std::vector<double>& seconds, bool splittable = true) {
  auto plan = GemmPlan(Dim::kM, sizes, seconds);
  for (auto& kernel : plan->kernels) {
    kernel.call = &Noop;
  }
  plan->plan.splittable = splittable ? 1 : 0;
  plan->Relink();
  return plan;
}

TEST(RangePieces, SecondsProportionalToSizeSplitIntoTheLargestKernels) {
  auto plan = PricedPlan({1, 2, 4, 8, 16, 32}, {1e-6, 2e-6, 4e-6, 8e-6, 16e-6, 32e-6});
  EXPECT_EQ(Pieces(plan->plan, 12), (PieceList{{8, 8}, {4, 4}}));
  EXPECT_EQ(Pieces(plan->plan, 13), (PieceList{{8, 8}, {4, 4}, {1, 1}}));
  EXPECT_EQ(Pieces(plan->plan, 31), (PieceList{{16, 16}, {8, 8}, {4, 4}, {2, 2}, {1, 1}}));
  EXPECT_EQ(Pieces(plan->plan, 16), (PieceList{{16, 16}})) << "its own kernel";
}

TEST(RangePieces, SecondsThatFavourTheLargerKernelPad) {
  auto plan = PricedPlan({1, 2, 4, 8, 16, 32}, {1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3});
  EXPECT_EQ(Pieces(plan->plan, 12), (PieceList{{16, 12}}));
  EXPECT_EQ(Pieces(plan->plan, 17), (PieceList{{32, 17}}));
  // 16 is cheaper than 8 + 4: 12 pads.
  auto cheap16 = PricedPlan({1, 2, 4, 8, 16, 32}, {1e-6, 2e-6, 4e-6, 8e-6, 11e-6, 32e-6});
  EXPECT_EQ(Pieces(cheap16->plan, 12), (PieceList{{16, 12}}));
  EXPECT_EQ(Pieces(cheap16->plan, 10), (PieceList{{8, 8}, {2, 2}}));
}

TEST(RangePieces, WithoutEverySecondsKernelsArePricedBySize) {
  auto plan = PricedPlan({1, 2, 4, 8, 16, 32}, {1e-3, 1e-3, 1e-3, 1e-3, 0, 1e-3});
  EXPECT_EQ(Pieces(plan->plan, 12), (PieceList{{8, 8}, {4, 4}}));
  EXPECT_EQ(Pieces(plan->plan, 17), (PieceList{{16, 16}, {1, 1}}));
}

TEST(RangePieces, ATiePrefersFewerPieces) {
  // 6: pad to 8 (8) or 4 + 2 padded to 4 (8).
  auto plan = PricedPlan({4, 8}, {});
  EXPECT_EQ(Pieces(plan->plan, 6), (PieceList{{8, 6}}));
  EXPECT_EQ(Pieces(plan->plan, 5), (PieceList{{8, 5}}));
  // A remainder below the smallest kernel is padded to it: 9 = 8 + 1 padded to 4 (12 < 16).
  auto wide = PricedPlan({4, 8, 16}, {});
  EXPECT_EQ(Pieces(wide->plan, 9), (PieceList{{8, 8}, {4, 1}}));
  EXPECT_EQ(Pieces(wide->plan, 13), (PieceList{{16, 13}})) << "8 + 4 + 1 padded to 4 ties 16";
}

TEST(RangePieces, ANonSplittableRangeAlwaysPads) {
  auto plan = PricedPlan({1, 2, 4, 8, 16, 32}, {1e-6, 2e-6, 4e-6, 8e-6, 16e-6, 32e-6},
                         /*splittable=*/false);
  EXPECT_EQ(Pieces(plan->plan, 12), (PieceList{{16, 12}}));
  EXPECT_EQ(Pieces(plan->plan, 3), (PieceList{{4, 3}}));
  EXPECT_EQ(Pieces(plan->plan, 8), (PieceList{{8, 8}}));
}

TEST(RangePieces, ASplitOfMoreThan64PiecesIsNotConsidered) {
  auto plan = PricedPlan({1, 1000}, {1e-6, 1.0});
  EXPECT_EQ(Pieces(plan->plan, 64), PieceList(64, {1, 1}));
  EXPECT_EQ(Pieces(plan->plan, 65), (PieceList{{1000, 65}}));
  EXPECT_EQ(Pieces(plan->plan, 999), (PieceList{{1000, 999}}));
}

TEST(RangePieces, ACapacityBelowTheCountWritesOnlyThatMany) {
  auto plan = PricedPlan({1, 2, 4, 8, 16, 32}, {});
  int64_t sizes[6] = {-1, -1, -1, -1, -1, -1};
  EXPECT_EQ(tune_range_plan_pieces(&plan->plan, 13, sizes, 1), 3);
  EXPECT_EQ(sizes[0], 8);
  EXPECT_EQ(sizes[1], 8);
  EXPECT_EQ(sizes[2], -1);
  EXPECT_EQ(tune_range_plan_pieces(&plan->plan, 13, nullptr, 0), 3);
}

// ---- Recording, in a child process started from this test binary: the scenario runs before
// main (a static initializer, below) when TUNE_RANGE_TEST_SCENARIO names one, with the
// environment the parent gave it.

constexpr int64_t kRecordHi = 16;

// The M range over kernels 1, 2, 4, 8, 16 (every size of 1..16 runs), the one at 8 built with
// a config measured at another size (recording counts it).
const tune_range_plan& RecordPlan() {
  static std::unique_ptr<Plan> plan = [] {
    std::unique_ptr<Plan> p = GemmPlan(Dim::kM, {1, 2, 4, 8, 16});
    p->kernels[3].measured = 0;
    return p;
  }();
  return plan->plan;
}

// Runs `size` with fresh operands; false (and a message) unless it returns `want`.
bool CallSize(int64_t size, int32_t want = 0) {
  Operands ops(DimsAt(Dim::kM, size > 0 && size <= kRecordHi ? size : 1));
  int32_t rc = tune_range_call(&RecordPlan(), size, ops.args.data(), nullptr);
  if (rc != want) {
    std::fprintf(stderr, "size %lld returned %d, not %d: %s\n", static_cast<long long>(size), rc,
                 want, tune_range_last_error());
    return false;
  }
  return true;
}

bool Flushed(int32_t want = 0) {
  int32_t rc = tune_range_flush_recording();
  if (rc != want) {
    std::fprintf(stderr, "flush returned %d, not %d: %s\n", rc, want, tune_range_last_error());
    return false;
  }
  return true;
}

// Two flushes: sizes 3 (x2), 5 and 8 (a kernel of its own, not measured), 4 and 16 (their own
// measured kernels) and 17 (out of range); then 3.
int ScenarioCounts() {
  bool ok = CallSize(3) && CallSize(3) && CallSize(5) && CallSize(8) && CallSize(4) &&
            CallSize(16) && CallSize(17, TUNE_RANGE_ERROR_OUT_OF_RANGE) && Flushed() && Flushed() &&
            CallSize(3) && Flushed();
  return ok ? 0 : 1;
}

// Records 7 (x5) and leaves by exit(): the exit handler appends them.
int ScenarioExit() {
  for (int i = 0; i < 5; ++i) {
    if (!CallSize(7)) {
      return 1;
    }
  }
  std::exit(0);
}

// 4 threads call 1000 times each over sizes with and without kernels, each flushing every 100
// calls while the others call; a last flush.
constexpr int64_t kThreadSizes[] = {3, 5, 4, 6, 7, 8, 9, 17, 12, 13};

int ScenarioThreads() {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        const int64_t size = kThreadSizes[i % std::size(kThreadSizes)];
        if (!CallSize(size, size > kRecordHi ? TUNE_RANGE_ERROR_OUT_OF_RANGE : 0)) {
          ++failures;
        }
        if (i % 100 == 99 && !Flushed()) {
          ++failures;
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  return failures.load() == 0 && Flushed() ? 0 : 1;
}

// TUNE_RECORD_SHAPES names a file in a folder that does not exist yet: the flush fails naming
// it, the counts are kept, and once the folder exists the next flush writes them.
int ScenarioUnwritable() {
  const char* path = std::getenv("TUNE_RECORD_SHAPES");
  if (!CallSize(6) || !CallSize(6) || !Flushed(TUNE_RANGE_ERROR_RECORDING)) {
    return 1;
  }
  const std::string error = tune_range_last_error();
  if (!Contains(error, path) || !Contains(error, std::strerror(ENOENT))) {
    std::fprintf(stderr, "the error does not name the file and the reason: %s\n", error.c_str());
    return 1;
  }
  const std::string folder = std::filesystem::path(path).parent_path();
  if (mkdir(folder.c_str(), 0755) != 0) {
    std::perror("mkdir");
    return 1;
  }
  return CallSize(6) && Flushed() ? 0 : 1;
}

// Recording off (TUNE_RECORD_SHAPES unset or empty): flush writes nothing and returns 0.
int ScenarioOff() {
  bool ok = CallSize(3) && CallSize(5) && Flushed();
  if (ok && std::strcmp(tune_range_last_error(), "") != 0) {
    std::fprintf(stderr, "flush left an error: %s\n", tune_range_last_error());
    ok = false;
  }
  std::exit(ok ? 0 : 1);  // the exit handler writes nothing either
}

// A forked child counts only its own calls: the parent records 3 (x2) before the fork, the child
// records 5 and exits, the parent flushes.
int ScenarioFork() {
  if (!CallSize(3) || !CallSize(3)) {
    return 1;
  }
  pid_t child = fork();
  if (child == 0) {
    std::exit(CallSize(5) ? 0 : 1);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "the forked child failed\n");
    return 1;
  }
  return Flushed() ? 0 : 1;
}

// Runs the scenario TUNE_RANGE_TEST_SCENARIO names, before gtest's main, and leaves.
[[maybe_unused]] const bool kScenarioRan = [] {
  const char* scenario = std::getenv("TUNE_RANGE_TEST_SCENARIO");
  if (scenario == nullptr) {
    unsetenv("TUNE_RECORD_SHAPES");  // this process records nothing
    return false;
  }
  const std::map<std::string, int (*)()> scenarios = {
      {"counts", ScenarioCounts},         {"exit", ScenarioExit}, {"threads", ScenarioThreads},
      {"unwritable", ScenarioUnwritable}, {"off", ScenarioOff},   {"fork", ScenarioFork}};
  auto it = scenarios.find(scenario);
  if (it == scenarios.end()) {
    std::fprintf(stderr, "unknown scenario %s\n", scenario);
    std::_Exit(2);
  }
  int rc = it->second();
  std::fflush(stderr);
  std::_Exit(rc);  // no exit handlers: the scenarios that want them call exit() themselves
}();

// A temporary folder removed with its files.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/tune_range_test.XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs this binary as the scenario's child with TUNE_RECORD_SHAPES = `record` (unset when
// null); returns its exit status (-1 when it did not exit).
int RunScenario(const std::string& scenario, const char* record) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "TUNE_RECORD_SHAPES=", 19) != 0 &&
        std::strncmp(*e, "TUNE_RANGE_TEST_SCENARIO=", 25) != 0) {
      env.emplace_back(*e);
    }
  }
  env.push_back("TUNE_RANGE_TEST_SCENARIO=" + scenario);
  if (record != nullptr) {
    env.push_back(std::string("TUNE_RECORD_SHAPES=") + record);
  }
  std::vector<char*> envp;
  for (auto& e : env) {
    envp.push_back(e.data());
  }
  envp.push_back(nullptr);
  char self[] = "/proc/self/exe";
  char* argv[] = {self, nullptr};
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    execve(self, argv, envp.data());
    std::_Exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
    return -1;
  }
  return WEXITSTATUS(status);
}

// A recording file read back: the pids of its chunks' comment lines, and each workload's
// summed count; lines of another form are kept in `bad`.
struct Recorded {
  std::vector<long> pids;
  std::map<std::string, uint64_t> counts;
  std::vector<std::string> bad;
  int lines = 0;
};

Recorded ReadRecording(const std::string& path) {
  Recorded r;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    ++r.lines;
    constexpr char kComment[] = "# sizes recorded by pid ";
    if (line.rfind(kComment, 0) == 0) {
      r.pids.push_back(std::stol(line.substr(sizeof kComment - 1)));
      continue;
    }
    size_t space = line.rfind(' ');
    if (space == std::string::npos || space == 0 ||
        line.find_first_not_of("0123456789", space + 1) != std::string::npos ||
        space + 1 == line.size()) {
      r.bad.push_back(line);
      continue;
    }
    r.counts[line.substr(0, space)] += std::stoull(line.substr(space + 1));
  }
  return r;
}

std::string MWorkload(int64_t m) { return "gemm:M=" + std::to_string(m) + ",N=3,K=5"; }

TEST(RangeRecording, SizesTheLogDidNotMeasureAreCountedAndAppendedAtEachFlush) {
  TempDir dir;
  const std::string file = dir.path() + "/sizes.txt";
  ASSERT_EQ(RunScenario("counts", file.c_str()), 0);
  Recorded r = ReadRecording(file);
  EXPECT_TRUE(r.bad.empty()) << r.bad.front();
  EXPECT_EQ(r.pids.size(), 2u) << "two flushes with counts; the empty one writes nothing";
  EXPECT_EQ(r.counts, (std::map<std::string, uint64_t>{
                          {MWorkload(3), 3}, {MWorkload(5), 1}, {MWorkload(8), 1}}));
  // The first chunk exactly: the comment, then one line per size in order.
  std::ifstream in(file);
  std::string first, second, third;
  std::getline(in, first);
  std::getline(in, second);
  std::getline(in, third);
  EXPECT_EQ(second, "gemm:M=3,N=3,K=5 2");
  EXPECT_EQ(third, "gemm:M=5,N=3,K=5 1");
  // A second process appends its own chunk.
  ASSERT_EQ(RunScenario("counts", file.c_str()), 0);
  r = ReadRecording(file);
  EXPECT_EQ(r.pids.size(), 4u);
  EXPECT_NE(r.pids[0], r.pids[2]);
  EXPECT_EQ(r.counts, (std::map<std::string, uint64_t>{
                          {MWorkload(3), 6}, {MWorkload(5), 2}, {MWorkload(8), 2}}));
  struct stat st;
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  const mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0644u & ~mask);
}

TEST(RangeRecording, TheCountsAreAppendedAtExit) {
  TempDir dir;
  const std::string file = dir.path() + "/sizes.txt";
  ASSERT_EQ(RunScenario("exit", file.c_str()), 0);
  Recorded r = ReadRecording(file);
  EXPECT_EQ(r.pids.size(), 1u);
  EXPECT_EQ(r.counts, (std::map<std::string, uint64_t>{{MWorkload(7), 5}}));
}

TEST(RangeRecording, FlushesConcurrentWithCallsFromFourThreadsLoseNothing) {
  TempDir dir;
  const std::string file = dir.path() + "/sizes.txt";
  ASSERT_EQ(RunScenario("threads", file.c_str()), 0);
  Recorded r = ReadRecording(file);
  EXPECT_TRUE(r.bad.empty()) << r.bad.front();
  std::map<std::string, uint64_t> want;
  for (int i = 0; i < 1000; ++i) {
    const int64_t size = kThreadSizes[i % std::size(kThreadSizes)];
    if (size != 4 && size <= kRecordHi) {  // 4 has a measured kernel; 8's is not measured
      want[MWorkload(size)] += 4;
    }
  }
  EXPECT_EQ(r.counts, want);
  EXPECT_GE(r.pids.size(), 1u);
}

TEST(RangeRecording, AnUnwritableFileIsAnErrorNamingItAndTheCountsWait) {
  TempDir dir;
  const std::string file = dir.path() + "/later/sizes.txt";
  ASSERT_EQ(RunScenario("unwritable", file.c_str()), 0);
  Recorded r = ReadRecording(file);
  EXPECT_EQ(r.pids.size(), 1u);
  EXPECT_EQ(r.counts, (std::map<std::string, uint64_t>{{MWorkload(6), 3}}));
}

TEST(RangeRecording, AnUnsetOrEmptyVariableRecordsNothing) {
  EXPECT_EQ(RunScenario("off", nullptr), 0);
  EXPECT_EQ(RunScenario("off", ""), 0);
  // In this process (recording off) flush is a no-op too.
  EXPECT_EQ(tune_range_flush_recording(), 0);
}

TEST(RangeRecording, AForkedChildCountsOnlyItsOwnCalls) {
  TempDir dir;
  const std::string file = dir.path() + "/sizes.txt";
  ASSERT_EQ(RunScenario("fork", file.c_str()), 0);
  Recorded r = ReadRecording(file);
  EXPECT_EQ(r.pids.size(), 2u);
  EXPECT_EQ(r.counts, (std::map<std::string, uint64_t>{{MWorkload(3), 2}, {MWorkload(5), 1}}));
}

}  // namespace
