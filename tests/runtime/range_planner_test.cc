// libtune_range.so's planner (runtime/tune_range.h): which kernels, split or padded, a size runs
// on, priced by the kernels' seconds and a padded piece's copies, or by their sizes.

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "range_test_kernels.h"
#include "runtime/tune_range.h"

namespace {

using namespace tune_range_test;

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

TEST(RangePieces, APaddedPiecePaysForItsCopies) {
  // 12 rows: 16 padded costs 11 us of kernel time, 8 + 4 costs 12 us.
  auto plan = PricedPlan({1, 2, 4, 8, 16, 32}, {1e-6, 2e-6, 4e-6, 8e-6, 11e-6, 32e-6});
  EXPECT_EQ(Pieces(plan->plan, 12), (PieceList{{16, 12}})) << "rows of a few bytes copy cheaply";
  // Rows of 4 KB: A and C at the kernel's 16 rows, written and read, move 256 KB (26 us).
  for (auto& tensor : plan->tensors) {
    tensor.inner_bytes = 4096;
  }
  plan->Relink();
  EXPECT_EQ(Pieces(plan->plan, 12), (PieceList{{8, 8}, {4, 4}}));
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

}  // namespace
