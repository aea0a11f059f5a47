// gemm.rocm.hipblaslt without an AMD GPU: which targets and workloads it takes, what it refuses
// and why, its knob, the call of tune_hipblaslt_gemm its kernel makes (the TUNE_GPU_TYPE_* codes
// and operands), and the host shared object it builds. The artifacts are built and inspected,
// never run.
#include <string>
#include <vector>

#include "codegen/compiler.h"
#include "codegen/ir/printer.h"
#include "codegen/templates/catalog.h"
#include "codegen/templates/conv2d_gpu_library.h"
#include "codegen/templates/gemm_gpu_library.h"
#include "common/extern_kernels.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Target ParseTarget(const char* text) { return *Target::Parse(text); }
Workload ParseWorkload(const std::string& text) { return *Workload::Parse(text); }

constexpr char kGfx942[] = "rocm -mcpu=gfx942 -libs=hipblaslt";

// The library templates the catalog offers for the workload on the target.
std::vector<std::string_view> LibraryTemplatesFor(const std::string& workload, const char* target) {
  std::vector<std::string_view> names;
  for (const KernelTemplate* t :
       Catalog::BuiltIn().TemplatesFor(ParseWorkload(workload), ParseTarget(target))) {
    if (!t->library.empty()) {
      names.push_back(t->name);
    }
  }
  return names;
}

TEST(HipblasLtTemplate, IsALibraryOfRocmTargets) {
  EXPECT_TRUE(Catalog::BuiltIn().ParseTarget("rocm -mcpu=gfx90a -libs=rocblas,hipblaslt").ok());
  absl::StatusOr<Target> cuda = Catalog::BuiltIn().ParseTarget("cuda -arch=sm_90 -libs=hipblaslt");
  ASSERT_TRUE(absl::IsInvalidArgument(cuda.status()));
  EXPECT_THAT(cuda.status().message(), HasSubstr("hipblaslt is a library of rocm targets"));
  EXPECT_EQ(Catalog::BuiltIn().FindTemplate("gemm.rocm.hipblaslt", TargetKind::kRocm),
            &kGemmRocmHipblasLt);
  EXPECT_FALSE(TemplateBuildsFor(kGemmRocmHipblasLt, TargetKind::kCuda));
}

TEST(HipblasLtTemplate, TakesTheTypedGemmsOfTargetsThatNameIt) {
  for (const char* w : {
           "gemm:M=64,N=4096,K=4096,layout=NT,dtype=bf16",
           "gemm:M=64,N=48,K=32,dtype=f16,out=f32,epilogue=bias_relu",
           "gemm:M=333,N=4096,K=777,layout=NT,dtype=fp8e4m3fnuz",
           "gemm:M=64,N=64,K=64,dtype=fp8e5m2fnuz,out=f32,epilogue=bias",
           "gemm:M=64,N=64,K=64,layout=NT,dtype=i8",
           "gemm:M=64,N=64,K=64,dtype=i8",
       }) {
    EXPECT_THAT(LibraryTemplatesFor(w, kGfx942), ElementsAre("gemm.rocm.hipblaslt")) << w;
  }
  // Not without -libs=hipblaslt; f32 stays rocBLAS's.
  EXPECT_THAT(
      LibraryTemplatesFor("gemm:M=64,N=64,K=64,dtype=bf16", "rocm -mcpu=gfx942 -libs=rocblas"),
      IsEmpty());
  EXPECT_THAT(
      LibraryTemplatesFor("gemm:M=64,N=64,K=64", "rocm -mcpu=gfx942 -libs=rocblas,hipblaslt"),
      ElementsAre("gemm.rocm.rocblas"));
}

TEST(HipblasLtTemplate, RefusesWhatHipblasLtDoesNotComputeNamingTheAcceptedForm) {
  // A dequantised or fused integer output, u8 activations, tf32: not hipBLASLt's forms here.
  for (const char* w : {
           "gemm:M=64,N=64,K=64,layout=NT,dtype=i8,out=f32",
           "gemm:M=64,N=64,K=64,layout=NT,dtype=i8,epilogue=relu",
           "gemm:M=64,N=64,K=64,layout=NT,dtype=u8i8",
           "gemm:M=64,N=64,K=64,dtype=tf32",
       }) {
    EXPECT_THAT(LibraryTemplatesFor(w, kGfx942), IsEmpty()) << w;
  }
  const Workload dequantised = ParseWorkload("gemm:M=64,N=64,K=64,layout=NT,dtype=i8,out=f32");
  EXPECT_EQ(kGemmRocmHipblasLt.check_shape(dequantised).message(),
            "template gemm.rocm.hipblaslt builds i8 GEMMs with out=i32 and no epilogue "
            "(hipBLASLt's HIPBLAS_COMPUTE_32I sums), not "
            "'gemm:M=64,N=64,K=64,layout=NT,dtype=i8,out=f32'");
  absl::StatusOr<ir::LoweredFunc> built =
      kGemmRocmHipblasLt.build(dequantised, ParseTarget(kGfx942), {{"algo", 0}}, "q");
  ASSERT_TRUE(absl::IsInvalidArgument(built.status())) << built.status();
  EXPECT_THAT(built.status().message(), HasSubstr("builds i8 GEMMs with out=i32"));
  absl::Status tf32 =
      CheckTemplateForm(kGemmRocmHipblasLt, ParseWorkload("gemm:M=64,N=64,K=64,dtype=tf32"));
  EXPECT_THAT(tf32.message(), HasSubstr("builds dtype=f16|bf16|i8|fp8e4m3|fp8e5m2|fp8e4m3fnuz|"
                                        "fp8e5m2fnuz, not"));
  // A target without the library is refused naming the option.
  built = kGemmRocmHipblasLt.build(ParseWorkload("gemm:M=64,N=64,K=64,dtype=f16"),
                                   ParseTarget("rocm -mcpu=gfx942"), {{"algo", 0}}, "q");
  ASSERT_TRUE(absl::IsInvalidArgument(built.status())) << built.status();
  EXPECT_THAT(built.status().message(), HasSubstr("-libs=hipblaslt"));
}

TEST(HipblasLtTemplate, ItsKnobIsTheHeuristicsAlgorithm) {
  const Workload w = ParseWorkload("gemm:M=64,N=64,K=64,dtype=bf16");
  const Target target = ParseTarget(kGfx942);
  const ConfigSpace space = kGemmRocmHipblasLt.space(w, target);
  const Knob* algo = space.FindKnob("algo");
  ASSERT_NE(algo, nullptr);
  EXPECT_THAT(algo->values, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_EQ(kGemmRocmHipblasLt.default_config(w, target).at("algo"), 0);
}

TEST(HipblasLtTemplate, TheKernelPassesTheWorkloadsTypesLayoutEpilogueAndScalesToTheShim) {
  const Target target = ParseTarget(kGfx942);
  const Workload fp8 =
      ParseWorkload("gemm:M=16,N=32,K=64,layout=NT,dtype=fp8e4m3fnuz,epilogue=bias");
  absl::StatusOr<ir::LoweredFunc> func = kGemmRocmHipblasLt.build(fp8, target, {{"algo", 2}}, "q");
  ASSERT_TRUE(func.ok()) << func.status();
  ASSERT_TRUE(func->stream_param.defined());
  EXPECT_THAT(func->external_libs, ElementsAre("libtune_hipblaslt.so"));
  std::string text = ir::ToText(*func);
  EXPECT_THAT(text,
              HasSubstr("func q(A: float8_e4m3fnuz*, B: float8_e4m3fnuz*, bias: bfloat16*, "
                        "C: bfloat16*, scale_A: float32*, scale_B: float32*, stream: stream)"));
  // The TUNE_GPU_TYPE_* codes of runtime/tune_gpu_runtime.h: f32 0, f16 2, bf16 3, i8 6, i32 7,
  // fp8e4m3fnuz 8, fp8e5m2fnuz 9. Here M, N, K; fp8e4m3fnuz in, bf16 out, nt 1, bias (1), algo 2.
  EXPECT_THAT(text, HasSubstr("tune_hipblaslt_gemm("));
  EXPECT_THAT(text,
              HasSubstr("16, 32, 64, int32(8), int32(3), int32(1), int32(1), int32(2), stream)"));

  const Workload e5m2 = ParseWorkload("gemm:M=16,N=32,K=64,dtype=fp8e5m2fnuz,out=f32");
  func = kGemmRocmHipblasLt.build(e5m2, target, {{"algo", 0}}, "q");
  ASSERT_TRUE(func.ok()) << func.status();
  // fp8e5m2fnuz in, f32 out, NN, no epilogue, algo 0.
  EXPECT_THAT(ir::ToText(*func),
              HasSubstr("16, 32, 64, int32(9), int32(0), int32(0), int32(0), int32(0), stream)"));

  const Workload i8 = ParseWorkload("gemm:M=64,N=48,K=32,dtype=i8");
  func = kGemmRocmHipblasLt.build(i8, target, {{"algo", 7}}, "q");
  ASSERT_TRUE(func.ok()) << func.status();
  text = ir::ToText(*func);
  EXPECT_THAT(text, HasSubstr("func q(A: int8*, B: int8*, C: int32*, stream: stream)"));
  // i8 in, i32 out, NN, no epilogue, algo 7 (no bias, no scales: null pointers).
  EXPECT_THAT(text,
              HasSubstr("64, 48, 32, int32(6), int32(7), int32(0), int32(0), int32(7), stream)"));

  const Workload f16 = ParseWorkload("gemm:M=64,N=48,K=32,layout=NT,dtype=f16,epilogue=relu");
  func = kGemmRocmHipblasLt.build(f16, target, {{"algo", 0}}, "q");
  ASSERT_TRUE(func.ok()) << func.status();
  // f16 in and out, NT, ReLU (2), algo 0.
  EXPECT_THAT(ir::ToText(*func),
              HasSubstr("64, 48, 32, int32(2), int32(2), int32(1), int32(2), int32(0), stream)"));
}

TEST(HipblasLtTemplate, BuildsAHostSharedObjectThatLeavesTheShimToTheWorker) {
  const Target target = ParseTarget(kGfx942);
  const Workload w = ParseWorkload("gemm:M=64,N=48,K=32,layout=NT,dtype=bf16,epilogue=bias_relu");
  Compiler compiler(Catalog::BuiltIn(), target);
  absl::StatusOr<Artifact> artifact = compiler.BuildArtifact(
      w, kGemmRocmHipblasLt, kGemmRocmHipblasLt.default_config(w, target), "entry");
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  EXPECT_EQ(artifact->format, CodeFormat::kSharedObject);
  EXPECT_THAT(artifact->external_libs, ElementsAre("libtune_hipblaslt.so"));
  EXPECT_THAT(artifact->llvm_ir, HasSubstr("define i32 @entry("));
  EXPECT_THAT(artifact->llvm_ir, HasSubstr("ptr %stream)"));
  EXPECT_THAT(artifact->llvm_ir, HasSubstr("@tune_hipblaslt_gemm("));
  TempDir dir = TempDir::Create().value();
  const std::string path = dir.File("entry.so");
  ASSERT_TRUE(WriteFileAtomically(path, artifact->code).ok());
  absl::StatusOr<bool> defined = ElfDefinesSymbol(path, "entry");
  ASSERT_TRUE(defined.ok()) << defined.status();
  EXPECT_TRUE(*defined);
  absl::StatusOr<bool> shim_defined = ElfDefinesSymbol(path, "tune_hipblaslt_gemm");
  ASSERT_TRUE(shim_defined.ok()) << shim_defined.status();
  EXPECT_FALSE(*shim_defined);  // left to the preloaded shim
}

// conv2d.rocm.miopen_nhwc: MIOpen's typed NHWC convolution, without an epilogue or scales.
TEST(MiopenNhwcTemplate, TakesNhwcConvolutionsIntoTheirOwnTypeAndI8RawSums) {
  const char* rocm = "rocm -mcpu=gfx942 -libs=miopen";
  const std::string conv = "conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1,layout=NHWC";
  for (const char* typed : {"", ",dtype=f16", ",dtype=bf16", ",dtype=i8"}) {
    EXPECT_THAT(LibraryTemplatesFor(conv + typed, rocm), ElementsAre("conv2d.rocm.miopen_nhwc"))
        << typed;
  }
  // A float output of f16 or i8 (the scaled form), an epilogue, fp8: not MIOpen's forms here.
  for (const char* typed : {",dtype=f16,out=f32", ",dtype=i8,out=f32", ",dtype=bf16,epilogue=relu",
                            ",dtype=fp8e4m3fnuz"}) {
    EXPECT_THAT(LibraryTemplatesFor(conv + typed, rocm), IsEmpty()) << typed;
  }
  EXPECT_THAT(
      kConv2dRocmMiopenNhwc.check_shape(ParseWorkload(conv + ",dtype=i8,out=f32")).message(),
      HasSubstr("builds f32, f16 and bf16 convolutions into their own type and i8 ones "
                "with out=i32"));
  // NCHW f32 stays conv2d.rocm.miopen's.
  EXPECT_THAT(LibraryTemplatesFor("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1", rocm),
              ElementsAre("conv2d.rocm.miopen"));
  absl::StatusOr<ir::LoweredFunc> func = kConv2dRocmMiopenNhwc.build(
      ParseWorkload(conv + ",dtype=i8"), ParseTarget(rocm), {{"algorithm", -1}}, "q");
  ASSERT_TRUE(func.ok()) << func.status();
  const std::string text = ir::ToText(*func);
  EXPECT_THAT(text,
              HasSubstr("func q(input: int8*, weight: int8*, output: int32*, stream: stream)"));
  // i8 (6) into i32 (7), no epilogue, MIOpen's find (-1).
  EXPECT_THAT(text, HasSubstr("tune_miopen_conv2d_typed("));
  EXPECT_THAT(text, HasSubstr("int32(6), int32(7), int32(0), int32(-1), stream)"));
}

}  // namespace
}  // namespace tune
