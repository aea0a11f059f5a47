// End-to-end tests of the x86-64 backend without a JIT: IR -> Lower -> EmitCpuObject ->
// LinkSharedObject -> dlopen -> call, compared with plain C++ loops; plus substring checks on
// the optimised LLVM IR and assembly. (Calls out of a kernel and linking:
// cpu_backend_calls_test.cc.)
#include "codegen/llvm/cpu_backend.h"

#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "codegen/lower.h"
#include "common/files.h"
#include "common/host_cpu.h"
#include "gtest/gtest.h"
#include "tests/codegen/cpu_backend_build.h"

namespace tune {
namespace {

using ir::Allocate;
using ir::Block;
using ir::Buffer;
using ir::CallExtern;
using ir::Cast;
using ir::Evaluate;
using ir::Expr;
using ir::Fma;
using ir::For;
using ir::Load;
using ir::LoopKind;
using ir::LoweredFunc;
using ir::MemoryScope;
using ir::Stmt;
using ir::Store;
using ir::Type;
using ir::Var;
using testing::Build;
using testing::Iota;
using testing::Kernel1;
using testing::Kernel2;
using testing::Kernel3;
using testing::ReadBytes;
using testing::SharedObject;

// y = 2.5 * x + y over n elements: parallel blocks of 64 = 4 unrolled x 16 vector lanes, and a
// serial tail.
LoweredFunc Axpy(int64_t n, int lanes = 16) {
  Buffer x("x"), y("y");
  Var io("io"), ii("ii"), v("v"), t("t");
  int64_t block = 4 * lanes;
  Expr idx = io * block + ii * lanes + v;
  Stmt body = Store::Make(y, idx, Fma::Make(2.5f, x(idx), y(idx)));
  Stmt main = For::Make(io, 0, n / block, LoopKind::kParallel,
                        For::Make(ii, 0, 4, LoopKind::kUnrolled,
                                  For::Make(v, 0, lanes, LoopKind::kVectorized, body)));
  Stmt tail = For::Make(t, n / block * block, n % block, LoopKind::kSerial,
                        Store::Make(y, t, Fma::Make(2.5f, x(t), y(t))));
  return LoweredFunc{"axpy", {x, y}, Block::Make({main, tail})};
}

void CheckAxpy(const SharedObject& so, int64_t n) {
  auto* axpy = so.Get<Kernel2>("axpy");
  ASSERT_NE(axpy, nullptr);
  std::vector<float> x = Iota(n, 0.5f), y = Iota(n, -0.25f), want = y;
  for (int64_t i = 0; i < n; ++i) {
    want[i] = std::fma(2.5f, x[i], want[i]);
  }
  ASSERT_EQ(axpy(x.data(), y.data()), 0);
  EXPECT_EQ(y, want);
}

TEST(CpuBackendTest, AxpyWithOddSizeMatchesLoopSerially) {
  TempDir dir = TempDir::Create().value();
  std::string llvm_ir;
  auto so = Build({Axpy(1001)}, {.cpu = "native", .threads = 1}, dir, "axpy", &llvm_ir);
  ASSERT_TRUE(so.ok()) << so.status();
  CheckAxpy(**so, 1001);
  EXPECT_EQ(llvm_ir.find("GOMP_parallel"), std::string::npos) << "threads=1 must not fork";
  EXPECT_EQ(ReadBytes(dir.File("axpy.so")).find("libgomp.so.1"), std::string::npos);
}

TEST(CpuBackendTest, ParallelLoopWithFourThreadsUsesLibgompAndMatchesLoop) {
  TempDir dir = TempDir::Create().value();
  std::string llvm_ir;
  // 13 parallel iterations: not a multiple of the thread count.
  auto so = Build({Axpy(13 * 64 + 5)}, {.cpu = "native", .threads = 4}, dir, "axpy4", &llvm_ir);
  ASSERT_TRUE(so.ok()) << so.status();
  EXPECT_NE(llvm_ir.find("@GOMP_parallel("), std::string::npos);
  EXPECT_NE(llvm_ir.find("omp_get_thread_num"), std::string::npos);
  EXPECT_NE(ReadBytes(dir.File("axpy4.so")).find("libgomp.so.1"), std::string::npos)
      << "the library must name libgomp.so.1 as a dependency";
  CheckAxpy(**so, 13 * 64 + 5);
}

// The CPUs `thread` may run on.
std::vector<int> AllowedCpus(pthread_t thread) {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(pthread_getaffinity_np(thread, sizeof(set), &set), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) {
      cpus.push_back(cpu);
    }
  }
  return cpus;
}

// Runs the parallel axpy of `so` on a fresh thread (so that binding it leaves the test's threads
// alone) and returns the CPUs that thread may use afterwards.
std::vector<int> CpusAfterAxpyOnAFreshThread(const SharedObject& so, int64_t n) {
  std::vector<int> after;
  std::thread caller([&] {
    CheckAxpy(so, n);
    after = AllowedCpus(pthread_self());
  });
  caller.join();
  return after;
}

TEST(CpuBackendTest, BindCloseAndSpreadPinTheCallingThreadToTheFirstAllowedCpu) {
  const std::vector<int> allowed = AllowedCpus(pthread_self());
  ASSERT_FALSE(allowed.empty());
  TempDir dir = TempDir::Create().value();
  for (ThreadBinding bind : {ThreadBinding::kClose, ThreadBinding::kSpread}) {
    SCOPED_TRACE(std::string(ThreadBindingName(bind)));
    std::string llvm_ir;
    const std::string stem = "axpy_" + std::string(ThreadBindingName(bind));
    auto so =
        Build({Axpy(9 * 64)}, {.cpu = "native", .threads = 2, .bind = bind}, dir, stem, &llvm_ir);
    ASSERT_TRUE(so.ok()) << so.status();
    EXPECT_NE(llvm_ir.find("sched_setaffinity"), std::string::npos);
    // The caller is thread 0 of the team: the first CPU it was allowed, on every call.
    EXPECT_EQ(CpusAfterAxpyOnAFreshThread(**so, 9 * 64), std::vector<int>{allowed.front()});
  }
  EXPECT_EQ(AllowedCpus(pthread_self()), allowed) << "the test's own thread stays unbound";
}

TEST(CpuBackendTest, WithoutBindTheCallingThreadKeepsEveryCpu) {
  const std::vector<int> allowed = AllowedCpus(pthread_self());
  TempDir dir = TempDir::Create().value();
  std::string llvm_ir;
  auto so = Build({Axpy(9 * 64)}, {.cpu = "native", .threads = 2}, dir, "axpy_free", &llvm_ir);
  ASSERT_TRUE(so.ok()) << so.status();
  EXPECT_EQ(llvm_ir.find("sched_setaffinity"), std::string::npos);
  EXPECT_EQ(CpusAfterAxpyOnAFreshThread(**so, 9 * 64), allowed);
}

TEST(CpuBackendTest, AtomicAddsFromParallelIterationsAllLand) {
  // sum[i % 4] += x[i] from 4 threads over 4000 iterations.
  Buffer x("x"), sum("sum");
  Var i("i");
  Stmt body = For::Make(i, 0, 4000, LoopKind::kParallel,
                        Store::MakeAtomicAdd(sum, i % 4, Load::Make(x, i)));
  TempDir dir = TempDir::Create().value();
  std::string llvm_ir;
  auto so = Build({LoweredFunc{"scatter_add", {x, sum}, body}}, {.cpu = "native", .threads = 4},
                  dir, "scatter_add", &llvm_ir);
  ASSERT_TRUE(so.ok()) << so.status();
  EXPECT_NE(llvm_ir.find("atomicrmw fadd"), std::string::npos) << llvm_ir;
  auto* kernel = (*so)->Get<Kernel2>("scatter_add");
  ASSERT_NE(kernel, nullptr);
  std::vector<float> xs(4000, 1.0f), sums(4, 0.0f);
  ASSERT_EQ(kernel(xs.data(), sums.data()), 0);
  EXPECT_EQ(sums, std::vector<float>(4, 1000.0f));
}

TEST(CpuBackendTest, MatmulWithStackAccumulatorMatchesLoop) {
  // C[M][N] = A[M][K] * B[K][N]; per row, 16-wide column blocks accumulate in a stack tile.
  const int64_t m = 5, n = 50, k = 13, w = 16;
  Buffer a("A"), b("B"), c("C"), acc("acc", MemoryScope::kStack);
  Var i("i"), jo("jo"), jv("jv"), kk("k"), j("j");
  Expr col = jo * w + jv;
  Stmt init = For::Make(jv, 0, w, LoopKind::kVectorized, Store::Make(acc, jv, 0.0f));
  Stmt update = For::Make(
      kk, 0, k, LoopKind::kSerial,
      For::Make(jv, 0, w, LoopKind::kVectorized,
                Store::Make(acc, jv, Fma::Make(a(i * k + kk), b(kk * n + col), acc(jv)))));
  Stmt write = For::Make(jv, 0, w, LoopKind::kVectorized, Store::Make(c, i * n + col, acc(jv)));
  Stmt blocks = For::Make(jo, 0, n / w, LoopKind::kSerial,
                          Allocate::Make(acc, w, Block::Make({init, update, write})));
  Var kt("kt");
  Buffer sum("sum", MemoryScope::kStack);
  Stmt tail = For::Make(
      j, n / w * w, n % w, LoopKind::kSerial,
      Allocate::Make(
          sum, 1,
          Block::Make(
              {Store::Make(sum, 0, 0.0f),
               For::Make(kt, 0, k, LoopKind::kSerial,
                         Store::Make(sum, 0, Fma::Make(a(i * k + kt), b(kt * n + j), sum(0)))),
               Store::Make(c, i * n + j, sum(0))})));
  LoweredFunc f{
      "matmul", {a, b, c}, For::Make(i, 0, m, LoopKind::kParallel, Block::Make({blocks, tail}))};

  std::vector<float> av = Iota(m * k, 0.5f), bv = Iota(k * n, 0.25f), want(m * n, 0.0f);
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t q = 0; q < n; ++q) {
      float s = 0;
      for (int64_t p = 0; p < k; ++p) {
        s = std::fma(av[r * k + p], bv[p * n + q], s);
      }
      want[r * n + q] = s;
    }
  }
  for (int threads : {1, 3}) {
    TempDir dir = TempDir::Create().value();
    auto so = Build({f}, {.cpu = "native", .threads = threads}, dir, "matmul");
    ASSERT_TRUE(so.ok()) << so.status();
    auto* kernel = (*so)->Get<Kernel3>("matmul");
    ASSERT_NE(kernel, nullptr);
    std::vector<float> cv(m * n, -1.0f);
    ASSERT_EQ(kernel(av.data(), bv.data(), cv.data()), 0);
    EXPECT_EQ(cv, want) << "threads=" << threads;
  }
}

TEST(CpuBackendTest, IntegerDivisionAndModuloFloorInScalarAndVectorCode) {
  // out[s*64 + i] for i in [0, 64): (i - 29) / d and (i - 29) % d for d in {3, -3, 4}.
  Buffer out("out");
  Var i("i");
  std::vector<Stmt> stmts;
  const int64_t divisors[] = {3, -3, 4};
  int slot = 0;
  for (int64_t d : divisors) {
    for (bool is_div : {true, false}) {
      for (LoopKind kind : {LoopKind::kSerial, LoopKind::kVectorized}) {
        Expr value = is_div ? (i - 29) / d : (i - 29) % d;
        stmts.push_back(For::Make(
            i, 0, 64, kind, Store::Make(out, slot * 64 + i, Cast::Make(Type::Float32(), value))));
        ++slot;
      }
    }
  }
  TempDir dir = TempDir::Create().value();
  auto so = Build({LoweredFunc{"divmod", {out}, Block::Make(stmts)}}, {}, dir, "divmod");
  ASSERT_TRUE(so.ok()) << so.status();
  std::vector<float> got(static_cast<size_t>(slot) * 64, 0.0f);
  ASSERT_EQ((*so)->Get<Kernel1>("divmod")(got.data()), 0);
  slot = 0;
  for (int64_t d : divisors) {
    for (bool is_div : {true, false}) {
      for (int kind = 0; kind < 2; ++kind) {
        for (int64_t x = 0; x < 64; ++x) {
          int64_t a = x - 29;
          int64_t want = is_div ? ir::FloorDiv(a, d) : ir::FloorMod(a, d);
          ASSERT_EQ(got[slot * 64 + x], static_cast<float>(want))
              << (is_div ? "div" : "mod") << " by " << d << " of " << a << " kind " << kind;
        }
        ++slot;
      }
    }
  }
  EXPECT_EQ(ir::FloorDiv(-7, 2), -4);
  EXPECT_EQ(ir::FloorMod(-7, 2), 1);
  EXPECT_EQ(ir::FloorMod(7, -2), -1);
}

TEST(CpuBackendTest, GatherSelectMinMaxAndIfMatchLoop) {
  // out[i] = i < 8 ? max(x[2i], 0) : min(x[2i+1], 1), vectorized (a gather), then out[0] += 100
  // when x[0] > 0.
  Buffer x("x"), out("out");
  Var i("i");
  Expr value =
      ir::Select::Make(i < 8, ir::Max::Make(x(i * 2), 0.0f), ir::Min::Make(x(i * 2 + 1), 1.0f));
  Stmt body =
      Block::Make({For::Make(i, 0, 16, LoopKind::kVectorized, Store::Make(out, i, value)),
                   ir::IfThenElse::Make(x(0) > 0.0f, Store::Make(out, 0, out(0) + 100.0f))});
  TempDir dir = TempDir::Create().value();
  std::string llvm_ir;
  auto so = Build({LoweredFunc{"gather", {x, out}, body}}, {}, dir, "gather", &llvm_ir);
  ASSERT_TRUE(so.ok()) << so.status();
  for (float first : {-2.0f, 2.0f}) {
    std::vector<float> xv = Iota(32, 0.5f), got(16, 0.0f), want(16);
    xv[0] = first;
    for (int q = 0; q < 16; ++q) {
      want[q] = q < 8 ? std::max(xv[2 * q], 0.0f) : std::min(xv[2 * q + 1], 1.0f);
    }
    if (xv[0] > 0) {
      want[0] += 100.0f;
    }
    ASSERT_EQ((*so)->Get<Kernel2>("gather")(xv.data(), got.data()), 0);
    EXPECT_EQ(got, want);
  }
}

TEST(CpuBackendTest, LoopCarriedDependenceStaysCorrectWhenVectorizationFallsBack) {
  Buffer a("a");
  Var i("i");
  Stmt body = For::Make(i, 0, 16, LoopKind::kVectorized, Store::Make(a, i + 1, a(i) * 2.0f));
  TempDir dir = TempDir::Create().value();
  auto so = Build({LoweredFunc{"carried", {a}, body}}, {}, dir, "carried");
  ASSERT_TRUE(so.ok()) << so.status();
  std::vector<float> got(17, 0.0f);
  got[0] = 1.0f;
  ASSERT_EQ((*so)->Get<Kernel1>("carried")(got.data()), 0);
  for (int q = 0; q <= 16; ++q) {
    EXPECT_EQ(got[q], std::ldexp(1.0f, q)) << q;
  }
}

TEST(CpuBackendTest, LargeAllocationUsesHeapAndIsCorrect) {
  const int64_t n = 40000;  // 160 KB > the 64 KiB stack limit
  Buffer out("out"), tmp("tmp", MemoryScope::kStack);
  Var i("i");
  Stmt body = Allocate::Make(
      tmp, n,
      Block::Make({For::Make(i, 0, n, LoopKind::kSerial,
                             Store::Make(tmp, i, Cast::Make(Type::Float32(), i % 7))),
                   Store::Make(out, 0, 0.0f),
                   For::Make(i, 0, n, LoopKind::kSerial, Store::Make(out, 0, out(0) + tmp(i)))}));
  TempDir dir = TempDir::Create().value();
  std::string llvm_ir;
  auto so = Build({LoweredFunc{"big", {out}, body}}, {}, dir, "big", &llvm_ir);
  ASSERT_TRUE(so.ok()) << so.status();
  EXPECT_NE(llvm_ir.find("aligned_alloc"), std::string::npos);
  float got = -1.0f;
  ASSERT_EQ((*so)->Get<Kernel1>("big")(&got), 0);
  double want = 0;
  for (int64_t q = 0; q < n; ++q) {
    want += static_cast<double>(q % 7);
  }
  EXPECT_EQ(got, static_cast<float>(want));
}

struct IsaCase {
  const char* cpu;
  const char* feature;  // host feature needed to run the code
  int lanes;
  const char* fma_intrinsic;  // in the optimised LLVM IR
  const char* vector_reg;     // in the assembly
};

class CpuBackendIsaTest : public ::testing::TestWithParam<IsaCase> {};

TEST_P(CpuBackendIsaTest, EmitsVectorFmaOfTheTargetWidthAndRunsWhereSupported) {
  const IsaCase& c = GetParam();
  LoweredFunc f = Axpy(515, c.lanes);
  absl::StatusOr<LoweredFunc> lowered = Lower(f);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  CpuCodegenOptions options{.cpu = c.cpu, .threads = 1};
  std::string llvm_ir;
  ASSERT_TRUE(EmitCpuObject({*lowered}, options, &llvm_ir).ok());
  EXPECT_NE(llvm_ir.find(c.fma_intrinsic), std::string::npos) << llvm_ir;
  EXPECT_NE(llvm_ir.find(std::string("\"target-cpu\"=\"") + c.cpu + "\""), std::string::npos);
  absl::StatusOr<std::string> assembly = EmitCpuAssembly({*lowered}, options);
  ASSERT_TRUE(assembly.ok()) << assembly.status();
  EXPECT_NE(assembly->find("vfmadd"), std::string::npos);
  EXPECT_NE(assembly->find(std::string("%") + c.vector_reg), std::string::npos);
  if (!GetHostCpu().HasFeature(c.feature) || !GetHostCpu().HasFeature("fma")) {
    GTEST_SKIP() << "host lacks " << c.feature << "; code emitted but not run";
  }
  TempDir dir = TempDir::Create().value();
  auto so = Build({f}, options, dir, "isa");
  ASSERT_TRUE(so.ok()) << so.status();
  CheckAxpy(**so, 515);
}

INSTANTIATE_TEST_SUITE_P(
    X86, CpuBackendIsaTest,
    ::testing::Values(IsaCase{"haswell", "avx2", 8, "@llvm.fma.v8f32", "ymm"},
                      IsaCase{"skylake-avx512", "avx512f", 16, "@llvm.fma.v16f32", "zmm"},
                      IsaCase{"znver4", "avx512f", 16, "@llvm.fma.v16f32", "zmm"}),
    [](const ::testing::TestParamInfo<IsaCase>& info) {
      std::string name = info.param.cpu;
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

TEST(CpuBackendTest, FloatOpsCarryContractFlag) {
  Buffer x("x"), y("y");
  Var i("i");
  Stmt body = For::Make(i, 0, 16, LoopKind::kVectorized, Store::Make(y, i, x(i) * x(i) + y(i)));
  absl::StatusOr<LoweredFunc> lowered = Lower(LoweredFunc{"sq", {x, y}, body});
  ASSERT_TRUE(lowered.ok());
  std::string llvm_ir;
  ASSERT_TRUE(EmitCpuObject({*lowered}, {.cpu = "skylake-avx512", .opt_level = 0}, &llvm_ir).ok());
  EXPECT_NE(llvm_ir.find("fmul contract <16 x float>"), std::string::npos) << llvm_ir;
  EXPECT_NE(llvm_ir.find("ptr noalias"), std::string::npos);
}

TEST(CpuBackendTest, ConcurrentEmissionIsDeterministicAndNativeResolvesToTheHost) {
  absl::StatusOr<LoweredFunc> lowered = Lower(Axpy(300));
  ASSERT_TRUE(lowered.ok());
  std::vector<absl::StatusOr<std::string>> objects(4, absl::UnknownError("not run"));
  std::vector<std::string> irs(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < objects.size(); ++t) {
    threads.emplace_back([&, t] {
      objects[t] = EmitCpuObject({*lowered}, {.cpu = "native", .threads = 2}, &irs[t]);
    });
  }
  for (std::thread& t : threads) {
    t.join();
  }
  for (size_t t = 0; t < objects.size(); ++t) {
    ASSERT_TRUE(objects[t].ok()) << objects[t].status();
    EXPECT_EQ(*objects[t], *objects[0]) << "object " << t << " differs";
  }
  // "native" is the CPU common/host_cpu.h names (which may be an x86-64 level where LLVM's own
  // detection names a model: HostCpuNameAgreesWithCommonHostCpu).
  EXPECT_NE(irs[0].find("\"target-cpu\"=\"" + GetHostCpu().name + "\""), std::string::npos);
}

TEST(CpuBackendTest, GpuLoopIsUnimplementedOnCpu) {
  Buffer out("out");
  Var b("b");
  LoweredFunc f{"gpu", {out}, For::Make(b, 0, 4, LoopKind::kGpuBlock, Store::Make(out, b, 1.0f))};
  absl::StatusOr<std::string> object = EmitCpuObject({f}, {});
  EXPECT_EQ(object.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(std::string(object.status().message()).find("gpu_block"), std::string::npos);
}

TEST(CpuBackendTest, UnknownCpuAndBadOptionsAreInvalidArgument) {
  Buffer out("out");
  LoweredFunc f{"k", {out}, Store::Make(out, 0, 1.0f)};
  EXPECT_EQ(EmitCpuObject({f}, {.cpu = "pentium-9000"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EmitCpuObject({f}, {.threads = 0}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(EmitCpuObject({f, f}, {}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CpuBackendTest, HostCpuNameAgreesWithCommonHostCpu) {
  const std::string& common_name = GetHostCpu().name;
  if (common_name.rfind("x86-64", 0) == 0) {
    GTEST_SKIP() << "common/host_cpu.h reports a level (" << common_name << ") for this model";
  }
  EXPECT_EQ(LlvmHostCpuName(), common_name);
}

}  // namespace
}  // namespace tune
