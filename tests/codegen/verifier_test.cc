// Verify(): each rule, with a message that names the node.
#include "codegen/ir/verifier.h"

#include <string>

#include "gtest/gtest.h"

namespace tune::ir {
namespace {

// Expects InvalidArgument whose message contains every fragment.
void ExpectRejected(const LoweredFunc& f, std::initializer_list<std::string> fragments) {
  absl::Status status = Verify(f);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  for (const std::string& fragment : fragments) {
    EXPECT_NE(std::string(status.message()).find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << status.message();
  }
}

TEST(VerifierTest, AcceptsAWellFormedFunction) {
  Buffer x("x"), y("y"), acc("acc", MemoryScope::kStack);
  Var i("i"), j("j"), n("n");
  Stmt body = LetStmt::Make(
      n, 16,
      For::Make(i, 0, n, LoopKind::kParallel,
                Allocate::Make(acc, 8,
                               Block::Make({For::Make(j, 0, 8, LoopKind::kVectorized,
                                                      Store::Make(acc, j, x(i * 8 + j))),
                                            For::Make(j, 0, 4 * 2, LoopKind::kUnrolled,
                                                      Store::Make(y, i * 8 + j, acc(j)))}))));
  EXPECT_TRUE(Verify(LoweredFunc{"ok", {x, y}, body}).ok())
      << Verify(LoweredFunc{"ok", {x, y}, body});
}

TEST(VerifierTest, RejectsVariableOutsideItsScope) {
  Buffer y("y");
  Var i("i"), k("k");
  ExpectRejected(
      LoweredFunc{"f", {y}, For::Make(i, 0, 4, LoopKind::kSerial, Store::Make(y, k, 0.0f))},
      {"Verify f", "variable k", "outside the scope"});
}

TEST(VerifierTest, RejectsBufferThatIsNeitherParameterNorAllocated) {
  Buffer y("y"), other("other");
  ExpectRejected(LoweredFunc{"f", {y}, Store::Make(y, 0, other(0))},
                 {"`other[0]`", "neither a parameter nor allocated"});
}

TEST(VerifierTest, RejectsNonConstantVectorizedOrUnrolledExtent) {
  Buffer y("y");
  Var i("i"), n("n");
  Stmt vec = For::Make(i, 0, n, LoopKind::kVectorized, Store::Make(y, i, 0.0f));
  ExpectRejected(LoweredFunc{"f", {y}, LetStmt::Make(n, Cast::Make(Type::Int64(), y(0)), vec)},
                 {"for.vectorized (i, 0, n)", "not a constant"});
}

TEST(VerifierTest, RejectsNestedParallelLoops) {
  Buffer y("y");
  Var i("i"), j("j");
  Stmt s = For::Make(i, 0, 4, LoopKind::kParallel,
                     For::Make(j, 0, 4, LoopKind::kParallel, Store::Make(y, i * 4 + j, 0.0f)));
  ExpectRejected(LoweredFunc{"f", {y}, s}, {"for.parallel (j, 0, 4)", "parallel loop inside"});
}

TEST(VerifierTest, RejectsAReturnedStatusInsideAParallelLoop) {
  Buffer y("y");
  Var i("i");
  Stmt call = ir::Evaluate::Make(
      ir::CallExtern::Make(ir::Type::Int32(), "f_status", {ir::AddressOf::Make(y, i)}),
      /*return_on_error=*/true);
  ExpectRejected(
      LoweredFunc{"f", {y}, For::Make(i, 0, 4, LoopKind::kParallel, call)},
      {"return_if_nonzero(call_extern<int32> f_status(", "inside a parallel or GPU loop"});
  // The same call in a serial loop is a kernel's own frame: accepted.
  EXPECT_TRUE(Verify(LoweredFunc{"f", {y}, For::Make(i, 0, 4, LoopKind::kSerial, call)}).ok());
}

TEST(VerifierTest, RejectsBarrierOutsideGpuThreadLoop) {
  Buffer y("y");
  Var b("b");
  ExpectRejected(LoweredFunc{"f", {y}, For::Make(b, 0, 2, LoopKind::kGpuBlock, Barrier::Make())},
                 {"barrier()", "outside a gpu_thread loop"});
}

TEST(VerifierTest, RejectsGpuSharedAllocationOutsideGpuLoops) {
  Buffer y("y"), s("s", MemoryScope::kGpuShared);
  ExpectRejected(LoweredFunc{"f", {y}, Allocate::Make(s, 4, Store::Make(s, 0, 1.0f))},
                 {"allocate s", "outside GPU loops"});
}

TEST(VerifierTest, RejectsAGlobalWorkspaceAllocatedInsideGpuLoopsOrAFetchAddOutsideThreads) {
  Buffer y("y"), ws("ws", MemoryScope::kGlobal, Type::Int32());
  Buffer got("got", MemoryScope::kGpuShared, Type::Int32());
  Var b("b"), t("t");
  const Expr zero(int64_t{0});
  Stmt add = FetchAdd::Make(ws, zero, IntImm::Make(1, Type::Int32()), got, zero);
  Stmt threads = Allocate::Make(got, 1, For::Make(t, 0, 32, LoopKind::kGpuThread, add));
  Stmt inside = For::Make(b, 0, 2, LoopKind::kGpuBlock, Allocate::Make(ws, 4, threads));
  ExpectRejected(LoweredFunc{"f", {y}, inside},
                 {"allocate ws", "inside a loop", "outside the GPU loops"});
  Stmt unthreaded =
      Allocate::Make(ws, 4, For::Make(b, 0, 2, LoopKind::kGpuBlock, Allocate::Make(got, 1, add)));
  ExpectRejected(LoweredFunc{"f", {y}, unthreaded}, {"fetch_add(ws)", "outside a gpu_thread loop"});
  // Outside the loops, with the fetch_add in the threads: a kernel's workspace.
  Stmt kernel = Allocate::Make(ws, 4, For::Make(b, 0, 2, LoopKind::kGpuBlock, threads));
  EXPECT_TRUE(Verify(LoweredFunc{"f", {y}, kernel}).ok()) << Verify(LoweredFunc{"f", {y}, kernel});
}

TEST(VerifierTest, RejectsEvaluateOfSomethingOtherThanACall) {
  Buffer y("y");
  ExpectRejected(LoweredFunc{"f", {y}, Evaluate::Make(y(0))}, {"other than a call"});
}

TEST(VerifierTest, RejectsBadNamesDuplicateParametersAndRebinding) {
  Buffer y("y"), y2("y");
  Var i("i");
  Stmt store = Store::Make(y, 0, 0.0f);
  EXPECT_EQ(Verify(LoweredFunc{"2bad", {y}, store}).code(), absl::StatusCode::kInvalidArgument);
  ExpectRejected(LoweredFunc{"f", {y, y2}, store}, {"parameter y", "appears twice"});
  ExpectRejected(LoweredFunc{"f", {y, Buffer("s", MemoryScope::kStack)}, store},
                 {"parameter s", "must be a global buffer"});
  Stmt rebind = For::Make(i, 0, 2, LoopKind::kSerial,
                          For::Make(i, 0, 2, LoopKind::kSerial, Store::Make(y, i, 0.0f)));
  ExpectRejected(LoweredFunc{"f", {y}, rebind}, {"binds variable i again"});
}

}  // namespace
}  // namespace tune::ir
