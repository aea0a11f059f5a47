#include "codegen/ir/loop_features.h"

#include <cmath>

#include "gtest/gtest.h"

namespace tune::ir {
namespace {

float FeatureOf(const std::vector<float>& f, std::string_view name) {
  const auto& names = LoopFeatureNames();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) {
      return f[i];
    }
  }
  ADD_FAILURE() << "no feature " << name;
  return -1;
}

float Log(double x) { return static_cast<float>(std::log2(1.0 + x)); }

// C[i][j] += A[i][k] * B[k][j] for i < 64 (parallel), k < 128, j < 16 (vectorized):
// A is invariant along j, B and C are contiguous.
LoweredFunc Matmul(int64_t rows) {
  Buffer a("A"), b("B"), c("C");
  Var i("i"), k("k"), j("j");
  Stmt store = Store::Make(c, i * 16 + j, Fma::Make(a(i * 128 + k), b(k * 16 + j), c(i * 16 + j)));
  Stmt nest = For::Make(
      i, 0, rows, LoopKind::kParallel,
      For::Make(k, 0, 128, LoopKind::kSerial, For::Make(j, 0, 16, LoopKind::kVectorized, store)));
  return LoweredFunc{"matmul", {a, b, c}, nest};
}

TEST(LoopFeaturesTest, CountsLoopsOperationsAndAccessStridesOfANest) {
  std::vector<float> f = LoopFeatures(Matmul(64));
  ASSERT_EQ(f.size(), kLoopFeatureCount);
  EXPECT_EQ(FeatureOf(f, "parallel_loops"), 1);
  EXPECT_EQ(FeatureOf(f, "serial_loops"), 1);
  EXPECT_EQ(FeatureOf(f, "vectorized_loops"), 1);
  EXPECT_EQ(FeatureOf(f, "max_depth"), 3);
  EXPECT_EQ(FeatureOf(f, "vector_lanes"), 16);
  EXPECT_FLOAT_EQ(FeatureOf(f, "parallel_extent"), Log(64));
  EXPECT_FLOAT_EQ(FeatureOf(f, "fma_lanes"), Log(64.0 * 128 * 16));
  EXPECT_FLOAT_EQ(FeatureOf(f, "load_elements"), Log(3.0 * 64 * 128 * 16));
  EXPECT_FLOAT_EQ(FeatureOf(f, "nest_extent_0"), Log(64));
  EXPECT_FLOAT_EQ(FeatureOf(f, "nest_extent_1"), Log(128));
  EXPECT_FLOAT_EQ(FeatureOf(f, "nest_extent_2"), Log(16));
  EXPECT_FLOAT_EQ(FeatureOf(f, "load_invariant_share"), 1.0f / 3);
  EXPECT_FLOAT_EQ(FeatureOf(f, "load_contiguous_share"), 2.0f / 3);
  EXPECT_FLOAT_EQ(FeatureOf(f, "store_contiguous_share"), 1.0f);
  // The innermost loop touches 1 element of A and 16 of B and C (x2: load and store of C).
  EXPECT_FLOAT_EQ(FeatureOf(f, "footprint_bytes_inner0"), Log(4.0 * (1 + 16 + 16 + 16)));
  // One row i: 128 of A, 128 x 16 of B, 16 of C (loaded and stored).
  EXPECT_FLOAT_EQ(FeatureOf(f, "footprint_bytes_inner1"), Log(4.0 * (128 + 128 * 16 + 16 + 16)));
}

TEST(LoopFeaturesTest, DifferentExtentsGiveDifferentFeatures) {
  EXPECT_NE(LoopFeatures(Matmul(64)), LoopFeatures(Matmul(32)));
  EXPECT_EQ(LoopFeatures(Matmul(64)), LoopFeatures(Matmul(64)));
}

}  // namespace
}  // namespace tune::ir
