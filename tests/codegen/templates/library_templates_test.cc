// The library templates (gemm/conv2d on OpenBLAS and oneDNN): which targets they apply to, their
// spaces, and every knob value computing the reference through the real runtime shims
// (build/lib/libtune_*.so, linked into the kernel library by the compiler).
#include <random>

#include "codegen/compiler.h"
#include "codegen/templates/catalog.h"
#include "codegen/templates/conv2d_cpu_library.h"
#include "codegen/templates/gemm_cpu_library.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/kernel_check.h"
#include "tests/runtime/dnnl_host.h"

namespace tune {
namespace {

using testing::CheckKernels;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::KernelCase;
using ::testing::Not;

Target ParseTarget(const char* text) { return *Target::Parse(text); }
Workload ParseWorkload(const std::string& text) { return *Workload::Parse(text); }

std::vector<std::string_view> NamesFor(const std::string& workload, const char* target) {
  std::vector<std::string_view> names;
  for (const KernelTemplate* t :
       Catalog::BuiltIn().TemplatesFor(ParseWorkload(workload), ParseTarget(target))) {
    names.push_back(t->name);
  }
  return names;
}

TEST(LibraryTemplates, ApplyOnlyToTargetsThatNameTheirLibrary) {
  EXPECT_THAT(NamesFor("gemm:M=8,N=8,K=8", "llvm -mcpu=native"),
              ::testing::ElementsAre("gemm.cpu.blocked"));
  EXPECT_THAT(NamesFor("gemm:M=8,N=8,K=8", "llvm -mcpu=native -libs=dnnl"),
              ::testing::ElementsAre("gemm.cpu.blocked", "gemm.cpu.dnnl"));
  EXPECT_THAT(
      NamesFor("conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3", "llvm -mcpu=native -libs=openblas,dnnl"),
      ::testing::ElementsAre("conv2d.cpu.direct", "conv2d.cpu.winograd",
                             "conv2d.cpu.im2col_openblas", "conv2d.cpu.dnnl"));
}

TEST(LibraryTemplates, BuildingForATargetWithoutTheLibraryNamesTheOptionToAdd) {
  Workload w = ParseWorkload("gemm:M=8,N=8,K=8");
  Target plain = ParseTarget("llvm -mcpu=native");
  absl::StatusOr<ir::LoweredFunc> built =
      kGemmCpuDnnl.build(w, plain, kGemmCpuDnnl.default_config(w, plain), "k");
  ASSERT_TRUE(absl::IsInvalidArgument(built.status())) << built.status();
  EXPECT_THAT(built.status().message(), HasSubstr("-libs=dnnl"));
}

TEST(LibraryTemplates, WinogradIsAKnobValueOnlyWhereItApplies) {
  Target target = ParseTarget("llvm -mcpu=native -libs=dnnl");
  auto algorithms = [&](const std::string& w) {
    return kConv2dCpuDnnl.space(ParseWorkload(w), target).FindKnob("algorithm")->values;
  };
  EXPECT_THAT(algorithms("conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3,pad=1"), Contains(1));
  EXPECT_THAT(algorithms("conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3,stride=2,pad=1"), Not(Contains(1)));
  EXPECT_THAT(algorithms("conv2d:N=1,C=8,H=8,W=8,K=8,R=1,S=1"), Not(Contains(1)));
}

TEST(LibraryTemplates, TheEpilogueKnobExistsOnlyForWorkloadsWithAnEpilogue) {
  Target target = ParseTarget("llvm -mcpu=native -libs=openblas");
  EXPECT_EQ(kGemmCpuOpenblas.space(ParseWorkload("gemm:M=8,N=8,K=8"), target).FindKnob("epilogue"),
            nullptr);
  EXPECT_NE(kGemmCpuOpenblas.space(ParseWorkload("gemm:M=8,N=8,K=8,epilogue=relu"), target)
                .FindKnob("epilogue"),
            nullptr);
}

// Every config of the (small) space, on every epilogue, of each shape.
std::vector<KernelCase> EveryConfig(const KernelTemplate& tpl, const Target& target,
                                    const std::vector<std::string>& shapes) {
  std::vector<KernelCase> cases;
  for (const std::string& shape : shapes) {
    const Workload parsed = ParseWorkload(shape);
    // A requantising workload keeps its epilogue; the others take each in turn.
    const std::vector<Epilogue> epilogues =
        parsed.requantizes() ? std::vector<Epilogue>{Epilogue::kRequant}
                             : std::vector<Epilogue>{Epilogue::kNone, Epilogue::kBias,
                                                     Epilogue::kRelu, Epilogue::kBiasRelu};
    for (Epilogue e : epilogues) {
      Workload w = parsed.requantizes() ? parsed : testing::WithEpilogue(parsed, e);
      ConfigSpace space = tpl.space(w, target);
      for (uint64_t i = 0; i < space.RawSize(); ++i) {
        Config c = space.ConfigAt(i);
        if (space.IsValid(c)) {
          cases.push_back({w, c});
        }
      }
    }
  }
  return cases;
}

TEST(LibraryTemplates, EveryOpenblasGemmConfigComputesTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1 -libs=openblas");
  EXPECT_THAT(CheckKernels(target, kGemmCpuOpenblas,
                           EveryConfig(kGemmCpuOpenblas, target,
                                       {"gemm:M=1,N=1,K=1", "gemm:M=67,N=31,K=129"})),
              IsEmpty());
}

TEST(LibraryTemplates, EveryDnnlGemmConfigComputesTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1 -libs=dnnl");
  EXPECT_THAT(
      CheckKernels(target, kGemmCpuDnnl,
                   EveryConfig(kGemmCpuDnnl, target, {"gemm:M=1,N=7,K=3", "gemm:M=67,N=31,K=129"})),
      IsEmpty());
}

// Whether `failure` (CheckKernels') is a kernel's refusal, as unsupported, of a type oneDNN does
// not compute on this host (tests/runtime/dnnl_host.h).
bool RefusedTypeOfThisHost(const std::string& failure) {
  const Workload w = ParseWorkload(failure.substr(0, failure.find(' ')));
  return !testing::DnnlRuns(w.dtype()) && failure.find("returned 2") != std::string::npos;
}

// bf16, i8 and u8i8 through oneDNN's typed matmul, B as [K][N] or [N][K], with every output:
// the candidates of the types a user would otherwise call oneDNN for (-libs=dnnl). Where
// oneDNN does not compute a type on this host (bf16 without AVX-512, exact 8-bit sums without
// VNNI), every kernel of it is refused as unsupported and nothing else fails.
TEST(LibraryTemplates, EveryTypedDnnlGemmConfigComputesTheReferenceOrRefusesTypesTheCpuLacks) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1 -libs=dnnl");
  for (const std::string& f : CheckKernels(
           target, kGemmCpuDnnl,
           EveryConfig(
               kGemmCpuDnnl, target,
               {"gemm:M=5,N=33,K=70,dtype=bf16", "gemm:M=17,N=40,K=64,layout=NT,dtype=bf16,out=f32",
                "gemm:M=9,N=24,K=96,layout=NT,dtype=i8", "gemm:M=6,N=20,K=128,dtype=u8i8,out=f32",
                "gemm:M=12,N=40,K=96,layout=NT,dtype=u8i8,epilogue=requant",
                "gemm:M=7,N=33,K=64,dtype=i8,epilogue=requant", "gemm:M=8,N=7,K=3,layout=NT"}))) {
    EXPECT_TRUE(RefusedTypeOfThisHost(f)) << f;
  }
}

TEST(LibraryTemplates, EveryIm2colOpenblasConfigComputesTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1 -libs=openblas");
  EXPECT_THAT(CheckKernels(target, kConv2dCpuIm2colOpenblas,
                           EveryConfig(kConv2dCpuIm2colOpenblas, target,
                                       {"conv2d:N=2,C=3,H=17,W=19,K=5,R=3,S=3,stride=2,pad=1",
                                        "conv2d:N=1,C=8,H=20,W=20,K=6,R=3,S=3,pad=1,dilation=2",
                                        "conv2d:N=2,C=16,H=9,W=9,K=8,R=1,S=1"})),
              IsEmpty());
}

TEST(LibraryTemplates, EveryDnnlConvConfigComputesTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1 -libs=dnnl");
  std::vector<KernelCase> cases =
      EveryConfig(kConv2dCpuDnnl, target,
                  {"conv2d:N=2,C=3,H=17,W=19,K=5,R=3,S=3,stride=2,pad=1",
                   "conv2d:N=1,C=16,H=12,W=12,K=16,R=3,S=3,pad=1",
                   "conv2d:N=1,C=8,H=20,W=20,K=6,R=3,S=3,pad=2,dilation=2",
                   "conv2d:N=1,C=8,H=8,W=8,K=8,R=2,S=2,stride=2"});
  // oneDNN's Winograd needs AVX-512 (and says "unimplemented" elsewhere): its cases must compute
  // the reference where the library runs them, and fail cleanly, with the kernel's status,
  // where it does not.
  std::vector<std::string> failures = CheckKernels(target, kConv2dCpuDnnl, cases);
  for (const std::string& f : failures) {
    EXPECT_THAT(f, HasSubstr(R"("algorithm":1)")) << f;
    EXPECT_THAT(f, HasSubstr("returned 2")) << "TUNE_RUNTIME_UNSUPPORTED: " << f;
  }
}

// bf16, i8 and u8i8 convolutions, and f32 ones in NHWC and NCHW16c, through oneDNN's typed
// convolution: every output and epilogue (after the scaled product for f32 outputs of the integer
// dtypes, in the blocked layout too). oneDNN computes some combinations on tensors as given (its
// layout=0) only with its reference loops: those are refused as unsupported, and so is its f32
// Winograd where it lacks it (as above), and every type it does not compute on this host (as for
// the GEMMs); nothing else fails.
TEST(LibraryTemplates, EveryTypedDnnlConvConfigComputesTheReferenceOrIsRefusedAsReferenceOnly) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1 -libs=dnnl");
  std::vector<KernelCase> cases = EveryConfig(
      kConv2dCpuDnnl, target,
      {"conv2d:N=1,C=16,H=9,W=9,K=32,R=3,S=3,pad=1,layout=NHWC,dtype=bf16",
       "conv2d:N=1,C=16,H=8,W=8,K=32,R=3,S=3,stride=2,pad=1,layout=NCHW16c,dtype=bf16,"
       "epilogue=bias_relu",
       "conv2d:N=1,C=32,H=7,W=7,K=16,R=1,S=1,layout=NCHW16c,dtype=u8i8,out=f32,epilogue=bias_relu",
       "conv2d:N=2,C=8,H=6,W=6,K=24,R=3,S=3,pad=1,layout=NHWC,dtype=i8,epilogue=requant",
       "conv2d:N=1,C=12,H=7,W=7,K=20,R=3,S=3,pad=1,dtype=u8i8",
       "conv2d:N=1,C=5,H=9,W=9,K=7,R=3,S=3,pad=1,layout=NHWC,epilogue=bias"});
  for (const std::string& f : CheckKernels(target, kConv2dCpuDnnl, cases)) {
    if (RefusedTypeOfThisHost(f)) {
      continue;
    }
    EXPECT_THAT(f, ::testing::AnyOf(HasSubstr(R"("layout":0)"), HasSubstr(R"("algorithm":1)")))
        << f;
    EXPECT_THAT(f, HasSubstr("returned 2")) << "TUNE_RUNTIME_UNSUPPORTED: " << f;
  }
}

TEST(LibraryTemplates, TwoThreadKernelsComputeTheReference) {
  Target target = ParseTarget("llvm -mcpu=native -threads=2 -libs=openblas,dnnl");
  std::vector<KernelCase> gemm = {
      {ParseWorkload("gemm:M=64,N=48,K=40,epilogue=bias_relu"),
       kGemmCpuOpenblas.default_config(ParseWorkload("gemm:M=64,N=48,K=40,epilogue=bias_relu"),
                                       target)}};
  EXPECT_THAT(CheckKernels(target, kGemmCpuOpenblas, gemm), IsEmpty());
  Workload conv = ParseWorkload("conv2d:N=1,C=8,H=14,W=14,K=8,R=3,S=3,pad=1,epilogue=bias");
  EXPECT_THAT(CheckKernels(target, kConv2dCpuIm2colOpenblas,
                           {{conv, kConv2dCpuIm2colOpenblas.default_config(conv, target)}}),
              IsEmpty());
  EXPECT_THAT(
      CheckKernels(target, kConv2dCpuDnnl, {{conv, kConv2dCpuDnnl.default_config(conv, target)}}),
      IsEmpty());
}

TEST(LibraryTemplates, AKernelLibraryLinksTheShimsItCallsAndItsHeaderSaysSo) {
  Target target = ParseTarget("llvm -mcpu=native -threads=1 -libs=openblas,dnnl");
  TempDir dir = TempDir::Create().value();
  Compiler compiler(Catalog::BuiltIn(), target);
  Workload gemm = ParseWorkload("gemm:M=8,N=8,K=8");
  Workload conv = ParseWorkload("conv2d:N=1,C=4,H=8,W=8,K=4,R=3,S=3,pad=1");
  absl::StatusOr<LibraryResult> built =
      compiler.BuildLibrary({{gemm, "g", std::nullopt, "gemm.cpu.openblas"},
                             {conv, "c", std::nullopt, "conv2d.cpu.dnnl"}},
                            dir.File("libk.so"), dir.File("k.h"));
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_THAT(built->needed_libs, Contains("libtune_openblas.so"));
  EXPECT_THAT(built->needed_libs, Contains("libtune_dnnl.so"));
  EXPECT_THAT(ReadFile(dir.File("k.h")).value_or(""), HasSubstr("libtune_dnnl.so"));
}

}  // namespace
}  // namespace tune
