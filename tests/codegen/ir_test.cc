// Node construction, Make() invariants, operators, visitors and substitution.
#include "codegen/ir/ir.h"

#include "codegen/ir/equality.h"
#include "codegen/ir/params.h"
#include "codegen/ir/printer.h"
#include "codegen/ir/substitute.h"
#include "codegen/ir/visitor.h"
#include "gtest/gtest.h"

namespace tune::ir {
namespace {

TEST(TypeTest, PrintsScalarVectorAndPointerTypes) {
  EXPECT_EQ(Type::Int32().ToString(), "int32");
  EXPECT_EQ(Type::Int64(4).ToString(), "int64x4");
  EXPECT_EQ(Type::Float32(16).ToString(), "float32x16");
  EXPECT_EQ(Type::Bool().ToString(), "bool");
  EXPECT_EQ(Type::Bool(8).ToString(), "boolx8");
  EXPECT_EQ(Type::FloatPtr().ToString(), "float32*");
  EXPECT_TRUE(Type::Float32(16).IsSupported());
  EXPECT_FALSE(Type(TypeCode::kFloat, 64).IsSupported());
  EXPECT_FALSE(Type(TypeCode::kHandle, 64, 4).IsSupported());
  EXPECT_EQ(Type::Float32(8).Element(), Type::Float32());
  EXPECT_EQ(Type::Int32().WithLanes(4), Type::Int32(4));
}

TEST(IrTest, IntegerLiteralsAreInt64AndFloatLiteralsFloat32) {
  Expr i = 3;
  Expr f = 2.5f;
  Expr d = 0.5;
  Expr b = true;
  EXPECT_EQ(i.type(), Type::Int64());
  EXPECT_EQ(i.As<IntImm>()->value, 3);
  EXPECT_EQ(f.type(), Type::Float32());
  EXPECT_EQ(d.type(), Type::Float32());
  EXPECT_EQ(b.type(), Type::Bool());
  EXPECT_EQ(b.As<IntImm>()->value, 1);
}

TEST(IrTest, OperatorsBuildNodesAndCoerceImmediates) {
  Var i("i");
  Buffer x("x");
  Expr e = i * 16 + 1;
  ASSERT_NE(e.As<Add>(), nullptr);
  EXPECT_EQ(e.type(), Type::Int64());
  // An integer immediate next to a float operand becomes a float immediate.
  Expr scaled = x(i) * 2;
  const auto* mul = scaled.As<Mul>();
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->b.type(), Type::Float32());
  ASSERT_NE(mul->b.As<FloatImm>(), nullptr);
  EXPECT_EQ(mul->b.As<FloatImm>()->value, 2.0);
  // A scalar next to a vector is broadcast.
  Expr v = Load::Make(x, i, 8) + 1.0f;
  EXPECT_EQ(v.type(), Type::Float32(8));
  ASSERT_NE(v.As<Add>()->b.As<Broadcast>(), nullptr);
  // Comparisons give bools with the operand lanes.
  EXPECT_EQ((i < 4).type(), Type::Bool());
  EXPECT_EQ((Load::Make(x, i, 4) > 0.0f).type(), Type::Bool(4));
  EXPECT_EQ((-i).type(), Type::Int64());
  EXPECT_NE((i < 4 && i >= 0).As<And>(), nullptr);
  EXPECT_NE((!(i < 4)).As<Not>(), nullptr);
}

TEST(IrTest, Int32ImmediateFollowsInt32Operand) {
  Var n("n", Type::Int32());
  Expr e = n + 5;
  EXPECT_EQ(e.type(), Type::Int32());
  EXPECT_EQ(e.As<Add>()->b.As<IntImm>()->type, Type::Int32());
}

TEST(IrTest, LoadAndStoreTakeLanesFromTheirIndex) {
  Buffer x("x"), y("y");
  Var i("i");
  Expr dense = Load::Make(x, i * 8, 8);
  EXPECT_EQ(dense.type(), Type::Float32(8));
  ASSERT_NE(dense.As<Load>()->index.As<Ramp>(), nullptr);
  EXPECT_EQ(Load::Make(x, i, 1).type(), Type::Float32());
  // A vector value with a scalar index is a dense store from that index.
  Stmt s = Store::Make(y, i, dense);
  const auto* store = s.As<Store>();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->index.type(), Type::Int64(8));
  // A scalar value through a vector index is broadcast.
  Stmt t = Store::Make(y, Ramp::Make(i, 2, 4), 0);
  EXPECT_EQ(t.As<Store>()->value.type(), Type::Float32(4));
}

TEST(IrTest, AtomicAddsPrintSurviveMutationAndNameTheParamsToZero) {
  Buffer x("x"), y("y"), unused("unused");
  Var i("i");
  Stmt add = Store::MakeAtomicAdd(y, i % 4, x(i));
  EXPECT_TRUE(add.As<Store>()->atomic_add);
  EXPECT_FALSE(Store::Make(y, i, x(i)).As<Store>()->atomic_add);
  EXPECT_EQ(ToText(add), "y[(i % 4)] atomic+= x[i]\n");
  // A mutation that rebuilds the store keeps it atomic.
  Var j("j");
  Stmt renamed = Substitute(add, i, Expr(j));
  ASSERT_NE(renamed.As<Store>(), nullptr);
  EXPECT_TRUE(renamed.As<Store>()->atomic_add);
  LoweredFunc func{"f", {x, unused, y}, For::Make(i, 0, 8, LoopKind::kSerial, add)};
  EXPECT_EQ(AtomicallyAccumulatedParams(func), std::vector<int>{2});
}

TEST(IrTest, AtomicAddIntoANonGlobalBufferAborts) {
  Buffer shared("s", MemoryScope::kGpuShared);
  EXPECT_DEATH(Store::MakeAtomicAdd(shared, 0, 1.0f), "global float32 buffers only");
}

TEST(IrTest, BlockFlattensNestedBlocksAndUnwrapsSingleStatements) {
  Buffer y("y");
  Stmt a = Store::Make(y, 0, 1.0f);
  Stmt b = Store::Make(y, 1, 2.0f);
  Stmt c = Store::Make(y, 2, 3.0f);
  Stmt block = Block::Make({a, Block::Make({b, c}), Stmt()});
  ASSERT_NE(block.As<Block>(), nullptr);
  EXPECT_EQ(block.As<Block>()->stmts.size(), 3u);
  EXPECT_TRUE(Block::Make({a}).same_as(a));
  EXPECT_TRUE(Block::Make({}).As<Block>()->stmts.empty());
}

TEST(IrTest, ForAndGpuLoopsKeepKindAndThreadAxis) {
  Var bx("bx"), tx("tx");
  Buffer y("y");
  Stmt s =
      For::Make(bx, 0, 8, LoopKind::kGpuBlock,
                For::Make(tx, 0, 64, LoopKind::kGpuThread, Store::Make(y, bx * 64 + tx, 0), 0), 1);
  const auto* loop = s.As<For>();
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->loop_kind, LoopKind::kGpuBlock);
  EXPECT_EQ(loop->thread_axis, 1);
  EXPECT_EQ(loop->extent.As<IntImm>()->value, 8);
  EXPECT_EQ(LoopKindName(LoopKind::kGpuThread), "gpu_thread");
  EXPECT_EQ(MemoryScopeName(MemoryScope::kGpuShared), "gpu_shared");
}

TEST(IrTest, CallExternAndAddressOfHaveTheirTypes) {
  Buffer a("a");
  Expr addr = AddressOf::Make(a, 16);
  EXPECT_EQ(addr.type(), Type::FloatPtr());
  Expr call = CallExtern::Make(Type::Int32(), "cblas_sgemm_like",
                               {addr, Cast::Make(Type::Int32(), Expr(64)), Expr(1.0f)});
  EXPECT_EQ(call.type(), Type::Int32());
  EXPECT_EQ(call.As<CallExtern>()->args.size(), 3u);
  EXPECT_NE(Evaluate::Make(call).As<Evaluate>(), nullptr);
}

TEST(IrTest, ConstantIntegerEvaluationUsesFloorSemantics) {
  EXPECT_EQ(AsConstInt(Expr(4) * 4 + 1), 17);
  EXPECT_EQ(AsConstInt(Expr(-7) / 2), -4);
  EXPECT_EQ(AsConstInt(Expr(-7) % 2), 1);
  EXPECT_EQ(AsConstInt(Min::Make(3, 9)), 3);
  EXPECT_FALSE(AsConstInt(Expr(1) / 0).has_value());
  EXPECT_FALSE(AsConstInt(Var("n") + 1).has_value());
  EXPECT_TRUE(IsConst(Broadcast::Make(0.0f, 4), 0));
}

using IrDeathTest = ::testing::Test;

TEST_F(IrDeathTest, MakeRejectsBrokenInvariants) {
  Var i("i");
  Buffer x("x");
  EXPECT_DEATH(Add::Make(x(i), i), "operand types differ");
  EXPECT_DEATH(Mod::Make(x(i), x(i)), "integers");
  EXPECT_DEATH(Broadcast::Make(1.0f, 1), "lanes must be >= 2");
  EXPECT_DEATH(Load::Make(x, x(i)), "index must be an integer");
  EXPECT_DEATH(Store::Make(x, Ramp::Make(i, 1, 4), Load::Make(x, i, 8)), "does not match");
  EXPECT_DEATH(For::Make(i, 0, 4, LoopKind::kSerial, Store::Make(x, i, 0.0f), 1),
               "thread_axis is only for GPU loops");
  EXPECT_DEATH(IfThenElse::Make(i, Store::Make(x, i, 0.0f)), "scalar bool");
  EXPECT_DEATH(Allocate::Make(Buffer("g"), 0, Store::Make(x, 0, 0.0f)), "size must be >= 1");
  Buffer counter("counter", MemoryScope::kGlobal, Type::Int32());
  Buffer got("got", MemoryScope::kGpuShared, Type::Int32());
  EXPECT_DEATH(FetchAdd::Make(x, i, IntImm::Make(1, Type::Int32()), got, i), "global int32");
  EXPECT_DEATH(FetchAdd::Make(counter, i, IntImm::Make(1, Type::Int32()), x, i),
               "gpu_shared or gpu_local int32");
  EXPECT_DEATH(IntImm::Make(int64_t{1} << 40, Type::Int32()), "does not fit int32");
  EXPECT_DEATH(Buffer("not a name"), "not an identifier");
  EXPECT_DEATH(CallExtern::Make(Type::Int32(), "f", {Load::Make(x, i, 4)}),
               "unsupported argument type");
}

TEST(TypeTest, StorageTypesPrintTheirFormatAndReadAsTheirComputeType) {
  EXPECT_EQ(Type::BFloat16(8).ToString(), "bfloat16x8");
  EXPECT_EQ(Type::Float16().ToString(), "float16");
  EXPECT_EQ(Type::Int8().ToString(), "int8");
  EXPECT_EQ(Type::UInt8(4).ToString(), "uint8x4");
  EXPECT_EQ(Type::Of(ElementType::kFp8E4m3Fnuz).ToString(), "float8_e4m3fnuz");
  EXPECT_TRUE(Type::BFloat16().is_storage_only());
  EXPECT_FALSE(Type::Float32().is_storage_only());
  EXPECT_FALSE(Type::Bool().is_storage_only());
  EXPECT_EQ(Type::BFloat16(4).ComputeType(), Type::Float32(4));
  EXPECT_EQ(Type::UInt8().ComputeType(), Type::Int32());
  EXPECT_EQ(Type::Of(ElementType::kFp8E5m2).Bytes(), 1);
  EXPECT_EQ(Type::Of(ElementType::kBf16).AsElementType(), ElementType::kBf16);
  EXPECT_FALSE(Type(TypeCode::kBFloat, 32).IsSupported());
  // A typed parameter prints its element type; float32 ones read as before.
  Buffer a("A", MemoryScope::kGlobal, Type::BFloat16());
  EXPECT_EQ(Load::Make(a, Var("i")).type(), Type::BFloat16());
  EXPECT_EQ(Cast::Make(Type::Float32(), Load::Make(a, Var("i"))).type(), Type::Float32());
}

TEST_F(IrDeathTest, StorageTypesAreRefusedByArithmeticAndCastOnlyToTheirComputeType) {
  Var i("i");
  Buffer h("h", MemoryScope::kGlobal, Type::BFloat16());
  Buffer q("q", MemoryScope::kGlobal, Type::Int8());
  Buffer f8("f8", MemoryScope::kGlobal, Type::Of(ElementType::kFp8E4m3));
  EXPECT_DEATH(Add::Make(h(i), h(i)), "numeric");
  EXPECT_DEATH(Mul::Make(q(i), q(i)), "numeric");
  EXPECT_DEATH(LT::Make(h(i), h(i)), "cannot compare");
  EXPECT_DEATH(Cast::Make(Type::Int32(), h(i)), "converts to and from float32 only");
  EXPECT_DEATH(Cast::Make(Type::Float16(), h(i)), "cannot cast bfloat16 to float16");
  EXPECT_DEATH(Cast::Make(Type::Of(ElementType::kFp8E4m3), Expr(1.0f)), "8-bit floats only to it");
  EXPECT_DEATH(Store::Make(h, i, Expr(1.0f)), "does not match");
  EXPECT_DEATH(Store::MakeAtomicAdd(h, i, Cast::Make(Type::BFloat16(), Expr(1.0f))),
               "global float32 buffers only");
  EXPECT_DEATH(LoadOrZero(f8, i, 1, i < 4), "LoadAsOrZero reads storage types");
  EXPECT_DEATH(Buffer("b", MemoryScope::kGlobal, Type::Bool()), "scalar number type");
}

class CountingVisitor final : public IrVisitor {
 public:
  int loads = 0;
  int loops = 0;

 protected:
  void Visit(const Load* op) override {
    ++loads;
    IrVisitor::Visit(op);
  }
  void Visit(const For* op) override {
    ++loops;
    IrVisitor::Visit(op);
  }
};

TEST(IrTest, VisitorReachesEveryNode) {
  Buffer x("x"), y("y");
  Var i("i"), j("j");
  Stmt s = For::Make(i, 0, 4, LoopKind::kSerial,
                     For::Make(j, 0, 4, LoopKind::kSerial,
                               Store::Make(y, i * 4 + j, Select::Make(x(0) > 0.0f, x(i), x(j)))));
  CountingVisitor v;
  v.VisitStmt(s);
  EXPECT_EQ(v.loops, 2);
  EXPECT_EQ(v.loads, 3);
}

TEST(IrTest, MutatorReturnsTheSameNodeWhenNothingChanges) {
  Buffer x("x"), y("y");
  Var i("i");
  Stmt s = For::Make(i, 0, 8, LoopKind::kVectorized,
                     Store::Make(y, i, Fma::Make(x(i), 2.0f, Select::Make(i < 3, 1.0f, 0.0f))));
  IrMutator identity;
  EXPECT_TRUE(identity.Mutate(s).same_as(s));
}

TEST(IrTest, SubstituteReplacesUsesAndRespectsShadowing) {
  Var i("i"), j("j");
  Buffer y("y");
  Expr e = i * 4 + j;
  Expr r = Substitute(e, i, Expr(2));
  EXPECT_EQ(ToText(r), "((2 * 4) + j)");
  EXPECT_TRUE(UsesVar(e, i));
  EXPECT_FALSE(UsesVar(r, i));
  // Inside a loop that binds i, uses of i refer to the loop variable and stay.
  Stmt loop = For::Make(i, j, 4, LoopKind::kSerial, Store::Make(y, i, 0.0f));
  Stmt sub = Substitute(loop, i, Expr(7));
  EXPECT_TRUE(sub.same_as(loop));
  Stmt sub_j = Substitute(loop, j, Expr(1));
  EXPECT_EQ(ToText(sub_j), "for.serial (i, 1, 4) {\n  y[i] = 0.0f\n}\n");
}

TEST(IrTest, StructuralEqualityComparesTreesNotHandles) {
  Var i("i"), k("i");
  Buffer x("x");
  EXPECT_TRUE(StructurallyEqual(x(i * 2 + 1), x(i * 2 + 1)));
  EXPECT_FALSE(StructurallyEqual(x(i * 2 + 1), x(i * 2 + 2)));
  EXPECT_FALSE(StructurallyEqual(i, k)) << "two variables named alike are different variables";
  EXPECT_FALSE(StructurallyEqual(Expr(1), Cast::Make(Type::Int32(), Expr(1))));
}

}  // namespace
}  // namespace tune::ir

namespace tune::ir {
namespace {

TEST(IrTest, ShufflePicksLanesOfItsConcatenatedVectorsAndChecksThem) {
  Buffer x("x", MemoryScope::kGlobal, Type::BFloat16());
  const Expr a = Load::Make(x, Expr(int64_t{0}), 4), b = Load::Make(x, Expr(int64_t{4}), 4);
  const Expr interleaved = Shuffle::Interleave({a, b});
  EXPECT_EQ(interleaved.type(), Type::BFloat16(8));
  EXPECT_EQ(interleaved.As<Shuffle>()->indices, (std::vector<int>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(ToText(Shuffle::Make({a, b}, {7, 0})),
            "shuffle(x[ramp(0, 1, 4)], x[ramp(4, 1, 4)], [7, 0])");
  EXPECT_DEATH(Shuffle::Make({a, b}, {8, 0}), "outside \\[0, 8\\)");
  EXPECT_DEATH(Shuffle::Make({a, Load::Make(x, Expr(int64_t{0}), 2)}, {0, 1}), "one type");
  EXPECT_DEATH(Shuffle::Make({x(Expr(int64_t{0}))}, {0, 0}), "two or more lanes");
}

TEST(IrTest, ReinterpretReadsTheBitsAsATypeOfTheSameSizeAndChecksIt) {
  Buffer x("x", MemoryScope::kGlobal, Type::Int8());
  const Expr bytes = Load::Make(x, Expr(int64_t{0}), 64);
  const Expr words = Reinterpret::Make(Type::Int32(16), bytes);
  EXPECT_EQ(words.type(), Type::Int32(16));
  EXPECT_EQ(
      ToText(Reinterpret::Make(
          Type::Float32(), Reinterpret::Make(Type::Int32(), Load::Make(x, Expr(int64_t{0}), 4)))),
      "reinterpret<float32>(reinterpret<int32>(x[ramp(0, 1, 4)]))");
  EXPECT_DEATH(Reinterpret::Make(Type::Int32(8), bytes), "the total bits differ");
  EXPECT_DEATH(Reinterpret::Make(Type::BFloat16(32), bytes), "integers and float32 only");
  EXPECT_DEATH(
      Reinterpret::Make(Type::Bool(64), Load::Make(Buffer("y", MemoryScope::kGlobal, Type::UInt8()),
                                                   Expr(int64_t{0}), 64)),
      "integers and float32 only");
}

TEST(IrTest, NamedBarrierKeepsItsIdAndThreadsAndPrintsThem) {
  Stmt s = Barrier::MakeNamed(1, 256);
  const auto* op = s.As<Barrier>();
  EXPECT_EQ(op->id, 1);
  EXPECT_EQ(op->threads, 256);
  EXPECT_TRUE(op->named());
  EXPECT_FALSE(op->cluster);
  EXPECT_FALSE(op->commit_async);
  EXPECT_EQ(op->wait_async, -1);
  EXPECT_FALSE(Barrier::Make().As<Barrier>()->named());
  EXPECT_EQ(ToText(s), "barrier(id 1, 256 threads)\n");
  EXPECT_EQ(ToText(Barrier::MakeNamed(15, 32)), "barrier(id 15, 32 threads)\n");
  IrMutator identity;
  EXPECT_TRUE(identity.Mutate(s).same_as(s));
}

TEST_F(IrDeathTest, NamedBarrierRefusalsNameTheRuleAndTheValue) {
  EXPECT_DEATH(Barrier::MakeNamed(0, 256),
               "id must be in \\[1, 15\\] \\(0 is the whole block's\\), not 0");
  EXPECT_DEATH(Barrier::MakeNamed(16, 256), "id must be in \\[1, 15\\].*not 16");
  EXPECT_DEATH(Barrier::MakeNamed(1, 0), "positive multiple of 32 \\(whole warps\\), not 0");
  EXPECT_DEATH(Barrier::MakeNamed(1, 48), "positive multiple of 32.*not 48");
}

}  // namespace
}  // namespace tune::ir
