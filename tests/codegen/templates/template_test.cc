#include "codegen/templates/template.h"

#include <algorithm>

#include "codegen/plugins/plugin_reply.h"
#include "codegen/templates/catalog.h"
#include "codegen/templates/cpu_vector_info.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Target ParseTarget(const char* text) { return *Target::Parse(text); }
Workload ParseWorkload(const char* text) { return *Workload::Parse(text); }

std::vector<std::string_view> Names(const std::vector<const KernelTemplate*>& templates) {
  std::vector<std::string_view> out;
  for (const KernelTemplate* t : templates) {
    out.push_back(t->name);
  }
  return out;
}

TEST(TemplateTable, CpuTargetsGetOneTemplatePerOp) {
  Target cpu = ParseTarget("llvm -mcpu=znver4 -threads=1");
  EXPECT_THAT(Names(Catalog::BuiltIn().TemplatesFor(ParseWorkload("gemm:M=8,N=8,K=8"), cpu)),
              ElementsAre("gemm.cpu.blocked"));
  EXPECT_THAT(Names(Catalog::BuiltIn().TemplatesFor(
                  ParseWorkload("conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3,stride=1,pad=1"), cpu)),
              ElementsAre("conv2d.cpu.direct"));
}

TEST(TemplateTable, GpuTargetsGetOnlyTemplatesOfTheirKind) {
  for (const char* target : {"cuda -arch=sm_90", "rocm -mcpu=gfx90a"}) {
    const Target t = ParseTarget(target);
    std::vector<const KernelTemplate*> found =
        Catalog::BuiltIn().TemplatesFor(ParseWorkload("gemm:M=8,N=8,K=8"), t);
    ASSERT_FALSE(found.empty()) << target;
    EXPECT_EQ(found.front()->name, "gemm.gpu.tiled") << target;
    for (const KernelTemplate* tpl : found) {
      EXPECT_TRUE(TemplateBuildsFor(*tpl, t.kind)) << target << ": " << tpl->name;
    }
  }
}

TEST(TemplateTable, FindTemplateKnowsEveryTableEntryAndNothingElse) {
  for (const KernelTemplate* t : Catalog::BuiltIn().templates()) {
    for (TargetKind kind : {TargetKind::kLlvm, TargetKind::kCuda, TargetKind::kRocm}) {
      if (TemplateBuildsFor(*t, kind)) {
        EXPECT_EQ(Catalog::BuiltIn().FindTemplate(t->name, kind), t)
            << t->name << " for " << TargetKindName(kind);
      }
    }
    ASSERT_NE(Catalog::BuiltIn().FindTemplate(t->name), nullptr);
    EXPECT_EQ(Catalog::BuiltIn().FindTemplate(t->name)->name, t->name);
    EXPECT_GE(t->version, 1);
  }
  EXPECT_EQ(Catalog::BuiltIn().FindTemplate("gemm.cpu.nonexistent"), nullptr);
}

// A record names a template by name and version; its target's kind picks the entry. The GPU
// templates of generated code are one entry for cuda and rocm, so a record of either kind, old or
// new, resolves to the same template and version; the library templates stay one per vendor.
TEST(TemplateTable, GeneratedGpuTemplatesAreOneEntryForCudaAndRocm) {
  for (std::string_view name :
       {"gemm.gpu.tiled", "conv2d.gpu.implicit_gemm", "conv2d.gpu.direct"}) {
    const KernelTemplate* cuda = Catalog::BuiltIn().FindTemplate(name, TargetKind::kCuda);
    ASSERT_NE(cuda, nullptr) << name;
    EXPECT_EQ(Catalog::BuiltIn().FindTemplate(name, TargetKind::kRocm), cuda) << name;
    EXPECT_EQ(cuda->targets, TemplateTargets::kGpu) << name;
    EXPECT_FALSE(TemplateBuildsFor(*cuda, TargetKind::kLlvm)) << name;
    EXPECT_EQ(TemplateTargetsName(*cuda), "cuda and rocm");
  }
  const KernelTemplate* cublas =
      Catalog::BuiltIn().FindTemplate("gemm.cuda.cublas", TargetKind::kRocm);
  ASSERT_NE(cublas, nullptr);
  EXPECT_FALSE(TemplateBuildsFor(*cublas, TargetKind::kRocm));
  std::vector<std::string_view> names;
  for (const KernelTemplate* t : Catalog::BuiltIn().templates()) {
    names.push_back(t->name);
  }
  EXPECT_EQ(std::count(names.begin(), names.end(), "gemm.gpu.tiled"), 1);
}

TEST(DefaultFunctionName, NamesEveryShapeFieldTheLayoutAndTheEpilogue) {
  EXPECT_EQ(DefaultFunctionName(ParseWorkload("gemm:M=512,N=512,K=512")),
            "tune_gemm_M512_N512_K512");
  EXPECT_EQ(DefaultFunctionName(ParseWorkload("gemm:M=2,N=3,K=4,epilogue=bias_relu")),
            "tune_gemm_M2_N3_K4_bias_relu");
  EXPECT_EQ(
      DefaultFunctionName(ParseWorkload("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1")),
      "tune_conv2d_N1_C64_H56_W56_K64_R3_S3_s1_p1");
  EXPECT_EQ(DefaultFunctionName(ParseWorkload(
                "conv2d:N=1,C=3,H=9,W=9,K=4,R=3,S=3,stride=2,pad=2,dilation=2,epilogue=relu")),
            "tune_conv2d_N1_C3_H9_W9_K4_R3_S3_s2_p2_d2_relu");
  EXPECT_EQ(DefaultFunctionName(ParseWorkload(
                "conv2d:N=1,C=32,H=8,W=8,K=32,R=1,S=1,stride=1,pad=0,layout=NCHW16c")),
            "tune_conv2d_N1_C32_H8_W8_K32_R1_S1_s1_p0_nchw16c");
}

TEST(DefaultFunctionName, TypesAndLayoutsAreOtherFunctionsAndF32NamesAreUnchanged) {
  EXPECT_EQ(DefaultFunctionName(ParseWorkload("gemm:M=2,N=3,K=4,layout=NT,dtype=bf16")),
            "tune_gemm_M2_N3_K4_nt_bf16");
  EXPECT_EQ(
      DefaultFunctionName(ParseWorkload("gemm:M=2,N=3,K=4,dtype=fp8e4m3,out=f32,epilogue=bias")),
      "tune_gemm_M2_N3_K4_fp8e4m3_outf32_bias");
  EXPECT_EQ(DefaultFunctionName(ParseWorkload(
                "conv2d:N=1,C=8,H=8,W=8,K=8,R=1,S=1,stride=1,pad=0,layout=NHWC,dtype=i8")),
            "tune_conv2d_N1_C8_H8_W8_K8_R1_S1_s1_p0_nhwc_i8");
  EXPECT_EQ(DefaultFunctionName(ParseWorkload("gemm:M=2,N=3,K=4,dtype=f32,out=f32,layout=NN")),
            "tune_gemm_M2_N3_K4");
}

TEST(TemplateForm, EveryF32OnlyTemplateRefusesATypedWorkloadNamingTheDtypeItBuilds) {
  for (const KernelTemplate* t : Catalog::BuiltIn().templates()) {
    // Integer GEMMs and convolutions are the tensor-core and matrix-engine templates' (NVIDIA's,
    // AMD's and the CPU's dot products) and the typed library candidates' alone.
    const bool integer = t->name == "gemm.cpu.dot" || t->name == "gemm.cpu.amx" ||
                         t->name == "gemm.cpu.dnnl" || t->name == "conv2d.cpu.amx" ||
                         t->name == "conv2d.cpu.dot" || t->name == "conv2d.cpu.dnnl" ||
                         t->name == "gemm.cuda.wgmma" || t->name == "gemm.cuda.mma" ||
                         t->name == "conv2d.cuda.wgmma" || t->name == "conv2d.cuda.mma" ||
                         t->name == "gemm.rocm.mfma" || t->name == "gemm.rocm.wmma" ||
                         t->name == "conv2d.rocm.mfma" || t->name == "conv2d.rocm.wmma" ||
                         t->name == "gemm.cuda.cublaslt" || t->name == "conv2d.cuda.cudnn_graph" ||
                         t->name == "gemm.rocm.hipblaslt" || t->name == "conv2d.rocm.miopen_nhwc";
    EXPECT_EQ(t->dtypes.Has(Dtype::kI8), integer) << t->name;
    if (!(t->dtypes == DtypeSet{Dtype::kF32})) {
      continue;  // gemm.gpu.tiled and gemm.cuda.cublaslt (gpu_templates_typed_test.cc)
    }
    const Workload typed =
        ParseWorkload(t->op == OpKind::kGemm ? "gemm:M=64,N=64,K=64,dtype=bf16"
                                             : "conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,"
                                               "pad=1,dtype=bf16");
    absl::Status s = CheckTemplateForm(*t, typed);
    EXPECT_FALSE(s.ok()) << t->name;
    EXPECT_NE(s.message().find("builds dtype=f32, not"), std::string_view::npos) << s.message();
  }
  const KernelTemplate* blocked = Catalog::BuiltIn().FindTemplate("gemm.cpu.blocked");
  ASSERT_NE(blocked, nullptr);
  absl::Status nt = CheckTemplateForm(*blocked, ParseWorkload("gemm:M=64,N=64,K=64,layout=NT"));
  EXPECT_EQ(nt.message(),
            "template gemm.cpu.blocked builds gemm kernels in layout=NN, not "
            "'gemm:M=64,N=64,K=64,layout=NT'");
  const KernelTemplate* direct = Catalog::BuiltIn().FindTemplate("conv2d.cpu.direct");
  ASSERT_NE(direct, nullptr);
  absl::Status nhwc = CheckTemplateForm(
      *direct, ParseWorkload("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1,layout=NHWC"));
  EXPECT_NE(nhwc.message().find("builds conv2d kernels in layout=NCHW, not"),
            std::string_view::npos)
      << nhwc.message();
}

TEST(CpuVectorInfo, KnownCpuNamesGiveTheirVectorUnit) {
  EXPECT_EQ(CpuVectorInfoForName("znver4").lanes, 16);
  EXPECT_EQ(CpuVectorInfoForName("znver4").registers, 32);
  EXPECT_EQ(CpuVectorInfoForName("sapphirerapids").lanes, 16);
  EXPECT_EQ(CpuVectorInfoForName("haswell").lanes, 8);
  EXPECT_TRUE(CpuVectorInfoForName("haswell").fma);
  EXPECT_EQ(CpuVectorInfoForName("x86-64-v3").registers, 16);
  EXPECT_EQ(CpuVectorInfoForName("x86-64").lanes, 4);
  EXPECT_EQ(CpuVectorInfoForName("some-future-cpu").lanes, 4);
}

TEST(CpuVectorInfo, NativeFollowsTheHostFeatures) {
  CpuVectorInfo native = CpuVectorInfoFor(ParseTarget("llvm -mcpu=native"));
  EXPECT_TRUE(native.lanes == 4 || native.lanes == 8 || native.lanes == 16);
  EXPECT_EQ(native.registers, native.lanes == 16 ? 32 : 16);
}

// A codegen plugin's space reply becomes a ConfigSpace, whose AddKnob aborts on a repeated or
// empty name, no values or a repeated value: such a reply used to abort the daemon.
TEST(PluginSpaceReply, ASpaceTuneCannotSearchIsRefusedInsteadOfAborting) {
  auto knob = [](v1::SpaceReply& reply, const char* name, std::vector<int64_t> values) {
    v1::PluginKnob* k = reply.add_knobs();
    k->set_name(name);
    for (int64_t v : values) {
      k->add_values(v);
    }
  };
  struct Case {
    std::function<void(v1::SpaceReply&)> make;
    const char* names;
  };
  const Case cases[] = {
      {[&](v1::SpaceReply& r) {
         knob(r, "mc", {32});
         knob(r, "mc", {64});
       },
       "'mc' is listed twice"},
      {[&](v1::SpaceReply& r) { knob(r, "mc", {}); }, "'mc' has no values"},
      {[&](v1::SpaceReply& r) { knob(r, "mc", {32, 64, 32}); }, "'mc' lists a value twice"},
      {[&](v1::SpaceReply& r) { knob(r, "", {1}); }, "a knob has no name"},
      {[&](v1::SpaceReply& r) {
         knob(r, "mc", {32, 64});
         (*r.mutable_default_config())["mc"] = 48;
       },
       "the default of knob 'mc', 48, is not one of its values"},
  };
  for (const Case& c : cases) {
    v1::SpaceReply reply;
    reply.set_supported(true);
    c.make(reply);
    absl::Status status = CheckSpaceReply(reply);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << c.names << ": " << status;
    EXPECT_THAT(status.message(), HasSubstr(c.names));
  }

  v1::SpaceReply good;
  good.set_supported(true);
  knob(good, "mc", {32, 64});
  knob(good, "nc", {128});
  (*good.mutable_default_config())["mc"] = 64;
  ASSERT_TRUE(CheckSpaceReply(good).ok()) << CheckSpaceReply(good);
  EXPECT_TRUE(SpaceOfReply(good).Validate(DefaultOfReply(good)).ok());
  EXPECT_EQ(ConfigToString(DefaultOfReply(good)), R"({"mc":64,"nc":128})");
}

}  // namespace
}  // namespace tune
