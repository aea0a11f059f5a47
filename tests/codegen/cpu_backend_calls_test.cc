// Calls out of kernels the x86-64 backend builds: to functions the process exports, to
// preloaded and linked libraries, with the GPU host ABI's stream parameter and a status that
// stops the kernel; and what it refuses (an extern of two signatures, a link that fails).
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

#include "codegen/llvm/cpu_backend.h"
#include "codegen/lower.h"
#include "common/files.h"
#include "gtest/gtest.h"
#include "tests/codegen/cpu_backend_build.h"

// Called by generated kernels through CallExtern (the executable exports its symbols).
extern "C" int32_t tune_test_scale(float* data, int64_t n, float factor) {
  for (int64_t i = 0; i < n; ++i) {
    data[i] *= factor;
  }
  return static_cast<int32_t>(n);
}

// A status-returning library function: 0 for n <= 8, else n (the kernel returns it).
extern "C" int32_t tune_test_status(float* data, int64_t n) {
  if (n > 8) {
    return static_cast<int32_t>(n);
  }
  data[0] = 42.0f;
  return 0;
}

// Records the stream a kernel passes on (the GPU host ABI's trailing parameter), with its data.
extern "C" int32_t tune_test_stream(float* data, void* stream) {
  data[0] = stream == reinterpret_cast<void*>(uintptr_t{0x1234560}) ? 1.0f : -1.0f;
  return stream == nullptr ? 7 : 0;
}

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

TEST(CpuBackendTest, CallExternReachesFunctionExportedByTheProcess) {
  // out[4..12) *= 2 through tune_test_scale, and out[0] = its return value.
  Buffer out("out");
  Expr call = CallExtern::Make(Type::Int32(), "tune_test_scale",
                               {ir::AddressOf::Make(out, 4), Expr(int64_t{8}), Expr(2.0f)});
  Stmt body = Store::Make(out, 0, Cast::Make(Type::Float32(), call));
  TempDir dir = TempDir::Create().value();
  auto so = Build({LoweredFunc{"scale", {out}, body}}, {}, dir, "scale");
  ASSERT_TRUE(so.ok()) << so.status();
  std::vector<float> got = Iota(16, 1.0f), want = got;
  for (int q = 4; q < 12; ++q) {
    want[q] *= 2.0f;
  }
  want[0] = 8.0f;
  ASSERT_EQ((*so)->Get<Kernel1>("scale")(got.data()), 0);
  EXPECT_EQ(got, want);
}

TEST(CpuBackendTest, StreamParameterFollowsTheBuffersAndReachesACallAsTheSamePointer) {
  Buffer out("out");
  Var stream("stream");
  LoweredFunc func{"with_stream",
                   {out},
                   Evaluate::Make(CallExtern::Make(Type::Int32(), "tune_test_stream",
                                                   {ir::AddressOf::Make(out, 0), stream}),
                                  /*return_on_error=*/true)};
  func.stream_param = stream;
  TempDir dir = TempDir::Create().value();
  std::string llvm_ir;
  auto so = Build({func}, {}, dir, "with_stream", &llvm_ir);
  ASSERT_TRUE(so.ok()) << so.status();
  EXPECT_NE(llvm_ir.find("define i32 @with_stream(ptr noalias"), std::string::npos) << llvm_ir;
  EXPECT_NE(llvm_ir.find("ptr %stream)"), std::string::npos) << llvm_ir;
  using StreamKernel = int32_t(float*, void*);
  auto* kernel = (*so)->Get<StreamKernel>("with_stream");
  ASSERT_NE(kernel, nullptr);
  float got = 0.0f;
  EXPECT_EQ(kernel(&got, reinterpret_cast<void*>(uintptr_t{0x1234560})), 0);
  EXPECT_EQ(got, 1.0f);
  EXPECT_EQ(kernel(&got, nullptr), 7);  // the callee's status comes back
}

TEST(CpuBackendTest, AStreamParameterThatIsNotAnInt64IsRejected) {
  Buffer out("out");
  Var stream("stream", Type::Int32());
  LoweredFunc func{"bad_stream", {out}, Store::Make(out, 0, 1.0f)};
  func.stream_param = stream;
  absl::StatusOr<LoweredFunc> lowered = Lower(func);
  ASSERT_TRUE(absl::IsInvalidArgument(lowered.status())) << lowered.status();
  EXPECT_NE(lowered.status().message().find("stream parameter stream must be an int64"),
            std::string::npos)
      << lowered.status();
}

TEST(CpuBackendTest, AFailedStatusIsReturnedByTheKernelAndStopsIt) {
  // Inside a heap-sized allocation (freed on the early return as on the normal path): call the
  // status function with n, then store 1 into out[1]; a non-zero status skips the store.
  Buffer out("out"), scratch("scratch", MemoryScope::kStack);
  auto kernel = [&](int64_t n, const std::string& name) {
    Stmt call = Evaluate::Make(
        CallExtern::Make(Type::Int32(), "tune_test_status", {ir::AddressOf::Make(out, 0), Expr(n)}),
        /*return_on_error=*/true);
    Stmt body = Allocate::Make(scratch, int64_t{1} << 20,
                               Block::Make({Store::Make(scratch, 0, Expr(3.0f)), call,
                                            Store::Make(out, 1, Load::Make(scratch, 0))}));
    return LoweredFunc{name, {out}, body};
  };
  TempDir dir = TempDir::Create().value();
  auto so = Build({kernel(4, "ok"), kernel(9, "fails")}, {}, dir, "status");
  ASSERT_TRUE(so.ok()) << so.status();
  std::vector<float> got(4, 0.0f);
  EXPECT_EQ((*so)->Get<Kernel1>("ok")(got.data()), 0);
  EXPECT_EQ(got[0], 42.0f);
  EXPECT_EQ(got[1], 3.0f);
  std::vector<float> failed(4, 0.0f);
  EXPECT_EQ((*so)->Get<Kernel1>("fails")(failed.data()), 9);
  EXPECT_EQ(failed[1], 0.0f) << "nothing after the failed call ran";
}

TEST(CpuBackendTest, CallExternReachesPreloadedLibraryBuiltWithTheSamePath) {
  // A "micro-kernel library": tune_fill7(float* p) sets p[0..8) = 7; loaded RTLD_GLOBAL first,
  // like a worker's --preload. The kernel calls it via Evaluate(CallExtern) on &out[2].
  Buffer p("p"), out("out");
  Var i("i");
  LoweredFunc fill{
      "tune_fill7", {p}, For::Make(i, 0, 8, LoopKind::kVectorized, Store::Make(p, i, 7.0f))};
  TempDir dir = TempDir::Create().value();
  auto library = Build({fill}, {}, dir, "libfill", nullptr, RTLD_NOW | RTLD_GLOBAL);
  ASSERT_TRUE(library.ok()) << library.status();
  Stmt body =
      Evaluate::Make(CallExtern::Make(Type::Int32(), "tune_fill7", {ir::AddressOf::Make(out, 2)}));
  auto so = Build({LoweredFunc{"use_fill", {out}, body}}, {}, dir, "use_fill");
  ASSERT_TRUE(so.ok()) << so.status();
  std::vector<float> got(12, 0.0f), want(12, 0.0f);
  std::fill(want.begin() + 2, want.begin() + 10, 7.0f);
  ASSERT_EQ((*so)->Get<Kernel1>("use_fill")(got.data()), 0);
  EXPECT_EQ(got, want);
}

TEST(CpuBackendTest, ExtraLibraryIsLinkedAndCalled) {
  // out[0] = cblas_sdot(n, x, 1, y, 1) from OpenBLAS, named as an extra library at link time.
  const int n = 37;
  Buffer x("x"), y("y"), out("out");
  Expr one = Cast::Make(Type::Int32(), Expr(1));
  Expr dot = CallExtern::Make(Type::Float32(), "cblas_sdot",
                              {Cast::Make(Type::Int32(), Expr(n)), ir::AddressOf::Make(x, 0), one,
                               ir::AddressOf::Make(y, 0), one});
  absl::StatusOr<LoweredFunc> lowered =
      Lower(LoweredFunc{"dot", {x, y, out}, Store::Make(out, 0, dot)});
  ASSERT_TRUE(lowered.ok());
  absl::StatusOr<std::string> object = EmitCpuObject({*lowered}, {});
  ASSERT_TRUE(object.ok()) << object.status();
  TempDir dir = TempDir::Create().value();
  std::ofstream(dir.File("dot.o"), std::ios::binary) << *object;
  absl::Status linked = LinkSharedObject({dir.File("dot.o")}, {"openblas"}, dir.File("dot.so"));
  ASSERT_TRUE(linked.ok()) << linked;
  SharedObject so(dlopen(dir.File("dot.so").c_str(), RTLD_NOW | RTLD_LOCAL));
  auto* kernel = so.Get<Kernel3>("dot");
  ASSERT_NE(kernel, nullptr) << dlerror();
  std::vector<float> xv = Iota(n, 0.5f), yv = Iota(n, 0.25f);
  double want = 0;
  for (int q = 0; q < n; ++q) {
    want += static_cast<double>(xv[q]) * yv[q];
  }
  float got = 0;
  ASSERT_EQ(kernel(xv.data(), yv.data(), &got), 0);
  EXPECT_NEAR(got, want, 1e-4 * std::abs(want) + 1e-5);
}

TEST(CpuBackendTest, ExternWithTwoSignaturesIsInvalidArgument) {
  Buffer out("out");
  Stmt body =
      Block::Make({Evaluate::Make(CallExtern::Make(Type::Int32(), "ext", {Expr(int64_t{1})})),
                   Evaluate::Make(CallExtern::Make(Type::Int32(), "ext", {Expr(1.0f)}))});
  absl::StatusOr<std::string> object = EmitCpuObject({LoweredFunc{"k", {out}, body}}, {});
  EXPECT_EQ(object.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(object.status().message()).find("ext"), std::string::npos);
}

TEST(CpuBackendTest, LinkFailureReportsLinkerOutput) {
  Buffer out("out");
  absl::StatusOr<std::string> object =
      EmitCpuObject({LoweredFunc{"k", {out}, Store::Make(out, 0, 1.0f)}}, {});
  ASSERT_TRUE(object.ok());
  TempDir dir = TempDir::Create().value();
  std::string path = dir.File("k.o");
  std::ofstream(path, std::ios::binary) << *object;
  absl::Status status = LinkSharedObject({path}, {"tune_no_such_library"}, dir.File("k.so"));
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("tune_no_such_library"), std::string::npos)
      << status;
  EXPECT_FALSE(LinkSharedObject({dir.File("missing.o")}, {}, dir.File("m.so")).ok());
}

}  // namespace
}  // namespace tune
