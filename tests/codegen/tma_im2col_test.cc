// TMA copies through im2col tensor maps (ir::TensorMap with corners): a column of pixels of a
// channels-last tensor, each at its window corner plus the filter tap's offsets, on the simulator
// (the walk over the corner bounds with padding, element strides and the next image, zeros
// outside the tensor), in the launch (the corners and element strides the launcher encodes) and
// in the PTX (.im2col with 16-bit offsets), which ptxas assembles when it is installed.
#include <span>
#include <string>
#include <vector>

#include "codegen/ir/ir.h"
#include "codegen/ir/verifier.h"
#include "codegen/llvm/gpu_backend.h"
#include "codegen/llvm/gpu_launch.h"
#include "codegen/sim/gpu_sim.h"
#include "common/gpu_arch.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/ptxas.h"
#include "tests/codegen/tma_kernels.h"

namespace tune {
namespace {

using ir::Expr;
using ::testing::HasSubstr;

// The input: float32 [kImages][kH][kW][kC]; a column of kPixels pixels of 32 channels (128
// bytes) per copy.
constexpr int64_t kImages = 2, kH = 5, kW = 6, kC = 32, kPixels = 24;

// A convolution's view: filter kR x kS, padding, stride and dilation.
struct Window {
  int64_t r = 3, s = 3, pad = 1, stride = 1, dilation = 1;
};

ir::TensorMap Im2colMap(const ir::Buffer& in, const Window& w) {
  ir::TensorMap map{
      .buffer = in,
      .dims = {kC, kW, kH, kImages},
      .strides = {kC, kW * kC, kH * kW * kC},
      .box = {kC, kPixels, 1, 1},
      .swizzle_bytes = 0,
      .lower_corner = {-w.pad, -w.pad},
      .upper_corner = {w.pad - (w.s - 1) * w.dilation, w.pad - (w.r - 1) * w.dilation}};
  if (w.stride > 1) {
    map.element_strides = {1, w.stride, w.stride, 1};
  }
  return map;
}

// One block of 64 threads: thread 0 copies the column whose first corner is (x0, y0) of image
// n0, at tap offsets (ox, oy); every thread then copies the column out to `out` ([kPixels][kC]).
ir::LoweredFunc ColumnCopy(const Window& w, int64_t x0, int64_t y0, int64_t n0, int64_t ox,
                           int64_t oy) {
  ir::Buffer in("in");
  return testing::OneCopyKernel(
      "column_copy", in, kPixels * kC, [&](const ir::Buffer& smem, const ir::Buffer& bars) {
        return ir::TensorCopy::Make(Im2colMap(in, w), {Expr(0), Expr(x0), Expr(y0), Expr(n0)}, smem,
                                    Expr(0), bars, Expr(0), 0, {Expr(ox), Expr(oy)});
      });
}

std::vector<float> Input() {
  std::vector<float> t(kImages * kH * kW * kC);
  for (size_t e = 0; e < t.size(); ++e) {
    t[e] = static_cast<float>(e + 1);
  }
  return t;
}

// The column as a convolution reads it: output pixels p0, p0 + 1, ... (row-major over images,
// output rows and columns) at tap (ty, tx) of the window, zeros in the padding and past the last
// image.
std::vector<float> Expected(const std::vector<float>& in, const Window& w, int64_t p0, int64_t ty,
                            int64_t tx) {
  const int64_t p = (kH + 2 * w.pad - w.dilation * (w.r - 1) - 1) / w.stride + 1;
  const int64_t q = (kW + 2 * w.pad - w.dilation * (w.s - 1) - 1) / w.stride + 1;
  std::vector<float> out;
  for (int64_t pixel = p0; pixel < p0 + kPixels; ++pixel) {
    const int64_t n = pixel / (p * q);
    const int64_t y = pixel % (p * q) / q * w.stride - w.pad + ty * w.dilation;
    const int64_t x = pixel % q * w.stride - w.pad + tx * w.dilation;
    const bool inside = n < kImages && y >= 0 && y < kH && x >= 0 && x < kW;
    for (int64_t c = 0; c < kC; ++c) {
      out.push_back(inside ? in[((n * kH + y) * kW + x) * kC + c] : 0.0f);
    }
  }
  return out;
}

std::vector<float> RunColumn(const Window& w, int64_t x0, int64_t y0, int64_t n0, int64_t ox,
                             int64_t oy) {
  std::vector<float> in = Input();
  std::vector<float> out(kPixels * kC, -1.0f);
  ir::LoweredFunc f = ColumnCopy(w, x0, y0, n0, ox, oy);
  EXPECT_TRUE(ir::Verify(f).ok()) << ir::Verify(f);
  absl::Status s = RunGpuKernel(f, {std::span<float>(in), std::span<float>(out)});
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

TEST(TensorCopyIm2colSim, AColumnWalksTheOutputPixelsOfATapIntoTheNextImageWithZerosInThePadding) {
  // 3x3, pad 1: 6 x 5 outputs per image. Pixel 7 is output (1, 1) of image 0, whose corner is
  // (0, 0); 24 pixels reach into image 1. Tap (2, 0): offsets x 0, y 2.
  const Window w;
  EXPECT_EQ(RunColumn(w, 0, 0, 0, 0, 2), Expected(Input(), w, 7, 2, 0));
  // The first pixel at the lower corner (-1, -1) and the centre tap.
  EXPECT_EQ(RunColumn(w, -1, -1, 0, 1, 1), Expected(Input(), w, 0, 1, 1));
  // From the last image's last rows, the column runs past the tensor: zeros.
  EXPECT_EQ(RunColumn(w, -1, 3, 1, 2, 2), Expected(Input(), w, 30 + 4 * 6, 2, 2));
}

TEST(TensorCopyIm2colSim, ElementStridesStepTheCornersAndDilationTheOffsets) {
  // Stride 2, pad 2, dilation 2 over 5 x 6: 3 x 3 outputs per image.
  const Window w{.r = 3, .s = 3, .pad = 2, .stride = 2, .dilation = 2};
  EXPECT_EQ(RunColumn(w, -2, -2, 0, 2, 4), Expected(Input(), w, 0, 2, 1));
  EXPECT_EQ(RunColumn(w, 0, 0, 0, 4, 0), Expected(Input(), w, 4, 0, 2));
}

TEST(TensorCopyIm2colSim, AFirstCornerOutsideTheBoundsIsRefusedNamingTheBounds) {
  std::vector<float> in = Input();
  std::vector<float> out(kPixels * kC);
  // Corner x = 5 with 3x3, pad 1 over a width of 6: the bounds are -1..4.
  absl::Status s = RunGpuKernel(ColumnCopy(Window{}, 5, 0, 0, 0, 0),
                                {std::span<float>(in), std::span<float>(out)});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("first window corner 5 of spatial dimension 0"));
  EXPECT_THAT(s.message(), HasSubstr("-1..4"));
}

TEST(TensorCopyIm2col, MapsOutsideTheIm2colRulesAreRefusedWhenBuilt) {
  ir::Buffer in("in");
  ir::Buffer smem("smem", ir::MemoryScope::kGpuShared, ir::Type::Float32());
  ir::Buffer bars("bars", ir::MemoryScope::kGpuShared, ir::Type::Int64());
  auto make = [&](ir::TensorMap map, std::vector<Expr> offsets) {
    std::vector<Expr> coords(map.dims.size(), Expr(0));
    return ir::TensorCopy::Make(std::move(map), std::move(coords), smem, Expr(0), bars, Expr(0), 0,
                                std::move(offsets));
  };
  ir::TensorMap map = Im2colMap(in, Window{});
  EXPECT_DEATH(make(map, {Expr(0)}), "1 im2col offsets for a rank-4 map");
  ir::TensorMap far = map;
  far.lower_corner = {-200, -1};
  EXPECT_DEATH(make(far, {Expr(0), Expr(0)}), "corner -200 of a rank-4 map");
  ir::TensorMap stride = map;
  stride.element_strides = {1, 9, 1, 1};
  EXPECT_DEATH(make(stride, {Expr(0), Expr(0)}), "element stride 9");
  ir::TensorMap tiled = map;
  tiled.lower_corner.clear();
  tiled.upper_corner.clear();
  EXPECT_DEATH(make(tiled, {Expr(0), Expr(0)}), "im2col offsets or an upper corner");
}

TEST(TensorCopyIm2colLaunch, TheLaunchCarriesTheCornersAndElementStrides) {
  ir::LoweredFunc f = ColumnCopy(Window{.pad = 2, .stride = 2, .dilation = 2}, -2, -2, 0, 0, 0);
  absl::StatusOr<GpuArch> sm90 = GpuArchFor(*Target::Parse("cuda -arch=sm_90"));
  ASSERT_TRUE(sm90.ok());
  absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(f, &*sm90);
  ASSERT_TRUE(launch.ok()) << launch.status();
  ASSERT_EQ(launch->tensor_maps.size(), 1u);
  const GpuTensorMap& map = launch->tensor_maps[0];
  EXPECT_TRUE(map.im2col);
  EXPECT_EQ(map.rank, 4u);
  EXPECT_EQ(map.box[0], uint32_t{kC});
  EXPECT_EQ(map.box[1], uint32_t{kPixels});
  EXPECT_EQ(map.lower_corner, (std::array<int32_t, 3>{-2, -2, 0}));
  EXPECT_EQ(map.upper_corner, (std::array<int32_t, 3>{-2, -2, 0}));
  EXPECT_EQ(map.element_strides, (std::array<uint32_t, 5>{1, 2, 2, 1, 1}));
  EXPECT_EQ(map.strides[2], uint64_t{kH * kW * kC * 4});
}

TEST(TensorCopyIm2colPtx, TheCopyIsAnIm2colBulkTensorCopyWithSixteenBitOffsets) {
  const Target target = *Target::Parse("cuda -arch=sm_90a");
  absl::StatusOr<GpuModule> module =
      EmitGpuModule({ColumnCopy(Window{}, 0, 0, 0, 1, 2)}, {.target = target});
  ASSERT_TRUE(module.ok()) << module.status();
  const std::string& ptx = module->code;
  EXPECT_THAT(ptx, HasSubstr("cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::"
                             "complete_tx::bytes"));
  EXPECT_THAT(ptx, ::testing::ContainsRegex(R"(\], \{%rs[0-9]+, %rs[0-9]+\};)"));
  if (!testing::PtxasInstalled()) {
    GTEST_SKIP() << testing::kPtxas << " is not installed";
  }
  const testing::PtxasResult assembled = testing::RunPtxas(ptx, "sm_90a");
  EXPECT_EQ(assembled.exit_code, 0) << assembled.report << "\n" << ptx;
}

}  // namespace
}  // namespace tune
