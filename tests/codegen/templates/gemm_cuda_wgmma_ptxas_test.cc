// gemm.cuda.wgmma's PTX through ptxas, where it is installed: for the presets and the seeds'
// shapes of every pipeline (cp.async stages, TMA, clusters, persistent grids, grid splits, fp8
// promotion), the wgmma instruction and the async-proxy fence, the register split and the
// split's barriers, then ptxas -v: no spills, no serialised wgmma, and no setmaxnreg.inc beyond
// what the producer's warpgroup releases.
#include <optional>
#include <string>

#include "codegen/llvm/gpu_backend.h"
#include "codegen/templates/template.h"
#include "common/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/ptxas.h"
#include "tests/codegen/templates/gpu_template_cases.h"
#include "tests/codegen/templates/gpu_template_check.h"
#include "tests/codegen/templates/wgmma_test_configs.h"

namespace tune {
namespace {
using namespace testing::wgmma;  // NOLINT(google-build-using-namespace)

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kName[] = "gemm.cuda.wgmma";

// The count of the PTX's `setmaxnreg.<action>` ("inc" or "dec"), if it has one.
std::optional<int64_t> SetMaxRegisters(const std::string& ptx, const std::string& action) {
  const std::string op = "setmaxnreg." + action + ".sync.aligned.u32 ";
  const size_t at = ptx.find(op);
  if (at == std::string::npos) {
    return std::nullopt;
  }
  return std::stoll(ptx.substr(at + op.size()));
}

// The registers per thread of ptxas -v's report ("Used 168 registers").
std::optional<int64_t> PtxasRegisters(const std::string& report) {
  const std::string used = "Used ";
  const size_t at = report.find(used);
  if (at == std::string::npos) {
    return std::nullopt;
  }
  return std::stoll(report.substr(at + used.size()));
}

TEST(GemmCudaWgmmaPtx, PresetsUseWgmmaAndAssembleWithoutSpillsOrSerialisation) {
  if (!testing::PtxasInstalled()) {
    GTEST_SKIP() << testing::kPtxas << " is not installed";
  }
  struct Case {
    const char* text;
    Config config;
    const char* wgmma;  // the instruction the PTX must hold
  };
  for (const Case& c : {
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16", Knobs(128, 256, 2, 1, 4, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=f16", Knobs(128, 128, 2, 1, 5, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"},
           Case{"gemm:M=64,N=4096,K=4096,layout=NT,dtype=bf16,epilogue=bias",
                Knobs(64, 128, 1, 1, 5, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,dtype=bf16", Knobs(128, 256, 2, 1, 4, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"},
           Case{"gemm:M=16,N=4096,K=4096,layout=NT,dtype=bf16", Knobs(64, 32, 1, 1, 4, 16, 8, 1, 4),
                "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=i8", Knobs(128, 256, 2, 1, 4, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8"},
           Case{"gemm:M=1024,N=1024,K=1024,layout=NT,dtype=tf32", Knobs(128, 128, 2, 1, 4, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"},
           Case{"gemm:M=2048,N=2048,K=2048,layout=NT,dtype=fp8e4m3",
                Knobs(128, 128, 2, 1, 4, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16", Tma(128, 128, 2, 1, 5),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16", Tma(128, 256, 2, 1, 4),
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,dtype=bf16", Tma(128, 128, 1, 2, 4, 1, 1),
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3", Tma(128, 64, 2, 1, 4),
                "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3"},
           Case{"gemm:M=16,N=768,K=3072,layout=NT,dtype=bf16,epilogue=bias",
                Knobs(64, 64, 1, 1, 4, 16, 8, 8),
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"},
           Case{"gemm:M=64,N=4096,K=4096,layout=NT,dtype=bf16", Tma(64, 128, 1, 1, 4, 4),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           Case{"gemm:M=1024,N=768,K=768,layout=NT,dtype=bf16,epilogue=bias",
                Knobs(128, 128, 2, 1, 3, 16, 8, 1, 1, 0, 0, 1),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           Case{"gemm:M=256,N=3072,K=768,layout=NT,dtype=bf16",
                Knobs(128, 64, 2, 1, 4, 16, 8, 1, 1, 0, 0, 2),
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"},
           Case{"gemm:M=1024,N=3072,K=768,layout=NT,dtype=bf16",
                Knobs(128, 128, 2, 1, 4, 16, 8, 1, 1, 0, 1, 1),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           // The tiles that fill whole waves (WaveFitSeeds) of 4096 x 768 and 1024 x 768.
           Case{"gemm:M=4096,N=768,K=768,layout=NT,dtype=bf16", Tma(128, 192, 2, 1, 4, 1, 1),
                "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=768,K=768,layout=NT,dtype=bf16",
                Knobs(128, 192, 2, 1, 4, 16, 8, 1, 1, 1),
                "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=768,K=768,layout=NT,dtype=bf16", Tma(192, 128, 1, 2, 5),
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"},
           Case{"gemm:M=1024,N=768,K=768,layout=NT,dtype=bf16", Tma(64, 96, 1, 1, 5, 1, 1),
                "wgmma.mma_async.sync.aligned.m64n96k16.f32.bf16.bf16"},
           // The deep rings of products that stream B (StreamingSeeds).
           Case{"gemm:M=64,N=4096,K=4096,layout=NT,dtype=bf16", Tma(64, 32, 1, 1, 16),
                "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16"},
           Case{"gemm:M=16,N=11008,K=4096,layout=NT,dtype=bf16", Tma(64, 128, 1, 1, 8, 3),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           Case{"gemm:M=16,N=4096,K=11008,layout=NT,dtype=bf16", Knobs(64, 64, 1, 1, 12, 16, 8),
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"},
           // Clusters of two sharing B's tile through TMA multicast.
           Case{"gemm:M=4096,N=768,K=768,layout=NT,dtype=bf16",
                Clustered(Tma(128, 192, 2, 1, 4, 1, 1)),
                "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16", Clustered(Tma(128, 256, 2, 1, 4)),
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"},
           // Persistent grids: the consumers' loop over tiles keeps the register split.
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16",
                Persistent(Tma(128, 256, 2, 1, 4)),
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3,epilogue=bias",
                Persistent(Tma(128, 128, 2, 1, 5)),
                "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"},
           Case{"gemm:M=4096,N=4096,K=4096,dtype=f16", Persistent(Tma(128, 128, 2, 1, 4)),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"},
           Case{"gemm:M=4096,N=3072,K=768,layout=NT,dtype=bf16",
                Persistent(Tma(64, 128, 1, 1, 3), 2),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3",
                Persistent(Tma(128, 128, 2, 1, 5, 1, 1)),
                "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16",
                Persistent(Tma(128, 256, 2, 1, 3, 1, 1)),
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"},
           // Two blocks per multiprocessor of three warpgroups: 80 registers at launch, not 85.
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3",
                Persistent(Tma(64, 64, 1, 2, 5), 2),
                "wgmma.mma_async.sync.aligned.m64n32k32.f32.e4m3.e4m3"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16",
                Persistent(Tma(64, 128, 1, 1, 4), 2),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           // fp8's sums promoted every two steps: one group left in flight by even steps.
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3",
                PromotedEveryTwoSteps(Tma(128, 128, 2, 1, 4, 1, 1)),
                "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"},
           Case{"gemm:M=4096,N=4096,K=4096,layout=NT,dtype=fp8e4m3,epilogue=bias",
                PromotedEveryTwoSteps(Tma(64, 256, 1, 2, 4)),
                "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3"},
           Case{"gemm:M=8192,N=8192,K=8192,layout=NT,dtype=fp8e5m2,out=f32",
                Persistent(PromotedEveryTwoSteps(Tma(128, 128, 2, 1, 5))),
                "wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2"},
           Case{"gemm:M=4096,N=4096,K=384,layout=NT,dtype=fp8e4m3",
                Clustered(PromotedEveryTwoSteps(Tma(128, 96, 2, 1, 4, 1, 1))),
                "wgmma.mma_async.sync.aligned.m64n96k32.f32.e4m3.e4m3"},
           // Grid splits whose tile's blocks share the finish in one cluster (OneWaveSplitSeeds).
           Case{"gemm:M=256,N=768,K=3072,layout=NT,dtype=bf16",
                SplitInCluster(Tma(128, 128, 2, 1, 4, 8)),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           // Tiles of 128 accumulators a thread split, within the consumers' register budget.
           Case{"gemm:M=256,N=4096,K=4096,layout=NT,dtype=bf16",
                SplitInCluster(Tma(128, 256, 2, 1, 4, 3)),
                "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"},
           Case{"gemm:M=256,N=4096,K=4096,layout=NT,dtype=bf16", Tma(256, 128, 2, 1, 4, 4),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           Case{"gemm:M=256,N=4096,K=11008,layout=NT,dtype=bf16,epilogue=bias",
                SplitInCluster(Tma(128, 192, 2, 1, 4, 3)),
                "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16"},
           Case{"gemm:M=256,N=768,K=3072,layout=NT,dtype=bf16",
                SplitInCluster(Knobs(64, 64, 1, 1, 4, 16, 8, 4)),
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"},
           // Clusters sharing A along N (cuBLAS's 1 x 2 and 2 x 4 on these rows).
           Case{"gemm:M=256,N=4096,K=4096,layout=NT,dtype=bf16",
                ClusteredMxN(Tma(128, 64, 2, 1, 8), 1, 2),
                "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"},
           Case{"gemm:M=4096,N=3072,K=768,layout=NT,dtype=bf16",
                ClusteredMxN(Tma(256, 128, 2, 1, 4), 1, 2),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
           Case{"gemm:M=256,N=768,K=3072,layout=NT,dtype=bf16,epilogue=bias",
                ClusteredMxN(Tma(64, 32, 1, 1, 12, 1, 1), 2, 4),
                "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16"},
           // cuBLAS's kernel for 4096 x 3072 x 768: persistent 256 x 128 in clusters of 1 x 2.
           Case{"gemm:M=4096,N=3072,K=768,layout=NT,dtype=bf16",
                Persistent(ClusteredMxN(Tma(256, 128, 2, 1, 3, 1, 1), 1, 2)),
                "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"},
       }) {
    const Workload w = *Workload::Parse(c.text);
    absl::StatusOr<ir::LoweredFunc> lowered = testing::BuildLoweredGpu(kName, w, c.config, Sm90a());
    ASSERT_TRUE(lowered.ok()) << c.text << ": " << lowered.status();
    absl::StatusOr<GpuModule> module = EmitGpuModule({*lowered}, {.target = Sm90a()});
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_THAT(module->code, HasSubstr(c.wgmma)) << c.text;
    EXPECT_THAT(module->code, HasSubstr("fence.proxy.async.shared::cta"));
    // One group left in flight, but where fp8 sums are promoted every step (waited for at
    // once).
    const bool at_once = IsFp8Dtype(w.dtype()) && c.config.at("promote_steps") == 1;
    EXPECT_EQ(module->code.find("wgmma.wait_group.sync.aligned 1") == std::string::npos, at_once)
        << c.text;
    EXPECT_THAT(module->code, HasSubstr(".target sm_90a"));
    EXPECT_EQ(module->code.find("cp.async.bulk.tensor.2d") != std::string::npos,
              c.config.at("tma") == 1)
        << c.text;
    const bool clustered = c.config.at("cluster") * c.config.at("cluster_n") > 1;
    EXPECT_EQ(module->code.find(".multicast::cluster") != std::string::npos, clustered) << c.text;
    // The register split, but where the producer's warpgroup shares a finish (stream-K); a grid
    // split's finish runs in the consumers' branch.
    EXPECT_EQ(module->code.find("setmaxnreg.inc.sync.aligned.u32") != std::string::npos,
              c.config.at("tma") == 1 && c.config.at("streamk") == 0)
        << c.text;
    // A grid split: a zeroed module workspace, the fenced arrival, one atomic per block; in a
    // cluster, a cluster barrier instead.
    const bool split = c.config.at("gridk") > 1 || c.config.at("streamk") > 0;
    const bool in_cluster = c.config.at("split_cluster") == 1;
    EXPECT_EQ(module->code.find("_split_partials[") != std::string::npos, split) << c.text;
    EXPECT_EQ(module->code.find("atom.global.add.u32") != std::string::npos, split && !in_cluster)
        << c.text;
    EXPECT_EQ(module->code.find("fence.acq_rel.gpu") != std::string::npos, split && !in_cluster)
        << c.text;
    EXPECT_EQ(module->code.find("barrier.cluster.arrive") != std::string::npos,
              in_cluster || clustered)
        << c.text;
    // A persistent grid's consumers stage their output between barriers of their own, and
    // the consumers of a TMA pipeline split across blocks arrive at the tile's counter so.
    const std::string consumers_barrier =
        StrCat("bar.sync 1, ", 128 * c.config.at("wg_m") * c.config.at("wg_n"), ";");
    EXPECT_EQ(module->code.find(consumers_barrier) != std::string::npos,
              (c.config.at("persistent") == 1 && c.config.at("stage_c") == 1) ||
                  (c.config.at("tma") == 1 && c.config.at("gridk") > 1 && !in_cluster))
        << c.text;
    // layout=NN reads B transposed (imm-trans-b 1).
    EXPECT_EQ(module->code.find(", p, 1, 1, 0, 1;") != std::string::npos,
              w.gemm().layout == GemmLayout::kNN)
        << c.text;
    const testing::PtxasResult ptxas = testing::RunPtxas(module->code, "sm_90a");
    const std::string& report = ptxas.report;
    ASSERT_EQ(ptxas.exit_code, 0) << c.text << "\n" << report;
    EXPECT_THAT(report, HasSubstr("0 bytes spill stores")) << c.text << "\n" << report;
    // setmaxnreg.inc waits for registers from the block's pool, which holds only what the
    // producer's warpgroup releases: asking more hangs the block.
    if (const std::optional<int64_t> raised = SetMaxRegisters(module->code, "inc")) {
      const std::optional<int64_t> launch = PtxasRegisters(report);
      ASSERT_TRUE(launch.has_value()) << report;
      const int64_t lowered_to = SetMaxRegisters(module->code, "dec").value_or(*launch);
      const int64_t consumers = 128 * c.config.at("wg_m") * c.config.at("wg_n");
      EXPECT_LE((*raised - *launch) * consumers, (*launch - lowered_to) * 128)
          << c.text << " " << ConfigToString(c.config) << ": setmaxnreg.inc " << *raised << " from "
          << *launch << " at launch\n"
          << report;
    }
    EXPECT_THAT(report, Not(HasSubstr("serialized"))) << c.text << "\n" << report;
    EXPECT_THAT(report, Not(HasSubstr("ignored"))) << c.text << "\n" << report;
  }
}

}  // namespace
}  // namespace tune
