// The simulator's AMX tile instructions (codegen/sim/interpreter_amx.cc): a product of tiles
// loaded from memory, and the faults the hardware has.
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "codegen/ir/ir.h"
#include "codegen/sim/gpu_sim.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

using ir::AmxTileOp;
using ir::Block;
using ir::Buffer;
using ir::Expr;
using ir::LoweredFunc;
using ir::MemoryScope;
using ::testing::HasSubstr;

TEST(GpuSimTest, AmxTileProductsComputeTheMatrixProductOfTheirRows) {
  // One bf16 tile product: C (2 x 2 f32) += A (2 rows of 2 bf16) x B (1 row of 2 pairs).
  Buffer a("a", MemoryScope::kGlobal, ir::Type::BFloat16());
  Buffer b("b", MemoryScope::kGlobal, ir::Type::BFloat16());
  Buffer c("c");
  const std::vector<ir::AmxTileShape> shapes = {{2, 8}, {2, 4}, {1, 8}};
  LoweredFunc f{"amx",
                {a, b, c},
                Block::Make({AmxTileOp::Configure(shapes), AmxTileOp::Load(0, c, Expr(0), 2),
                             AmxTileOp::Load(1, a, Expr(0), 2), AmxTileOp::Load(2, b, Expr(0), 4),
                             AmxTileOp::Dot(Dtype::kBf16, 0, 1, 2),
                             AmxTileOp::Store(0, c, Expr(0), 2), AmxTileOp::Release()})};
  // bf16 1, 2 / 3, 4 (A rows), B pairs (5, 6) and (7, 8): C = [[1*5+2*6, 1*7+2*8], [...]] + 1.
  auto bf16 = [](float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    return static_cast<uint16_t>(bits >> 16);
  };
  std::vector<uint16_t> a_data = {bf16(1), bf16(2), bf16(3), bf16(4)};
  std::vector<uint16_t> b_data = {bf16(5), bf16(6), bf16(7), bf16(8)};
  std::vector<float> c_data(4, 1.0f);
  const std::vector<std::span<std::byte>> args = {std::as_writable_bytes(std::span(a_data)),
                                                  std::as_writable_bytes(std::span(b_data)),
                                                  std::as_writable_bytes(std::span(c_data))};
  ASSERT_TRUE(RunGpuKernel(f, args).ok()) << RunGpuKernel(f, args);
  EXPECT_THAT(c_data, ::testing::ElementsAre(18.0f, 24.0f, 40.0f, 54.0f));
}

TEST(GpuSimTest, AmxTileInstructionsOutsideTheirConfigurationOrBufferAreFaults) {
  Buffer c("c");
  std::vector<float> data(16, 0.0f);
  LoweredFunc unconfigured{"amx", {c}, AmxTileOp::Zero(0)};
  absl::Status status = RunGpuKernel(unconfigured, {data});
  EXPECT_THAT(std::string(status.message()), HasSubstr("before the tiles were configured"));
  LoweredFunc past_end{"amx",
                       {c},
                       Block::Make({AmxTileOp::Configure({{4, 16}}),
                                    AmxTileOp::Load(0, c, Expr(4), 4), AmxTileOp::Release()})};
  status = RunGpuKernel(past_end, {data});
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("out-of-bounds AMX tile load from buffer `c`"));
  LoweredFunc mismatched{
      "amx",
      {c},
      Block::Make({AmxTileOp::Configure({{2, 8}, {3, 4}, {1, 8}}),
                   AmxTileOp::Dot(Dtype::kBf16, 0, 1, 2), AmxTileOp::Release()})};
  status = RunGpuKernel(mismatched, {data});
  EXPECT_THAT(std::string(status.message()), HasSubstr("mismatched shapes"));
}

}  // namespace
}  // namespace tune
