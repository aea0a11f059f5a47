// The GPU library templates (gemm.cuda.cublas, gemm.cuda.cublaslt, conv2d.cuda.cudnn,
// conv2d.cuda.cudnn_graph, gemm.rocm.rocblas, conv2d.rocm.miopen): which targets and workloads they
// apply to, their spaces, and their host artifacts (x86-64 shared objects exporting the GPU host
// ABI's entry with the stream). Nothing here needs a GPU or a vendor library: the artifacts are
// built and inspected, not run.
#include <string>
#include <vector>

#include "codegen/compiler.h"
#include "codegen/ir/printer.h"
#include "codegen/templates/catalog.h"
#include "codegen/templates/conv2d_gpu_library.h"
#include "codegen/templates/gemm_gpu_library.h"
#include "codegen/templates/library_call.h"
#include "common/extern_kernels.h"
#include "common/files.h"
#include "common/runtime_libs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

Target ParseTarget(const char* text) { return *Target::Parse(text); }
Workload ParseWorkload(const std::string& text) { return *Workload::Parse(text); }

std::vector<std::string_view> NamesFor(const std::string& workload, const char* target) {
  std::vector<std::string_view> names;
  for (const KernelTemplate* t :
       Catalog::BuiltIn().TemplatesFor(ParseWorkload(workload), ParseTarget(target))) {
    if (!t->library.empty()) {
      names.push_back(t->name);
    }
  }
  return names;
}

const char* kGemm = "gemm:M=64,N=48,K=32";
const char* kConv = "conv2d:N=2,C=8,H=12,W=12,K=16,R=3,S=3,pad=1";

TEST(GpuLibraryTemplates, ApplyOnlyWhenTheTargetNamesTheirLibrary) {
  EXPECT_THAT(NamesFor(kGemm, "cuda -arch=sm_90"), IsEmpty());
  EXPECT_THAT(NamesFor(kGemm, "cuda -arch=sm_90 -libs=cudnn"), IsEmpty());
  EXPECT_THAT(NamesFor(kGemm, "cuda -arch=sm_90 -libs=cublas"), ElementsAre("gemm.cuda.cublas"));
  EXPECT_THAT(NamesFor(kConv, "cuda -arch=sm_80 -libs=cublas,cudnn"),
              ElementsAre("conv2d.cuda.cudnn"));
  EXPECT_THAT(NamesFor(kGemm, "rocm -mcpu=gfx90a -libs=rocblas"), ElementsAre("gemm.rocm.rocblas"));
  EXPECT_THAT(NamesFor(kConv, "rocm -mcpu=gfx90a -libs=miopen,rocblas"),
              ElementsAre("conv2d.rocm.miopen"));
}

TEST(GpuLibraryTemplates, RocmLibrariesApplyOnlyToWorkloadsWithoutAnEpilogue) {
  EXPECT_THAT(NamesFor("gemm:M=8,N=8,K=8,epilogue=bias", "rocm -mcpu=gfx90a -libs=rocblas"),
              IsEmpty());
  EXPECT_THAT(NamesFor("gemm:M=8,N=8,K=8,epilogue=bias", "cuda -arch=sm_90 -libs=cublas"),
              ElementsAre("gemm.cuda.cublas"));
}

TEST(GpuLibraryTemplates, TargetsRejectTheLibrariesOfAnotherKindNamingTheAcceptedOnes) {
  absl::StatusOr<Target> llvm = Catalog::BuiltIn().ParseTarget("llvm -mcpu=native -libs=cublas");
  ASSERT_TRUE(absl::IsInvalidArgument(llvm.status()));
  EXPECT_THAT(llvm.status().message(), HasSubstr("accepted: dnnl, openblas"));
  EXPECT_THAT(llvm.status().message(), HasSubstr("cublas is a library of cuda targets"));
  absl::StatusOr<Target> rocm = Catalog::BuiltIn().ParseTarget("rocm -mcpu=gfx90a -libs=cudnn");
  ASSERT_TRUE(absl::IsInvalidArgument(rocm.status()));
  EXPECT_THAT(rocm.status().message(), HasSubstr("accepted: hipblaslt, miopen, rocblas"));
  absl::StatusOr<Target> cuda = Catalog::BuiltIn().ParseTarget("cuda -arch=sm_90 -libs=miopen");
  ASSERT_TRUE(absl::IsInvalidArgument(cuda.status()));
  EXPECT_THAT(cuda.status().message(), HasSubstr("accepted: cublas, cudnn"));
  EXPECT_TRUE(Catalog::BuiltIn().ParseTarget("cuda -arch=sm_90 -libs=cudnn,cublas").ok());
}

TEST(GpuLibraryTemplates, KnobsAreTheEpilogueAndCudnnsAlgorithms) {
  Target cuda = ParseTarget("cuda -arch=sm_90 -libs=cublas,cudnn");
  EXPECT_EQ(kGemmCudaCublas.space(ParseWorkload(kGemm), cuda).FindKnob("epilogue"), nullptr);
  const ConfigSpace relu_space =
      kGemmCudaCublas.space(ParseWorkload("gemm:M=8,N=8,K=8,epilogue=relu"), cuda);
  const Knob* epilogue = relu_space.FindKnob("epilogue");
  ASSERT_NE(epilogue, nullptr);
  EXPECT_THAT(epilogue->values, ElementsAre(0, 1));
  auto algorithms = [&](const std::string& w) {
    return kConv2dCudaCudnn.space(ParseWorkload(w), cuda).FindKnob("algorithm")->values;
  };
  EXPECT_THAT(algorithms(kConv), ElementsAre(-1, 0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_THAT(algorithms("conv2d:N=1,C=8,H=8,W=8,K=8,R=3,S=3,stride=2,pad=1"),
              ElementsAre(-1, 0, 1, 2, 3));
  EXPECT_THAT(algorithms("conv2d:N=1,C=8,H=8,W=8,K=8,R=1,S=1"), ElementsAre(-1, 0, 1, 2, 3, 4, 5));
  EXPECT_EQ(kConv2dCudaCudnn.default_config(ParseWorkload(kConv), cuda).at("algorithm"), -1);
}

TEST(GpuLibraryTemplates, AFusedBiasWithoutReluNeedsTheSearchOrImplicitPrecompGemm) {
  Target cuda = ParseTarget("cuda -arch=sm_90 -libs=cudnn");
  Workload w = ParseWorkload(std::string(kConv) + ",epilogue=bias");
  ConfigSpace space = kConv2dCudaCudnn.space(w, cuda);
  EXPECT_TRUE(space.IsValid({{"algorithm", 1}, {"epilogue", 1}}));
  EXPECT_TRUE(space.IsValid({{"algorithm", -1}, {"epilogue", 1}}));
  EXPECT_TRUE(space.IsValid({{"algorithm", 0}, {"epilogue", 0}}));
  EXPECT_FALSE(space.IsValid({{"algorithm", 0}, {"epilogue", 1}}));
  Workload relu = ParseWorkload(std::string(kConv) + ",epilogue=bias_relu");
  EXPECT_TRUE(kConv2dCudaCudnn.space(relu, cuda).IsValid({{"algorithm", 0}, {"epilogue", 1}}));
}

TEST(GpuLibraryTemplates, TheKernelCallsTheShimWithTheStreamItTakesLast) {
  Target cuda = ParseTarget("cuda -arch=sm_80 -libs=cublas");
  Workload w = ParseWorkload("gemm:M=64,N=48,K=32,epilogue=bias_relu");
  absl::StatusOr<ir::LoweredFunc> func =
      kGemmCudaCublas.build(w, cuda, {{"epilogue", 1}}, "gemm_kernel");
  ASSERT_TRUE(func.ok()) << func.status();
  ASSERT_TRUE(func->stream_param.defined());
  EXPECT_THAT(func->external_libs, ElementsAre("libtune_cublas.so"));
  const std::string text = ir::ToText(*func);
  EXPECT_THAT(text, HasSubstr("func gemm_kernel(A: float32*, B: float32*, bias: float32*, "
                              "C: float32*, stream: stream)"));
  EXPECT_THAT(text, HasSubstr("tune_cublas_sgemm("));
  EXPECT_THAT(text, HasSubstr(", stream)"));
}

// Builds `tpl` for every target/workload pair through Compiler::BuildArtifact, writes the shared
// object and checks it: an x86-64 ELF exporting `entry` whose LLVM signature ends in the stream.
void ExpectHostArtifact(const KernelTemplate& tpl, const char* target_text,
                        const std::string& workload_text, const std::string& shim) {
  SCOPED_TRACE(std::string(tpl.name) + " " + workload_text);
  Target target = ParseTarget(target_text);
  Workload w = ParseWorkload(workload_text);
  Compiler compiler(Catalog::BuiltIn(), target);
  absl::StatusOr<Artifact> artifact =
      compiler.BuildArtifact(w, tpl, tpl.default_config(w, target), "entry");
  ASSERT_TRUE(artifact.ok()) << artifact.status();
  EXPECT_EQ(artifact->format, CodeFormat::kSharedObject);
  EXPECT_EQ(artifact->entry_symbol, "entry");
  EXPECT_THAT(artifact->external_libs, ElementsAre(RuntimeLibraryNamed(tpl.library).shim_file));
  EXPECT_THAT(artifact->llvm_ir, HasSubstr("define i32 @entry("));
  EXPECT_THAT(artifact->llvm_ir, HasSubstr("ptr %stream)"));
  EXPECT_THAT(artifact->llvm_ir, HasSubstr("@" + shim + "("));
  EXPECT_THAT(artifact->llvm_ir, HasSubstr("\"target-cpu\"=\"x86-64\""));
  TempDir dir = TempDir::Create().value();
  const std::string path = dir.File("entry.so");
  ASSERT_TRUE(WriteFileAtomically(path, artifact->code).ok());
  absl::StatusOr<bool> defined = ElfDefinesSymbol(path, "entry");
  ASSERT_TRUE(defined.ok()) << defined.status();
  EXPECT_TRUE(*defined);
  absl::StatusOr<bool> shim_defined = ElfDefinesSymbol(path, shim);
  ASSERT_TRUE(shim_defined.ok()) << shim_defined.status();
  EXPECT_FALSE(*shim_defined);  // left to the preloaded shim
}

TEST(GpuLibraryTemplates, BuildHostSharedObjectsWithTheStreamEntryForCudaAndRocm) {
  for (const char* e : {"", ",epilogue=bias", ",epilogue=relu", ",epilogue=bias_relu"}) {
    ExpectHostArtifact(kGemmCudaCublas, "cuda -arch=sm_90 -libs=cublas", kGemm + std::string(e),
                       "tune_cublas_sgemm");
    ExpectHostArtifact(kConv2dCudaCudnn, "cuda -arch=sm_80 -libs=cudnn", kConv + std::string(e),
                       "tune_cudnn_conv2d");
  }
  ExpectHostArtifact(kGemmRocmRocblas, "rocm -mcpu=gfx942 -libs=rocblas", kGemm,
                     "tune_rocblas_sgemm");
  ExpectHostArtifact(kConv2dRocmMiopen, "rocm -mcpu=gfx90a -libs=miopen", kConv,
                     "tune_miopen_conv2d");
}

TEST(GpuLibraryTemplates, CublasLtTakesTheTypedGemmsWithTheHeuristicsAlgorithmAsItsKnob) {
  EXPECT_THAT(
      NamesFor("gemm:M=64,N=4096,K=4096,layout=NT,dtype=bf16", "cuda -arch=sm_90 -libs=cublas"),
      ElementsAre("gemm.cuda.cublaslt"));
  EXPECT_THAT(
      NamesFor("gemm:M=64,N=48,K=32,dtype=tf32,epilogue=bias", "cuda -arch=sm_90 -libs=cublas"),
      ElementsAre("gemm.cuda.cublaslt"));
  // fp8 in the TN order with 16-aligned K and N only; f32 stays cuBLAS's sgemm.
  EXPECT_THAT(
      NamesFor("gemm:M=333,N=4096,K=777,layout=NT,dtype=fp8e4m3", "cuda -arch=sm_90 -libs=cublas"),
      IsEmpty());
  EXPECT_THAT(NamesFor("gemm:M=64,N=64,K=64,dtype=fp8e4m3", "cuda -arch=sm_90 -libs=cublas"),
              IsEmpty());
  EXPECT_THAT(
      NamesFor("gemm:M=64,N=64,K=64,layout=NT,dtype=fp8e5m2", "cuda -arch=sm_90 -libs=cublas"),
      ElementsAre("gemm.cuda.cublaslt"));
  const Workload fp8 = ParseWorkload("gemm:M=16,N=32,K=64,layout=NT,dtype=fp8e4m3,epilogue=bias");
  const Target cuda = ParseTarget("cuda -arch=sm_90 -libs=cublas");
  EXPECT_EQ(kGemmCudaCublasLt.space(fp8, cuda).FindKnob("algo")->values.size(), 8u);
  absl::StatusOr<ir::LoweredFunc> func = kGemmCudaCublasLt.build(fp8, cuda, {{"algo", 3}}, "q");
  ASSERT_TRUE(func.ok()) << func.status();
  const std::string text = ir::ToText(*func);
  EXPECT_THAT(text,
              HasSubstr("func q(A: float8_e4m3fn*, B: float8_e4m3fn*, bias: bfloat16*, "
                        "C: bfloat16*, scale_A: float32*, scale_B: float32*, stream: stream)"));
  EXPECT_THAT(text, HasSubstr("tune_cublaslt_gemm("));
  absl::Status nn =
      kGemmCudaCublasLt.check_shape(ParseWorkload("gemm:M=16,N=32,K=64,dtype=fp8e4m3"));
  EXPECT_THAT(nn.message(),
              HasSubstr("builds fp8 GEMMs in layout=NT with K and N multiples of 16"));
  ExpectHostArtifact(kGemmCudaCublasLt, "cuda -arch=sm_90 -libs=cublas",
                     "gemm:M=64,N=48,K=32,layout=NT,dtype=bf16,epilogue=bias_relu",
                     "tune_cublaslt_gemm");
}

TEST(GpuLibraryTemplates, CublasLtTakesI8GemmsInItsImmaFormOnly) {
  const char* cuda = "cuda -arch=sm_90 -libs=cublas";
  EXPECT_THAT(NamesFor("gemm:M=64,N=4096,K=4096,layout=NT,dtype=i8", cuda),
              ElementsAre("gemm.cuda.cublaslt"));
  // NN, a dequantised or fused output, K not a multiple of 4, u8 activations: not its form.
  for (const char* w :
       {"gemm:M=64,N=64,K=64,dtype=i8", "gemm:M=64,N=64,K=64,layout=NT,dtype=i8,out=f32",
        "gemm:M=64,N=64,K=64,layout=NT,dtype=i8,epilogue=relu",
        "gemm:M=64,N=64,K=66,layout=NT,dtype=i8", "gemm:M=64,N=64,K=64,layout=NT,dtype=u8i8"}) {
    EXPECT_THAT(NamesFor(w, cuda), IsEmpty()) << w;
  }
  EXPECT_THAT(
      kGemmCudaCublasLt.check_shape(ParseWorkload("gemm:M=64,N=64,K=64,layout=NT,dtype=i8,out=f32"))
          .message(),
      HasSubstr("builds i8 GEMMs in layout=NT with out=i32, no epilogue"));
  const Workload i8 = ParseWorkload("gemm:M=64,N=64,K=64,layout=NT,dtype=i8");
  absl::StatusOr<ir::LoweredFunc> func =
      kGemmCudaCublasLt.build(i8, ParseTarget(cuda), {{"algo", 0}}, "q");
  ASSERT_TRUE(func.ok()) << func.status();
  EXPECT_THAT(ir::ToText(*func),
              HasSubstr("func q(A: int8*, B: int8*, C: int32*, stream: stream)"));
  // TUNE_GPU_TYPE_I8 (6) in, TUNE_GPU_TYPE_I32 (7) out, nt 1.
  EXPECT_THAT(ir::ToText(*func),
              HasSubstr("64, 64, 64, int32(6), int32(7), int32(1), int32(0), int32(0), stream)"));
}

TEST(GpuLibraryTemplates, CudnnGraphTakesTypedNhwcConvolutionsAndLeavesNchwToTheLegacyTemplate) {
  const auto builds = [](const std::string& w) {
    return TemplateBuildsForm(kConv2dCudaCudnnGraph, ParseWorkload(w)) &&
           CheckTemplateShape(kConv2dCudaCudnnGraph, ParseWorkload(w)).ok();
  };
  const std::string nhwc = "conv2d:N=2,C=16,H=9,W=9,K=16,R=3,S=3,pad=1,layout=NHWC";
  for (const char* form : {",dtype=f16", ",dtype=f16,out=f32", ",dtype=bf16,epilogue=bias_relu",
                           ",dtype=fp8e4m3,epilogue=bias", ",dtype=fp8e5m2,out=f32",
                           ",dtype=i8,out=f32,epilogue=relu", ",dtype=i8", ",dtype=tf32", ""}) {
    EXPECT_TRUE(builds(nhwc + form)) << form;
  }
  // Channel counts cuDNN's 8-bit engines pad themselves.
  EXPECT_TRUE(builds("conv2d:N=1,C=5,H=9,W=9,K=7,R=3,S=3,pad=1,layout=NHWC,dtype=fp8e4m3"));
  // NCHW (the legacy template's), the blocked layouts and u8 activations are not its forms.
  EXPECT_FALSE(builds("conv2d:N=2,C=16,H=9,W=9,K=16,R=3,S=3,pad=1,dtype=f16"));
  EXPECT_FALSE(builds("conv2d:N=2,C=16,H=9,W=9,K=16,R=3,S=3,pad=1,layout=NCHW16c,dtype=f16"));
  EXPECT_FALSE(builds(nhwc + ",dtype=u8i8"));
  EXPECT_FALSE(TemplateBuildsForm(kConv2dCudaCudnn, ParseWorkload(nhwc + ",dtype=f16")));
  absl::Status nchw =
      CheckTemplateForm(kConv2dCudaCudnnGraph, ParseWorkload("conv2d:N=1,C=8,H=8,W=8,K=8,R=1,S=1"));
  EXPECT_THAT(nchw.message(), HasSubstr("in layout=NHWC"));
}

TEST(GpuLibraryTemplates, CudnnGraphRefusesAnI32ReluWithoutBiasNamingTheAcceptedForms) {
  const Workload relu = ParseWorkload(
      "conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1,layout=NHWC,dtype=i8,epilogue=relu");
  absl::Status shape = kConv2dCudaCudnnGraph.check_shape(relu);
  ASSERT_TRUE(absl::IsInvalidArgument(shape)) << shape;
  EXPECT_THAT(shape.message(),
              HasSubstr("builds i8 convolutions with out=f32, or with out=i32 and no epilogue or "
                        "epilogue=bias|bias_relu"));
  absl::StatusOr<ir::LoweredFunc> built = kConv2dCudaCudnnGraph.build(
      relu, ParseTarget("cuda -arch=sm_90 -libs=cudnn"), {{"algo", 0}}, "k");
  EXPECT_TRUE(absl::IsInvalidArgument(built.status())) << built.status();
}

TEST(GpuLibraryTemplates, CudnnGraphCallsTheTypedShimWithScalesAndTheHeuristicsIndex) {
  const Target cuda = ParseTarget("cuda -arch=sm_90 -libs=cudnn");
  const Workload fp8 = ParseWorkload(
      "conv2d:N=2,C=16,H=9,W=9,K=32,R=3,S=3,stride=2,pad=1,layout=NHWC,dtype=fp8e4m3,"
      "epilogue=bias_relu");
  EXPECT_THAT(kConv2dCudaCudnnGraph.space(fp8, cuda).FindKnob("algo")->values,
              ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_EQ(kConv2dCudaCudnnGraph.default_config(fp8, cuda).at("algo"), 0);
  EXPECT_EQ(TemplateTolerance(kConv2dCudaCudnnGraph, fp8, {{"algo", 0}}), 4.0);
  absl::StatusOr<ir::LoweredFunc> func = kConv2dCudaCudnnGraph.build(fp8, cuda, {{"algo", 5}}, "q");
  ASSERT_TRUE(func.ok()) << func.status();
  const std::string text = ir::ToText(*func);
  EXPECT_THAT(text, HasSubstr("func q(input: float8_e4m3fn*, weight: float8_e4m3fn*, "
                              "bias: bfloat16*, output: bfloat16*, scale_input: float32*, "
                              "scale_weight: float32*, stream: stream)"));
  // TUNE_GPU_TYPE_FP8E4M3 (4) in, TUNE_GPU_TYPE_BF16 (3) out, bias and ReLU (3), algo 5.
  EXPECT_THAT(text, HasSubstr("tune_cudnn_conv2d_typed("));
  EXPECT_THAT(text, HasSubstr("2, 1, 1, int32(4), int32(3), int32(3), int32(5), stream)"));
  const Workload i8 =
      ParseWorkload("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1,layout=NHWC,dtype=i8");
  absl::StatusOr<ir::LoweredFunc> raw = kConv2dCudaCudnnGraph.build(i8, cuda, {{"algo", 0}}, "r");
  ASSERT_TRUE(raw.ok()) << raw.status();
  // The raw i32 sums: no scale pointers (0, 0), TUNE_GPU_TYPE_I8 (6) into TUNE_GPU_TYPE_I32 (7).
  EXPECT_THAT(ir::ToText(*raw), HasSubstr("func r(input: int8*, weight: int8*, output: int32*, "
                                          "stream: stream)"));
  EXPECT_THAT(ir::ToText(*raw), HasSubstr("int32(6), int32(7), int32(0), int32(0), stream)"));
  EXPECT_EQ(TemplateTolerance(kConv2dCudaCudnnGraph, i8, {{"algo", 0}}), 1.0);
  ExpectHostArtifact(kConv2dCudaCudnnGraph, "cuda -arch=sm_90 -libs=cudnn",
                     "conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,pad=1,layout=NHWC,dtype=bf16,"
                     "epilogue=bias_relu",
                     "tune_cudnn_conv2d_typed");
}

// Needs kConv2dCudaCudnnGraph in the catalog's built-in list (codegen/templates/catalog.cc).
TEST(GpuLibraryTemplates, CudnnGraphIsOfferedForNhwcConvolutionsOnCudaTargetsWithCudnn) {
  const std::string nhwc = "conv2d:N=2,C=16,H=9,W=9,K=16,R=3,S=3,pad=1,layout=NHWC,dtype=bf16";
  EXPECT_THAT(NamesFor(nhwc, "cuda -arch=sm_90 -libs=cudnn"),
              ElementsAre("conv2d.cuda.cudnn_graph"));
  EXPECT_THAT(NamesFor(nhwc, "cuda -arch=sm_90"), IsEmpty());
  EXPECT_THAT(NamesFor(kConv, "cuda -arch=sm_90 -libs=cudnn"), ElementsAre("conv2d.cuda.cudnn"));
}

TEST(GpuLibraryTemplates, ATargetWithoutTheLibraryIsRefusedNamingTheOption) {
  Target cuda = ParseTarget("cuda -arch=sm_90");
  Workload w = ParseWorkload(kConv);
  absl::StatusOr<ir::LoweredFunc> built = kConv2dCudaCudnn.build(w, cuda, {{"algorithm", -1}}, "k");
  ASSERT_TRUE(absl::IsInvalidArgument(built.status())) << built.status();
  EXPECT_THAT(built.status().message(), HasSubstr("-libs=cudnn"));
}

}  // namespace
}  // namespace tune
