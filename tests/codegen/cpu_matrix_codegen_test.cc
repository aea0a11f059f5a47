// x86's matrix instructions in the CPU backend: ir::AmxTileOp as the AMX intrinsics where the
// CPU has AMX, a clear refusal elsewhere (the kernels that run them are checked on an AMX host:
// gemm.cpu.dot's tests run the dot products on this one).
#include <string>

#include "codegen/ir/ir.h"
#include "codegen/ir/printer.h"
#include "codegen/llvm/cpu_backend.h"
#include "codegen/lower.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

using ::testing::HasSubstr;
using namespace ir;  // NOLINT: the IR builders read better unqualified

// C (16 x 16 f32) = A (16 x 32 bf16) x B (16 pairs x 16 columns, VNNI), through tiles 0..2.
LoweredFunc TileProduct() {
  Buffer a("A", MemoryScope::kGlobal, Type::BFloat16());
  Buffer b("B", MemoryScope::kGlobal, Type::BFloat16());
  Buffer c("C");
  LoweredFunc f;
  f.name = "tile_product";
  f.params = {a, b, c};
  f.body = Block::Make({
      AmxTileOp::Configure({{16, 64}, {16, 64}, {16, 64}}),
      AmxTileOp::Zero(0),
      AmxTileOp::Load(1, a, Expr(0), 32),
      AmxTileOp::Load(2, b, Expr(0), 32),
      AmxTileOp::Dot(Dtype::kBf16, 0, 1, 2),
      AmxTileOp::Store(0, c, Expr(0), 16),
      AmxTileOp::Release(),
  });
  return f;
}

TEST(CpuMatrixCodegen, EmitsTheAmxInstructionsForACpuWithAmx) {
  absl::StatusOr<LoweredFunc> lowered = Lower(TileProduct());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<std::string> assembly =
      EmitCpuAssembly({*lowered}, {.cpu = "sapphirerapids", .threads = 1});
  ASSERT_TRUE(assembly.ok()) << assembly.status();
  for (const char* instruction :
       {"ldtilecfg", "tilezero", "tileloadd", "tdpbf16ps", "tilestored", "tilerelease"}) {
    EXPECT_THAT(*assembly, HasSubstr(instruction));
  }
}

TEST(CpuMatrixCodegen, RefusesAmxForACpuWithoutIt) {
  absl::StatusOr<LoweredFunc> lowered = Lower(TileProduct());
  ASSERT_TRUE(lowered.ok()) << lowered.status();
  absl::StatusOr<std::string> assembly =
      EmitCpuAssembly({*lowered}, {.cpu = "znver4", .threads = 1});
  ASSERT_FALSE(assembly.ok());
  EXPECT_THAT(assembly.status().message(), HasSubstr("needs amx-tile"));
}

TEST(CpuMatrixCodegen, PrintsTileOperations) {
  const std::string text = ToText(TileProduct());
  EXPECT_THAT(text, HasSubstr("amx_configure(16x64B, 16x64B, 16x64B)"));
  EXPECT_THAT(text, HasSubstr("amx_dot_bf16(t0 += t1 x t2)"));
  EXPECT_THAT(text, HasSubstr("amx_load(t1, A[0], stride 32)"));
}

}  // namespace
}  // namespace tune
