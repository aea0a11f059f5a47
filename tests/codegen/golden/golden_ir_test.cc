// Golden IR text: each template at a fixed shape, target and config, printed after lowering,
// must match the file next to this test. With TUNE_UPDATE_GOLDEN=1 the test rewrites the files
// instead (review the diff before committing it).
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "codegen/ir/printer.h"
#include "codegen/lower.h"
#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

struct GoldenCase {
  const char* file;
  const char* template_name;
  const char* workload;
  const char* config;
  const char* target = nullptr;  // kTarget when null
};

// A fixed -mcpu (not native) so that the vector width, and so the text, is the same on every
// machine.
constexpr const char* kTarget = "llvm -mcpu=skylake-avx512 -threads=1";

std::string LoweredText(const GoldenCase& c) {
  Target target = *Target::Parse(c.target != nullptr ? c.target : kTarget);
  Workload workload = *Workload::Parse(c.workload);
  const KernelTemplate* tpl = nullptr;
  for (const KernelTemplate* t : Catalog::BuiltIn().TemplatesFor(workload, target)) {
    if (t->name == c.template_name) {
      tpl = t;
    }
  }
  EXPECT_NE(tpl, nullptr);
  if (tpl == nullptr) {
    return "";
  }
  absl::StatusOr<Config> config = ParseConfig(c.config);
  EXPECT_TRUE(config.ok()) << config.status();
  if (c.target != nullptr && config.ok()) {
    // The GPU cases pin the template's default config.
    EXPECT_EQ(ConfigToString(tpl->default_config(workload, target)), ConfigToString(*config));
  }
  absl::StatusOr<ir::LoweredFunc> built =
      tpl->build(workload, target, *config, DefaultFunctionName(workload));
  EXPECT_TRUE(built.ok()) << built.status();
  if (!built.ok()) {
    return "";
  }
  absl::StatusOr<ir::LoweredFunc> lowered = Lower(*std::move(built));
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  if (!lowered.ok()) {
    return "";
  }
  return ir::ToText(*lowered);
}

void CheckGolden(const GoldenCase& c) {
  const std::string path = std::string(TUNE_GOLDEN_DIR) + "/" + c.file;
  const std::string text = LoweredText(c);
  ASSERT_FALSE(text.empty());
  const char* update = std::getenv("TUNE_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream out(path, std::ios::trunc);
    out << text;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    GTEST_SKIP() << "rewrote " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing golden file " << path
                         << " (run with TUNE_UPDATE_GOLDEN=1 to create it)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(text, want.str()) << "lowered IR differs from " << path
                              << "; if the change is intended, rerun with TUNE_UPDATE_GOLDEN=1 "
                                 "and review the diff";
}

TEST(GoldenIr, GemmCpuBlockedWithEdgeTilesAndBiasRelu) {
  CheckGolden({"gemm_cpu_blocked.txt", "gemm.cpu.blocked", "gemm:M=5,N=20,K=7,epilogue=bias_relu",
               R"({"kc":7,"mc":5,"mr":2,"nc":20,"nr":16,"order":0,"pack_a":1,"pack_b":1,)"
               R"("unroll_k":2})"});
}

TEST(GoldenIr, Conv2dCpuDirectWithPaddingAndRelu) {
  CheckGolden({"conv2d_cpu_direct.txt", "conv2d.cpu.direct",
               "conv2d:N=1,C=2,H=5,W=6,K=3,R=3,S=3,stride=1,pad=1,epilogue=relu",
               R"({"cc":2,"chunk_outer":0,"kt":1,"kv":1,"loop_order":0,"pt":1,"qt":4,)"
               R"("tile_order":0,"unroll_c":1,"unroll_rs":0})"});
}

// The GPU templates' default configs at small shapes with edge tiles.
TEST(GoldenIr, GemmGpuTiledDefaultWithEdgeTilesAndBias) {
  CheckGolden(
      {"gemm_gpu_tiled.txt", "gemm.gpu.tiled", "gemm:M=33,N=65,K=17,epilogue=bias",
       R"({"async":0,"bk":16,"bm":16,"bn":32,"fragpipe":0,"gridk":1,"splitk":1,"stages":2,"tm":2,"tn":2,"vec":1})",
       "cuda -arch=sm_90"});
}

TEST(GoldenIr, Conv2dGpuImplicitGemmDefaultWithPaddingAndRelu) {
  CheckGolden({"conv2d_gpu_implicit_gemm.txt", "conv2d.gpu.implicit_gemm",
               "conv2d:N=1,C=8,H=9,W=9,K=16,R=3,S=3,stride=1,pad=1,epilogue=relu",
               R"({"bk":8,"bm":8,"bn":8,"gridk":1,"stages":2,"tm":2,"tn":2,"vec":4})",
               "cuda -arch=sm_90"});
}

TEST(GoldenIr, Conv2dGpuDirectDefaultWithStrideAndBiasRelu) {
  CheckGolden({"conv2d_gpu_direct.txt", "conv2d.gpu.direct",
               "conv2d:N=1,C=8,H=9,W=9,K=16,R=3,S=3,stride=2,pad=1,epilogue=bias_relu",
               R"({"tile_f":4,"tile_rc":4,"tile_x":4,"tile_y":1,"vf":1,"vx":1})",
               "cuda -arch=sm_90"});
}

}  // namespace
}  // namespace tune
