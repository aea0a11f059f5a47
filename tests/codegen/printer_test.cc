// The text form: exact for a small function, and deterministic.
#include "codegen/ir/printer.h"

#include "gtest/gtest.h"

namespace tune::ir {
namespace {

LoweredFunc Sample() {
  Buffer x("x"), y("y"), tile("tile", MemoryScope::kStack);
  Var i("i"), j("j"), t("t", Type::Float32(4));
  Stmt inner = LetStmt::Make(
      t, Load::Make(x, i * 4, 4),
      Block::Make({Store::Make(tile, Ramp::Make(0, 1, 4), Fma::Make(t, 2.0f, t)),
                   IfThenElse::Make(i < 3 && i != 1, Store::Make(y, i, Min::Make(x(i), 6.0f)),
                                    Store::Make(y, i, Select::Make(x(i) > 0.0f, x(i), 0.0f))),
                   Evaluate::Make(CallExtern::Make(Type::Int32(), "ext",
                                                   {AddressOf::Make(y, i), Expr(-1) % 3})),
                   Store::Make(y, Cast::Make(Type::Int32(), i), -x(Expr(1) / 2))}));
  Stmt body = For::Make(i, 0, 16, LoopKind::kParallel,
                        Allocate::Make(tile, 4, For::Make(j, 0, 1, LoopKind::kUnrolled, inner)));
  return LoweredFunc{"sample", {x, y}, body};
}

TEST(PrinterTest, PrintsFunctionsLoopsScopesAndVectorTypes) {
  EXPECT_EQ(ToText(Sample()),
            "func sample(x: float32*, y: float32*) {\n"
            "  for.parallel (i, 0, 16) {\n"
            "    allocate tile: float32[4] stack {\n"
            "      for.unrolled (j, 0, 1) {\n"
            "        let t: float32x4 = x[ramp((i * 4), 1, 4)]\n"
            "        tile[ramp(0, 1, 4)] = fma(t, broadcast(2.0f, 4), t)\n"
            "        if (((i < 3) && (i != 1))) {\n"
            "          y[i] = min(x[i], 6.0f)\n"
            "        } else {\n"
            "          y[i] = select((x[i] > 0.0f), x[i], 0.0f)\n"
            "        }\n"
            "        call_extern<int32> ext(&y[i], (-1 % 3))\n"
            "        y[int32(i)] = (0.0f - x[(1 / 2)])\n"
            "      }\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(PrinterTest, PrintsImmediatesGpuAxesAndBarriers) {
  EXPECT_EQ(ToText(IntImm::Make(7, Type::Int32())), "7i32");
  EXPECT_EQ(ToText(Expr(false)), "false");
  EXPECT_EQ(ToText(Expr(0.1f)), "0.1f");
  EXPECT_EQ(ToText(Expr(1e-8f)), "1e-08f");
  Buffer s("s", MemoryScope::kGpuShared);
  Var bx("bx"), tx("tx");
  Stmt gpu = For::Make(
      bx, 0, 2, LoopKind::kGpuBlock,
      Allocate::Make(s, 32, For::Make(tx, 0, 32, LoopKind::kGpuThread, Barrier::Make(), 1)));
  EXPECT_EQ(ToText(gpu),
            "for.gpu_block.x (bx, 0, 2) {\n"
            "  allocate s: float32[32] gpu_shared {\n"
            "    for.gpu_thread.y (tx, 0, 32) {\n"
            "      barrier()\n"
            "    }\n"
            "  }\n"
            "}\n");
}

TEST(PrinterTest, SameIrBuiltTwicePrintsTheSameText) {
  EXPECT_EQ(ToText(Sample()), ToText(Sample()));
  LoweredFunc f = Sample();
  EXPECT_EQ(ToText(f), ToText(f));
}

}  // namespace
}  // namespace tune::ir
