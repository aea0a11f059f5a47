// The C header of typed kernels: element types, layouts and scales, and that it compiles as C
// and C++ with no GPU vendor header.
#include "codegen/c_header.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/cpu_amx.h"
#include "common/files.h"
#include "common/strings.h"

namespace tune {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

HeaderKernel KernelOf(std::string func_name, std::string_view workload) {
  auto w = Workload::Parse(workload);
  EXPECT_TRUE(w.ok()) << w.status();
  return {.func_name = std::move(func_name),
          .workload = *w,
          .template_name = "gemm.gpu.tiled",
          .template_version = 1,
          .config = "tile=64",
          .origin = "the tuning log",
          .launch = GpuLaunch{}};
}

HeaderSpec SpecOf(std::string_view target, std::vector<HeaderKernel> kernels) {
  HeaderSpec spec;
  spec.guard_name = "kernels.h";
  spec.library_name = "libkernels.so";
  spec.target = *Target::Parse(target);
  spec.kernels = std::move(kernels);
  if (spec.target.kind == TargetKind::kLlvm) {
    for (HeaderKernel& k : spec.kernels) {
      k.launch.reset();
    }
  }
  return spec;
}

TEST(CHeaderTest, Bf16NtKernelPrototypeUsesTuneBf16AndDocumentsTheTransposedB) {
  const HeaderKernel k = KernelOf("proj", "gemm:M=64,N=4096,K=4096,layout=NT,dtype=bf16");
  EXPECT_EQ(CPrototype(k.func_name, k.workload, true),
            "int proj(const tune_bf16* A, const tune_bf16* B, tune_bf16* C, void* stream)");
  const std::string header = RenderCHeader(SpecOf("cuda -arch=sm_90", {k}));
  EXPECT_THAT(header, HasSubstr("typedef struct { uint16_t bits; } tune_bf16;"));
  EXPECT_THAT(header, HasSubstr("C = A x B^T with M=64, N=4096, K=4096"));
  EXPECT_THAT(header, HasSubstr("B: tune_bf16[4096][4096], row-major B[N][K] (layout=NT"));
  EXPECT_THAT(header, HasSubstr("dtype=bf16: f32 accumulation, output bf16 rounded to nearest"));
  EXPECT_THAT(header, HasSubstr("arrays of the element types and layouts given below"));
}

TEST(CHeaderTest, AKernelWithAWorkspaceTellsCallersNotToOverlapItsCalls) {
  HeaderKernel split = KernelOf("split", "gemm:M=16,N=768,K=3072,layout=NT,dtype=bf16");
  split.launch->workspace_bytes = 4718640;
  const HeaderKernel plain = KernelOf("plain", "gemm:M=4096,N=4096,K=4096,layout=NT,dtype=bf16");
  const std::string header = RenderCHeader(SpecOf("cuda -arch=sm_90a", {split, plain}));
  EXPECT_THAT(header, HasSubstr("workspace=4718640"));
  EXPECT_THAT(header, HasSubstr("workspace: 4718640 bytes of module memory"));
  EXPECT_THAT(header, HasSubstr("calls of this function must not overlap"));
  EXPECT_EQ(header.find("workspace: "), header.rfind("workspace: ")) << "only split's";
}

TEST(CHeaderTest, Fp8PrototypePassesScalesAfterTheOutputAndBeforeTheStream) {
  const HeaderKernel k = KernelOf("q", "gemm:M=16,N=32,K=64,layout=NT,dtype=fp8e4m3,epilogue=bias");
  EXPECT_EQ(CPrototype(k.func_name, k.workload, true),
            "int q(const tune_fp8e4m3* A, const tune_fp8e4m3* B, const tune_bf16* bias, "
            "tune_bf16* C, const float* scale_A, const float* scale_B, void* stream)");
  const std::string header = RenderCHeader(SpecOf("cuda -arch=sm_90", {k}));
  EXPECT_THAT(header, HasSubstr("result = (*scale_A) * (*scale_B) * sum of products + bias"));
  EXPECT_THAT(header, HasSubstr("scale_A: float[1], one f32 value, the tensor's scale"));
}

TEST(CHeaderTest, IntegerAndNhwcKernelsNameTheirTypesAndLayouts) {
  const HeaderKernel gemm = KernelOf("g", "gemm:M=4,N=8,K=16,dtype=u8i8");
  EXPECT_EQ(CPrototype(gemm.func_name, gemm.workload),
            "int g(const uint8_t* A, const int8_t* B, int32_t* C)");
  const HeaderKernel conv =
      KernelOf("c", "conv2d:N=1,C=16,H=8,W=8,K=32,R=3,S=3,pad=1,layout=NHWC,dtype=f16,out=f32");
  const std::string header = RenderCHeader(SpecOf("llvm -mcpu=sapphirerapids", {gemm, conv}));
  EXPECT_THAT(header, HasSubstr("i32 output (wraps modulo 2^32, no saturation)"));
  EXPECT_THAT(header, HasSubstr("input: tune_f16[1][8][8][16], NHWC"));
  EXPECT_THAT(header, HasSubstr("weight: tune_f16[32][3][3][16], KRSC"));
  EXPECT_THAT(header, HasSubstr("output: float[1][8][8][32], NPQK, written"));
}

TEST(CHeaderTest, TypedefsAreEmittedOnceAndNotAtAllForF32Libraries) {
  const std::string typed = RenderCHeader(
      SpecOf("cuda -arch=sm_90", {KernelOf("a", "gemm:M=8,N=8,K=8,dtype=f16"),
                                  KernelOf("b", "gemm:M=8,N=8,K=8,dtype=bf16,out=f32")}));
  EXPECT_EQ(typed.find("typedef struct { uint16_t bits; } tune_f16;"),
            typed.rfind("typedef struct { uint16_t bits; } tune_f16;"));
  const std::string f32 =
      RenderCHeader(SpecOf("llvm -mcpu=znver4", {KernelOf("c", "gemm:M=8,N=8,K=8")}));
  EXPECT_THAT(f32, Not(HasSubstr("TUNE_ELEMENT_TYPES")));
  EXPECT_THAT(f32, HasSubstr("Every function takes dense float32 arrays"));
  EXPECT_THAT(f32, HasSubstr("int c(const float* A, const float* B, float* C);"));
}

// Compiles `header` (included from a one-line source) with `compiler` and `flags`.
int Compile(const std::string& compiler, const std::string& flags, const std::string& header,
            const std::string& suffix) {
  absl::StatusOr<TempDir> temp = TempDir::Create("c_header_test-");
  EXPECT_TRUE(temp.ok()) << temp.status();
  const std::filesystem::path dir = temp->path();
  {
    std::ofstream(dir / "kernels.h") << header;
    std::ofstream(dir / ("use" + suffix))
        << "#include \"kernels.h\"\nint use_it(void) { return sizeof(tune_bf16) + "
           "sizeof(tune_fp8e4m3); }\n";
  }
  const std::string command = compiler + " " + flags + " -fsyntax-only -I" + dir.string() + " " +
                              (dir / ("use" + suffix)).string();
  return std::system(command.c_str());
}

TEST(CHeaderTest, TypedHeaderCompilesAsC99AndCxxWithoutGpuVendorHeaders) {
  const std::string header = RenderCHeader(
      SpecOf("cuda -arch=sm_90",
             {KernelOf("a", "gemm:M=8,N=8,K=8,layout=NT,dtype=fp8e4m3,epilogue=bias"),
              KernelOf("b", "conv2d:N=1,C=16,H=8,W=8,K=32,R=3,S=3,pad=1,layout=NHWC,dtype=bf16")}));
  EXPECT_EQ(Compile(TUNE_TEST_C_COMPILER, "-std=c99 -Wall -Werror -pedantic", header, ".c"), 0);
  EXPECT_EQ(Compile(TUNE_TEST_CXX_COMPILER, "-std=c++17 -Wall -Werror", header, ".cc"), 0);
}

TEST(CHeaderTest, ARequantisingKernelStatesItsFormulaAndTakesAScaleAndAZeroPointByPointer) {
  const std::string header = RenderCHeader(SpecOf(
      "llvm -mcpu=znver4", {KernelOf("q", "gemm:M=8,N=16,K=32,dtype=u8i8,epilogue=requant")}));
  EXPECT_THAT(header, HasSubstr("int8_t* C, const float* scale, const int32_t* zero_point"));
  EXPECT_THAT(header,
              HasSubstr("C = saturate_i8(round_to_nearest_even((*scale) * sum of products + "
                        "(*zero_point)))"));
  EXPECT_THAT(header, HasSubstr("one i32 value, the output's zero point"));
  EXPECT_EQ(Compile(TUNE_TEST_C_COMPILER, "-std=c99 -Wall -Werror -pedantic", header, ".c"), 0);
}

TEST(CHeaderTest, AmxKernelsDocumentTheCodeTheyReturnWhereLinuxRefusesTheTiles) {
  HeaderKernel amx = KernelOf("proj", "gemm:M=64,N=768,K=768,layout=NT,dtype=bf16");
  amx.template_name = "gemm.cpu.amx";
  const std::string header = RenderCHeader(SpecOf("llvm -mcpu=sapphirerapids", {amx}));
  EXPECT_THAT(header, HasSubstr(StrCat("#define TUNE_CPU_ERROR_AMX_DENIED ", kAmxDeniedStatus)));
  EXPECT_THAT(header, HasSubstr("arch_prctl(ARCH_REQ_XCOMP_PERM"));
  EXPECT_EQ(Compile(TUNE_TEST_C_COMPILER, "-std=c99 -Wall -Werror -pedantic", header, ".c"), 0);
  HeaderKernel dot = amx;
  dot.template_name = "gemm.cpu.dot";
  EXPECT_THAT(RenderCHeader(SpecOf("llvm -mcpu=znver4", {dot})),
              Not(HasSubstr("TUNE_CPU_ERROR_AMX_DENIED")));
}

}  // namespace
}  // namespace tune
