// libtune_range.so (runtime/tune_range.h) with host kernels: a GEMM compiled for fixed sizes
// answers every size of an M range (split and padded), an N range and a K range (padded copies)
// exactly; the refusals of bad plans and sizes; the memory operations, their failures and the
// release of every padded copy. The planner's choices are range_planner_test.cc's, the recording
// range_recording_test.cc's.

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "range_test_kernels.h"
#include "runtime/tune_gpurt.h"
#include "runtime/tune_range.h"

namespace {

using namespace tune_range_test;

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

TEST(RangeCall, APaddedCopyReusedFromALongerCallHoldsNoStaleRows) {
  // Host copies are reused per thread: from the longest size down, each padded piece gets a block
  // that held more real rows than it has, and only the zeros past them keep a K sum exact.
  auto k_plan = GemmPlan(Dim::kK, {3, 8, 13});
  auto m_plan = GemmPlan(Dim::kM, {4, 16});
  for (int64_t size = 15; size >= 1; --size) {
    ExpectExact(*m_plan, Dim::kM, size);
    ExpectExact(*k_plan, Dim::kK, std::min<int64_t>(size, 12));
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
  std::vector<bool> zeroed_to_end;  // each zero(): whether it ran to its copy's end
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
  m->bytes.erase(ptr);
  std::free(ptr);
  return 0;
}

int32_t CountingZero(void* ctx, void* ptr, uint64_t bytes, void* stream) {
  auto* m = static_cast<CountingMemory*>(ctx);
  m->streams.insert(stream);
  ++m->zeros;
  // The copy that holds [ptr, ptr + bytes): the last one starting at or before ptr.
  auto block = m->bytes.upper_bound(ptr);
  char* at = static_cast<char*>(ptr);
  if (bytes % 4 != 0 || reinterpret_cast<uintptr_t>(ptr) % 4 != 0 || block == m->bytes.begin() ||
      !m->live.contains((--block)->first) ||
      at + bytes > static_cast<char*>(block->first) + block->second) {
    m->misuse.push_back("zero of " + std::to_string(bytes) + " bytes");
    return 0;
  }
  m->zeroed_to_end.push_back(at + bytes == static_cast<char*>(block->first) + block->second);
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
    EXPECT_EQ(memory.zeroed_to_end, std::vector<bool>(memory.zeros, true))
        << "zeros run from where the copied rows end (or the start) to the copy's end";
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

}  // namespace
