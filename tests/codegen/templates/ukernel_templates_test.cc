// gemm.cpu.ukernel and conv2d.cpu.ukernel with the worked example's micro-kernel
// (examples/ukernel): when they apply, and random configs and every knob value computing the
// reference on odd shapes, every epilogue, and in parallel.
#include "codegen/templates/ukernel_templates.h"

#include <dlfcn.h>

#include <random>

#include "codegen/templates/catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/kernel_check.h"

namespace tune {
namespace {

using testing::CheckKernels;
using ::testing::IsEmpty;
using testing::KernelCase;
using testing::RandomCases;

class UkernelTemplates : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    absl::StatusOr<std::vector<ExternKernel>> kernels =
        LoadExternKernels({TUNE_EXAMPLE_UKERNEL_MANIFEST});
    ASSERT_TRUE(kernels.ok()) << kernels.status();
    catalog_ = new Catalog(Catalog().WithExternKernels(*std::move(kernels)));
    // As a worker's --preload: the kernels call it without linking it.
    ASSERT_NE(dlopen(TUNE_EXAMPLE_UKERNEL_LIBRARY, RTLD_NOW | RTLD_GLOBAL), nullptr) << dlerror();
  }
  static void TearDownTestSuite() { delete catalog_; }

  static std::vector<std::string_view> Names(const std::string& workload, const Target& target) {
    std::vector<std::string_view> names;
    for (const KernelTemplate* t : catalog_->TemplatesFor(*Workload::Parse(workload), target)) {
      names.push_back(t->name);
    }
    return names;
  }
  static const KernelTemplate& Gemm() { return *catalog_->FindTemplate("gemm.cpu.ukernel"); }
  static const KernelTemplate& Conv() { return *catalog_->FindTemplate("conv2d.cpu.ukernel"); }

  static inline Catalog* catalog_ = nullptr;
  Target target_ = *Target::Parse("llvm -mcpu=native -threads=1 -libs=example_ukernel");
};

TEST_F(UkernelTemplates, ApplyOnlyToATargetNamingTheMicroKernel) {
  EXPECT_THAT(Names("gemm:M=8,N=8,K=8", *Target::Parse("llvm -mcpu=native")),
              ::testing::ElementsAre("gemm.cpu.blocked"));
  EXPECT_THAT(Names("gemm:M=8,N=8,K=8", target_),
              ::testing::ElementsAre("gemm.cpu.blocked", "gemm.cpu.ukernel"));
  // An SSE-only CPU lacks the manifest's ISA (avx2).
  EXPECT_THAT(Names("gemm:M=8,N=8,K=8", *Target::Parse("llvm -mcpu=x86-64 -libs=example_ukernel")),
              ::testing::ElementsAre("gemm.cpu.blocked"));
  std::optional<TemplateLibrary> lib = catalog_->LibraryOf(Conv(), target_);
  ASSERT_TRUE(lib.has_value());
  EXPECT_EQ(lib->name, "example_ukernel");
  EXPECT_EQ(lib->file, "libtune_example_ukernel.so");
}

TEST_F(UkernelTemplates, BlockKnobsAreMultiplesOfTheMicroKernelsBlock) {
  ConfigSpace space = Gemm().space(*Workload::Parse("gemm:M=100,N=300,K=70"), target_);
  for (int64_t mc : space.FindKnob("mc")->values) {
    EXPECT_EQ(mc % 8, 0) << mc;
  }
  for (int64_t nc : space.FindKnob("nc")->values) {
    EXPECT_EQ(nc % 32, 0) << nc;
  }
}

TEST_F(UkernelTemplates, RandomGemmConfigsComputeTheReferenceOnOddShapes) {
  std::vector<KernelCase> cases = RandomCases(
      Gemm(), target_,
      {"gemm:M=1,N=1,K=1", "gemm:M=7,N=13,K=5", "gemm:M=67,N=31,K=129", "gemm:M=100,N=300,K=70"},
      12, 5);
  EXPECT_THAT(CheckKernels(target_, Gemm(), cases, nullptr, *catalog_), IsEmpty());
}

TEST_F(UkernelTemplates, EveryKnobValueComputesTheReference) {
  Workload w = *Workload::Parse("gemm:M=150,N=700,K=600,epilogue=bias_relu");
  std::mt19937_64 rng(6);
  std::vector<std::string> unreachable;
  std::vector<Config> configs =
      testing::ConfigsCoveringEveryKnobValue(Gemm(), w, target_, rng, &unreachable);
  EXPECT_THAT(unreachable, IsEmpty());
  std::vector<KernelCase> cases;
  for (const Config& c : configs) {
    cases.push_back({w, c});
  }
  EXPECT_THAT(CheckKernels(target_, Gemm(), cases, nullptr, *catalog_), IsEmpty());
}

TEST_F(UkernelTemplates, RandomConvConfigsComputeTheReference) {
  std::vector<KernelCase> cases =
      RandomCases(Conv(), target_,
                  {"conv2d:N=2,C=3,H=17,W=19,K=5,R=3,S=3,stride=2,pad=1",
                   "conv2d:N=1,C=8,H=20,W=20,K=40,R=3,S=3,pad=2,dilation=2",
                   "conv2d:N=1,C=16,H=9,W=9,K=8,R=1,S=1"},
                  6, 7);
  EXPECT_THAT(CheckKernels(target_, Conv(), cases, nullptr, *catalog_), IsEmpty());
}

TEST_F(UkernelTemplates, ParallelKernelsComputeTheReference) {
  Target two = *Target::Parse("llvm -mcpu=native -threads=2 -libs=example_ukernel");
  std::vector<KernelCase> gemm =
      RandomCases(Gemm(), two, {"gemm:M=67,N=90,K=129", "gemm:M=200,N=50,K=9"}, 4, 8);
  EXPECT_THAT(CheckKernels(two, Gemm(), gemm, nullptr, *catalog_), IsEmpty());
  std::vector<KernelCase> conv =
      RandomCases(Conv(), two, {"conv2d:N=2,C=4,H=10,W=10,K=20,R=3,S=3,stride=1,pad=1"}, 4, 9);
  EXPECT_THAT(CheckKernels(two, Conv(), conv, nullptr, *catalog_), IsEmpty());
}

}  // namespace
}  // namespace tune
