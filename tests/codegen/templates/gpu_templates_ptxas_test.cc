// PTX of the GPU templates' defaults and chosen configs, assembled by ptxas when it is
// installed (/usr/local/cuda/bin/ptxas): no spills, and cp.async where the config asks for it.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <regex>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/ir/printer.h"
#include "codegen/ir/verifier.h"
#include "codegen/llvm/gpu_backend.h"
#include "codegen/llvm/gpu_launch.h"
#include "codegen/lower.h"
#include "codegen/sim/gpu_sim.h"
#include "codegen/templates/template.h"
#include "common/files.h"
#include "common/reference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/gpu_template_cases.h"

namespace tune {
namespace {

using testing::GpuTemplate;
using testing::kConvs;
using testing::kGemms;

using ::testing::HasSubstr;

constexpr const char* kPtxas = "/usr/local/cuda/bin/ptxas";

// This process's own directory for PTX files and ptxas logs. ctest runs each test in a process
// of its own, several at once, and two tests may assemble the same workload: a shared directory
// would let one overwrite the other's file between its write and its read.
const std::string& PtxDir() {
  static const TempDir dir = TempDir::Create("tune-ptx-").value();  // removed at exit
  return dir.path();
}

// ptxas -v's report for the PTX of one config ("" when ptxas failed: see *error).
std::string PtxasReport(const KernelTemplate& tpl, const Workload& w, const Config& c,
                        std::string* error) {
  Target target = *Target::Parse("cuda -arch=sm_90");
  absl::StatusOr<ir::LoweredFunc> built = tpl.build(w, target, c, DefaultFunctionName(w));
  if (!built.ok()) {
    *error = built.status().ToString();
    return "";
  }
  absl::StatusOr<ir::LoweredFunc> lowered = Lower(*std::move(built));
  if (!lowered.ok()) {
    *error = lowered.status().ToString();
    return "";
  }
  absl::StatusOr<GpuModule> module = EmitGpuModule({*lowered}, {.target = target});
  if (!module.ok()) {
    *error = module.status().ToString();
    return "";
  }
  const std::string& dir = PtxDir();
  const std::string ptx = dir + "/" + lowered->name + ".ptx";
  const std::string log = dir + "/" + lowered->name + ".log";
  std::ofstream(ptx) << module->code;
  const std::string cmd =
      std::string(kPtxas) + " -arch=sm_90 -v -o /dev/null " + ptx + " > " + log + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::stringstream text;
  text << std::ifstream(log).rdbuf();
  if (rc != 0) {
    *error = text.str();
    return "";
  }
  return text.str();
}

// Assembles `config` (the template's default when empty) for each workload: no spills.
void CheckNoSpills(std::string_view name, const std::vector<std::string>& workloads,
                   const Config& config = {}) {
  if (!std::filesystem::exists(kPtxas)) {
    GTEST_SKIP() << kPtxas << " is not installed";
  }
  Target target = *Target::Parse("cuda -arch=sm_90");
  for (const std::string& text : workloads) {
    Workload w = *Workload::Parse(text);
    const KernelTemplate* tpl = GpuTemplate(name, target, w);
    ASSERT_NE(tpl, nullptr);
    Config c = config.empty() ? tpl->default_config(w, target) : config;
    ASSERT_TRUE(tpl->space(w, target).IsValid(c)) << text << " " << ConfigToString(c);
    std::string error;
    std::string report = PtxasReport(*tpl, w, c, &error);
    ASSERT_FALSE(report.empty()) << text << ": " << error;
    EXPECT_THAT(report, HasSubstr("0 bytes spill stores")) << text << "\n" << report;
    EXPECT_THAT(report, HasSubstr("0 bytes spill loads")) << text << "\n" << report;
    std::smatch regs;
    if (std::regex_search(report, regs, std::regex("Used ([0-9]+) registers"))) {
      std::cout << name << " " << text << " " << ConfigToString(c) << ": " << regs[1]
                << " registers\n";
    }
  }
}

TEST(GemmGpuTiledPtx, DefaultsAssembleWithoutSpills) {
  CheckNoSpills("gemm.gpu.tiled",
                {"gemm:M=1024,N=1024,K=1024", "gemm:M=4096,N=4096,K=4096,epilogue=bias_relu",
                 "gemm:M=1,N=1000,K=333", "gemm:M=7,N=4096,K=512", "gemm:M=100,N=1000,K=333"});
}

TEST(GemmGpuTiledPtx, SixteenWideRegisterTilesAssembleWithoutSpillsPipelinedOrNot) {
  const std::vector<std::string> shapes = {"gemm:M=4096,N=4096,K=4096", "gemm:M=1000,N=1000,K=1000",
                                           "gemm:M=333,N=4096,K=777"};
  for (auto [tm, tn] : {std::pair<int64_t, int64_t>{8, 16}, {16, 8}}) {
    for (int64_t fragpipe : {0, 1}) {
      CheckNoSpills("gemm.gpu.tiled", shapes,
                    {{"bm", 128},
                     {"bn", 128},
                     {"tm", tm},
                     {"tn", tn},
                     {"bk", 8},
                     {"stages", 2},
                     {"vec", 4},
                     {"splitk", 1},
                     {"gridk", 1},
                     {"fragpipe", fragpipe},
                     {"async", 0}});
    }
  }
}

TEST(GemmGpuTiledPtx, AsynchronousCopiesAssembleToCpAsyncWithoutSpills) {
  CheckNoSpills("gemm.gpu.tiled", {"gemm:M=4096,N=4096,K=4096", "gemm:M=1000,N=1000,K=1000"},
                {{"bm", 128},
                 {"bn", 64},
                 {"tm", 8},
                 {"tn", 8},
                 {"bk", 8},
                 {"stages", 3},
                 {"vec", 4},
                 {"splitk", 1},
                 {"gridk", 1},
                 {"fragpipe", 1},
                 {"async", 1}});
  // B by copies, A through registers.
  CheckNoSpills("gemm.gpu.tiled", {"gemm:M=333,N=4096,K=777"},
                {{"bm", 128},
                 {"bn", 64},
                 {"tm", 8},
                 {"tn", 8},
                 {"bk", 8},
                 {"stages", 3},
                 {"vec", 4},
                 {"splitk", 1},
                 {"gridk", 2},
                 {"fragpipe", 1},
                 {"async", 2}});
  if (!std::filesystem::exists(kPtxas)) {
    return;
  }
  // The PTX that ptxas read: 16-byte copies of B, 4-byte ones of the transposed A tile, one
  // group per step, waiting until one is in flight.
  std::stringstream ptx;
  ptx << std::ifstream(PtxDir() + "/tune_gemm_M1000_N1000_K1000.ptx").rdbuf();
  EXPECT_THAT(ptx.str(), HasSubstr("cp.async.cg.shared.global"));
  EXPECT_THAT(ptx.str(), HasSubstr("cp.async.ca.shared.global"));
  EXPECT_THAT(ptx.str(), HasSubstr("cp.async.commit_group"));
  EXPECT_THAT(ptx.str(), HasSubstr("cp.async.wait_group 1"));
}

TEST(Conv2dGpuImplicitGemmPtx, DefaultsAssembleWithoutSpills) {
  CheckNoSpills("conv2d.gpu.implicit_gemm", {std::begin(kConvs), std::end(kConvs)});
}

TEST(Conv2dGpuDirectPtx, DefaultsAssembleWithoutSpills) {
  CheckNoSpills("conv2d.gpu.direct", {std::begin(kConvs), std::end(kConvs)});
}

}  // namespace
}  // namespace tune