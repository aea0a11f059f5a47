// Simplify, UnrollLoops, VectorizeLoops and the Lower pipeline, checked on their text output.
#include <string>
#include <vector>

#include "codegen/ir/ir.h"
#include "codegen/ir/printer.h"
#include "codegen/lower.h"
#include "codegen/passes/simplify.h"
#include "codegen/passes/unroll_loops.h"
#include "codegen/passes/vectorize_loops.h"
#include "gtest/gtest.h"

namespace tune::ir {
namespace {

std::string S(const Expr& e) { return ToText(Simplify(e)); }

bool Contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

TEST(SimplifyTest, FoldsConstantsWithFloorSemantics) {
  EXPECT_EQ(S(Expr(3) + 4), "7");
  EXPECT_EQ(S(Expr(-7) / 2), "-4");
  EXPECT_EQ(S(Expr(-7) % 2), "1");
  EXPECT_EQ(S(Expr(7) % -2), "-1");
  EXPECT_EQ(S(Min::Make(3, 9) + Max::Make(3, 9)), "12");
  EXPECT_EQ(S(Expr(1.5f) * 2.0f), "3.0f");
  EXPECT_EQ(S(Expr(3) < 4), "true");
  EXPECT_EQ(S(Cast::Make(Type::Float32(), Expr(3))), "3.0f");
  EXPECT_EQ(S(Expr(1) / 0), "(1 / 0)") << "division by zero is never folded";
  EXPECT_EQ(S(Expr(INT64_MAX) + 1), "(9223372036854775807 + 1)") << "overflow is never folded";
}

TEST(SimplifyTest, AppliesIdentitiesAndMergesConstants) {
  Var i("i"), j("j");
  Buffer x("x");
  EXPECT_EQ(S((i + 0) * 1), "i");
  EXPECT_EQ(S(i * 0 + j), "j");
  EXPECT_EQ(S(x(i) * 0.0f), "(x[i] * 0.0f)") << "x * 0 is not 0 for floats (NaN, inf)";
  EXPECT_EQ(S(x(i) * 1.0f + 0.0f), "x[i]");
  EXPECT_EQ(S((i + 1) + 2), "(i + 3)");
  EXPECT_EQ(S(2 + i), "(i + 2)");
  EXPECT_EQ(S((i + 5) - 2), "(i + 3)");
  EXPECT_EQ(S((i * 2) * 3), "(i * 6)");
  EXPECT_EQ(S(i * 4 + (j + 1)), "(((i * 4) + j) + 1)");
  EXPECT_EQ(S((i + 1) * 8 + 2), "((i * 8) + 10)");
  EXPECT_EQ(S(i - i), "0");
  EXPECT_EQ(S(i / 1 + i % 1), "i");
  EXPECT_EQ(S(Min::Make(j, j)), "j");
  EXPECT_EQ(S(Select::Make(Expr(2) > 1, x(i), x(j))), "x[i]");
  EXPECT_EQ(S(Select::Make(i < j, x(i), x(i))), "x[i]");
  EXPECT_EQ(S(!(!(i < j))), "(i < j)");
  EXPECT_EQ(S(Expr(true) && i < j), "(i < j)");
  EXPECT_EQ(S(Expr(false) && i < j), "false");
}

TEST(SimplifyTest, MovesRampsAndBroadcastsOutward) {
  Var i("i");
  Expr ramp = Ramp::Make(i * 16, 1, 16);
  EXPECT_EQ(S(ramp + Broadcast::Make(4, 16)), "ramp(((i * 16) + 4), 1, 16)");
  EXPECT_EQ(S(Ramp::Make(i, 1, 8) * Broadcast::Make(3, 8)), "ramp((i * 3), 3, 8)");
  EXPECT_EQ(S(Ramp::Make(0, 1, 4) + Ramp::Make(i, 2, 4)), "ramp(i, 3, 4)");
  EXPECT_EQ(S(Broadcast::Make(2, 4) * Broadcast::Make(i, 4)), "broadcast((i * 2), 4)");
  EXPECT_EQ(S(Ramp::Make(i, 0, 4)), "broadcast(i, 4)");
}

TEST(SimplifyTest, RemovesTrivialLoopsIfsAndLets) {
  Buffer y("y");
  Var i("i"), j("j"), n("n");
  // Extent 1: the body with i = 5.
  EXPECT_EQ(ToText(Simplify(For::Make(i, 5, 1, LoopKind::kSerial, Store::Make(y, i + 1, 0.0f)))),
            "y[6] = 0.0f\n");
  // Extent 0 and negative extents: nothing.
  EXPECT_EQ(ToText(Simplify(For::Make(i, 0, 3 - 3, LoopKind::kParallel, Store::Make(y, i, 0.0f)))),
            "nop\n");
  // A constant condition picks a branch.
  EXPECT_EQ(ToText(Simplify(
                IfThenElse::Make(Expr(1) > 2, Store::Make(y, 0, 1.0f), Store::Make(y, 0, 2.0f)))),
            "y[0] = 2.0f\n");
  // A let of a constant is substituted.
  EXPECT_EQ(ToText(Simplify(LetStmt::Make(n, 4, Store::Make(y, n * 2, 0.0f)))), "y[8] = 0.0f\n");
  // A GPU loop of extent 1 stays: it is part of the launch shape.
  Stmt gpu = For::Make(j, 0, 1, LoopKind::kGpuBlock, Store::Make(y, j, 0.0f));
  EXPECT_EQ(ToText(Simplify(gpu)), "for.gpu_block.x (j, 0, 1) {\n  y[j] = 0.0f\n}\n");
}

TEST(SimplifyTest, UsesLoopRangesToFoldDivModMinMaxAndConditions) {
  Buffer y("y");
  Var f("f"), i("i"), n("n");
  // f in [0, 5): f / 5 == 0, f % 5 == f, min(f, 10) == f, f < 5 always, f / 5 < 0 never.
  Stmt body = Block::Make({Store::Make(y, (f / 5) * 2 + f % 5 + Min::Make(f, 10), 0.0f),
                           IfThenElse::Make(f < 5, Store::Make(y, f, 1.0f)),
                           IfThenElse::Make(f / 5 < 0, Store::Make(y, f, 2.0f))});
  EXPECT_EQ(ToText(Simplify(For::Make(f, 0, 5, LoopKind::kSerial, body))),
            "for.serial (f, 0, 5) {\n"
            "  y[(f + f)] = 0.0f\n"
            "  y[f] = 1.0f\n"
            "}\n");
  // i in [5, 8): i % 5 == i - 5; ranges flow through lets.
  Stmt let = LetStmt::Make(n, i * 2, Store::Make(y, Select::Make(n >= 10, i % 5, 99), 0.0f));
  EXPECT_EQ(ToText(Simplify(For::Make(i, 5, 3, LoopKind::kSerial, let))),
            "for.serial (i, 5, 3) {\n"
            "  let n = (i * 2)\n"
            "  y[(i - 5)] = 0.0f\n"
            "}\n");
  // Without a range nothing is assumed.
  EXPECT_EQ(S(i % 5), "(i % 5)");
}

TEST(UnrollLoopsTest, ReplacesConstantExtentLoopByCopies) {
  Buffer x("x"), y("y");
  Var i("i"), j("j");
  Stmt s = For::Make(
      i, 0, 8, LoopKind::kSerial,
      For::Make(j, 0, 3, LoopKind::kUnrolled, Store::Make(y, i * 3 + j, x(i * 3 + j) * 2.0f)));
  EXPECT_EQ(ToText(Simplify(UnrollLoops(s))),
            "for.serial (i, 0, 8) {\n"
            "  y[(i * 3)] = (x[(i * 3)] * 2.0f)\n"
            "  y[((i * 3) + 1)] = (x[((i * 3) + 1)] * 2.0f)\n"
            "  y[((i * 3) + 2)] = (x[((i * 3) + 2)] * 2.0f)\n"
            "}\n");
}

TEST(UnrollLoopsTest, NonConstantOrHugeExtentBecomesSerial) {
  Buffer y("y");
  Var i("i"), n("n");
  Stmt dynamic = LetStmt::Make(n, Cast::Make(Type::Int64(), y(0)),
                               For::Make(i, 0, n, LoopKind::kUnrolled, Store::Make(y, i, 0.0f)));
  EXPECT_TRUE(Contains(ToText(UnrollLoops(dynamic)), "for.serial (i, 0, n)"));
  Stmt huge = For::Make(i, 0, kMaxUnrollExtent + 1, LoopKind::kUnrolled, Store::Make(y, i, 0.0f));
  EXPECT_TRUE(Contains(ToText(UnrollLoops(huge)), "for.serial (i, 0, 1025)"));
}

TEST(VectorizeLoopsTest, DenseLoopBecomesVectorLoadsFmaAndStores) {
  Buffer x("x"), y("y");
  Var i("i"), v("v");
  Expr idx = i * 16 + v;
  Stmt s = For::Make(i, 0, 4, LoopKind::kSerial,
                     For::Make(v, 0, 16, LoopKind::kVectorized,
                               Store::Make(y, idx, Fma::Make(2.5f, x(idx), y(idx)))));
  EXPECT_EQ(ToText(VectorizeLoops(s)),
            "for.serial (i, 0, 4) {\n"
            "  y[ramp((i * 16), 1, 16)] = fma(broadcast(2.5f, 16), x[ramp((i * 16), 1, 16)], "
            "y[ramp((i * 16), 1, 16)])\n"
            "}\n");
}

TEST(VectorizeLoopsTest, InnerReductionLoopAndLetsAreWidened) {
  // acc[v] accumulates over k; the let and the cast become vectors.
  Buffer a("a"), b("b"), acc("acc");
  Var v("v"), k("k"), t("t", Type::Float32());
  Stmt body = For::Make(k, 0, 8, LoopKind::kSerial,
                        LetStmt::Make(t, b(k * 16 + v) + Cast::Make(Type::Float32(), v),
                                      Store::Make(acc, v, Fma::Make(a(k), t, acc(v)))));
  std::string text = ToText(VectorizeLoops(For::Make(v, 0, 16, LoopKind::kVectorized, body)));
  EXPECT_EQ(text,
            "for.serial (k, 0, 8) {\n"
            "  let t: float32x16 = (b[ramp((k * 16), 1, 16)] + float32x16(ramp(0, 1, 16)))\n"
            "  acc[ramp(0, 1, 16)] = fma(broadcast(a[k], 16), t, acc[ramp(0, 1, 16)])\n"
            "}\n");
}

TEST(VectorizeLoopsTest, StridedLoadsBecomeGathers) {
  Buffer x("x"), y("y");
  Var v("v");
  Stmt s = For::Make(v, 0, 8, LoopKind::kVectorized, Store::Make(y, v, x(v * 2 + 1)));
  EXPECT_EQ(ToText(VectorizeLoops(s)), "y[ramp(0, 1, 8)] = x[ramp(1, 2, 8)]\n");
}

// Loops that must stay serial because vector execution could change their result.
TEST(VectorizeLoopsTest, FallsBackToSerialWhenLanesCouldInteract) {
  Buffer x("x"), y("y"), s("s"), t("t", MemoryScope::kStack);
  Var v("v"), k("k");
  auto vec = [&](Stmt body) { return For::Make(v, 0, 8, LoopKind::kVectorized, body); };
  std::vector<std::pair<std::string, Stmt>> cases = {
      {"reduction into one element", vec(Store::Make(s, 0, s(0) + x(v)))},
      {"loop-carried dependence", vec(Store::Make(y, v + 1, y(v) * 2.0f))},
      {"overlapping lanes across an inner loop",
       vec(For::Make(k, 0, 4, LoopKind::kSerial, Store::Make(y, k + v, y(k + v) + 1.0f)))},
      {"call", vec(Evaluate::Make(CallExtern::Make(Type::Int32(), "f", {x(v)})))},
      {"condition on the lane", vec(IfThenElse::Make(v < 3, Store::Make(y, v, 0.0f)))},
      {"allocation", vec(Allocate::Make(t, 1, Store::Make(y, v, 0.0f)))},
      {"inner extent on the lane",
       vec(For::Make(k, 0, v, LoopKind::kSerial, Store::Make(y, v * 8 + k, 0.0f)))},
      {"scatter through a non-affine index", vec(Store::Make(y, v * v, 1.0f))},
      {"already vector body", vec(Store::Make(y, Ramp::Make(v * 4, 1, 4), 1.0f))},
  };
  for (const auto& [name, stmt] : cases) {
    std::string text = ToText(VectorizeLoops(stmt));
    EXPECT_TRUE(Contains(text, "for.serial (v, 0, 8)")) << name << ":\n" << text;
  }
}

TEST(VectorizeLoopsTest, InnerLoopWithLaneDisjointRowsIsVectorized) {
  // Each lane owns column v of rows k: y[k*8 + v] is read and written by one lane only.
  Buffer y("y");
  Var v("v"), k("k");
  Stmt s = For::Make(
      v, 0, 8, LoopKind::kVectorized,
      For::Make(k, 0, 4, LoopKind::kSerial, Store::Make(y, k * 8 + v, y(k * 8 + v) + 1.0f)));
  EXPECT_EQ(ToText(VectorizeLoops(s)),
            "for.serial (k, 0, 4) {\n"
            "  y[ramp((k * 8), 1, 8)] = (y[ramp((k * 8), 1, 8)] + broadcast(1.0f, 8))\n"
            "}\n");
}

TEST(LowerTest, RunsStagesInOrderAndReportsEachOne) {
  Buffer x("x"), y("y");
  Var i("i"), u("u"), v("v");
  Expr idx = i * 32 + u * 16 + v;
  Stmt body = For::Make(
      i, 0, 2, LoopKind::kParallel,
      For::Make(u, 0, 2, LoopKind::kUnrolled,
                For::Make(v, 0, 16, LoopKind::kVectorized, Store::Make(y, idx, x(idx) + 0.0f))));
  std::vector<std::string> stages;
  std::string last;
  LowerOptions options;
  options.after_stage = [&](std::string_view stage, const std::string& text) {
    stages.emplace_back(stage);
    last = text;
  };
  absl::StatusOr<LoweredFunc> lowered = Lower(LoweredFunc{"copy", {x, y}, body}, options);
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  EXPECT_EQ(stages, (std::vector<std::string>{"input", "simplify", "unroll", "vectorize",
                                              "simplify-final"}));
  EXPECT_EQ(last, ToText(*lowered));
  EXPECT_EQ(ToText(*lowered),
            "func copy(x: float32*, y: float32*) {\n"
            "  for.parallel (i, 0, 2) {\n"
            "    y[ramp((i * 32), 1, 16)] = x[ramp((i * 32), 1, 16)]\n"
            "    y[ramp(((i * 32) + 16), 1, 16)] = x[ramp(((i * 32) + 16), 1, 16)]\n"
            "  }\n"
            "}\n");
}

TEST(LowerTest, InvalidInputIsInvalidArgument) {
  Buffer y("y");
  Var i("i"), k("k");
  absl::StatusOr<LoweredFunc> lowered = Lower(
      LoweredFunc{"bad", {y}, For::Make(i, 0, 4, LoopKind::kSerial, Store::Make(y, k, 0.0f))});
  EXPECT_EQ(lowered.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tune::ir
