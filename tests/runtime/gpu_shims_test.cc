// The GPU shims without a GPU: bad arguments (the typed convolution's types and scales too) are
// refused before anything is loaded, a missing vendor library is TUNE_GPU_NOT_FOUND with a
// message naming its file, describe lines say what was (not) loaded, and the epilogue kernel's
// hand-written PTX assembles for sm_80.
#include <dlfcn.h>
#include <sys/wait.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "runtime/tune_gpu_runtime.h"

namespace {

// True when this process can dlopen `name` (the shims open it the same way).
bool Loadable(const char* name) {
  void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    return false;
  }
  dlclose(lib);
  return true;
}

// Non-null pointers the shims never dereference on the paths tested here.
float* Dummy() {
  static float cell[4];
  return cell;
}

std::string Describe(int32_t (*describe)(char*, int64_t)) {
  char line[1024] = {};
  EXPECT_EQ(describe(line, sizeof(line)), 0);
  return line;
}

TEST(GpuShims, BadArgumentsAreRefusedBeforeAnyLibraryIsLoaded) {
  float* p = Dummy();
  EXPECT_EQ(tune_cublas_sgemm(p, p, nullptr, p, 0, 4, 4, 0, 0, nullptr), TUNE_GPU_BAD_ARGUMENT);
  // A bias epilogue without a bias pointer.
  EXPECT_EQ(tune_cublas_sgemm(p, p, nullptr, p, 4, 4, 4, TUNE_GPU_EPILOGUE_BIAS, 0, nullptr),
            TUNE_GPU_BAD_ARGUMENT);
  EXPECT_EQ(tune_cudnn_conv2d(p, p, nullptr, p, 1, 1, 4, 4, 1, 3, 3, 1, 0, 1, 0, 0, 8, nullptr),
            TUNE_GPU_BAD_ARGUMENT);  // algo 8 is not a cudnnConvolutionFwdAlgo_t
  EXPECT_EQ(tune_cudnn_conv2d(p, p, nullptr, p, 1, 1, 2, 2, 1, 3, 3, 1, 0, 1, 0, 0, -1, nullptr),
            TUNE_GPU_BAD_ARGUMENT);  // the filter does not fit
  EXPECT_NE(std::string(tune_gpu_last_error()).find("tune_cudnn_conv2d"), std::string::npos);
}

// tune_cudnn_conv2d_typed on a 1x8x8x8 input and 8x3x3x8 weights (NHWC, KRSC), padding 1.
int32_t Typed(const void* bias, const float* sx, const float* sw, int32_t in, int32_t out,
              int32_t epilogue, int32_t algo, int64_t stride = 1) {
  float* p = Dummy();
  return tune_cudnn_conv2d_typed(p, p, bias, p, sx, sw, 1, 8, 8, 8, 8, 3, 3, stride, 1, 1, in, out,
                                 epilogue, algo, nullptr);
}

TEST(GpuShims, CudnnTypedRefusesBadArgumentsBeforeAnyLibraryIsLoaded) {
  float* p = Dummy();
  // Types outside tune's table: f16 into bf16, fp8 into f16, i32 inputs, an i8 output, u8 codes.
  EXPECT_EQ(Typed(nullptr, nullptr, nullptr, TUNE_GPU_TYPE_F16, TUNE_GPU_TYPE_BF16, 0, 0),
            TUNE_GPU_BAD_ARGUMENT);
  EXPECT_EQ(Typed(nullptr, p, p, TUNE_GPU_TYPE_FP8E4M3, TUNE_GPU_TYPE_F16, 0, 0),
            TUNE_GPU_BAD_ARGUMENT);
  EXPECT_EQ(Typed(nullptr, nullptr, nullptr, TUNE_GPU_TYPE_I32, TUNE_GPU_TYPE_I32, 0, 0),
            TUNE_GPU_BAD_ARGUMENT);
  EXPECT_EQ(Typed(nullptr, nullptr, nullptr, TUNE_GPU_TYPE_I8, TUNE_GPU_TYPE_I8, 0, 0),
            TUNE_GPU_BAD_ARGUMENT);
  EXPECT_EQ(Typed(nullptr, nullptr, nullptr, 42, TUNE_GPU_TYPE_F32, 0, 0), TUNE_GPU_BAD_ARGUMENT);
  // fp8 and i8 into a float output take both scales.
  EXPECT_EQ(Typed(nullptr, p, nullptr, TUNE_GPU_TYPE_FP8E5M2, TUNE_GPU_TYPE_BF16, 0, 0),
            TUNE_GPU_BAD_ARGUMENT);
  EXPECT_EQ(Typed(nullptr, nullptr, nullptr, TUNE_GPU_TYPE_I8, TUNE_GPU_TYPE_F32, 0, 0),
            TUNE_GPU_BAD_ARGUMENT);
  // algo outside [0, 8), a bias epilogue without a bias, stride 0.
  EXPECT_EQ(Typed(nullptr, nullptr, nullptr, TUNE_GPU_TYPE_F16, TUNE_GPU_TYPE_F16, 0, 8),
            TUNE_GPU_BAD_ARGUMENT);
  EXPECT_EQ(Typed(nullptr, nullptr, nullptr, TUNE_GPU_TYPE_F16, TUNE_GPU_TYPE_F16, 0, -1),
            TUNE_GPU_BAD_ARGUMENT);
  EXPECT_EQ(Typed(nullptr, nullptr, nullptr, TUNE_GPU_TYPE_BF16, TUNE_GPU_TYPE_BF16,
                  TUNE_GPU_EPILOGUE_BIAS_RELU, 0),
            TUNE_GPU_BAD_ARGUMENT);
  EXPECT_EQ(Typed(nullptr, nullptr, nullptr, TUNE_GPU_TYPE_F16, TUNE_GPU_TYPE_F16, 0, 0, 0),
            TUNE_GPU_BAD_ARGUMENT);
  const std::string error = tune_gpu_last_error();
  EXPECT_NE(error.find("tune_cudnn_conv2d_typed"), std::string::npos) << error;
  EXPECT_NE(error.find("fp8e4m3|fp8e5m2 -> bf16|f32"), std::string::npos) << error;
}

TEST(GpuShims, CudnnRefusesAFusedBiasWithoutReluOnOtherAlgorithmsThanImplicitPrecompGemm) {
  float* p = Dummy();
  EXPECT_EQ(tune_cudnn_conv2d(p, p, p, p, 1, 1, 4, 4, 1, 3, 3, 1, 0, 1, TUNE_GPU_EPILOGUE_BIAS,
                              TUNE_GPU_EPILOGUE_LIBRARY, 0, nullptr),
            TUNE_GPU_UNSUPPORTED);
  EXPECT_NE(std::string(tune_gpu_last_error()).find("IMPLICIT_PRECOMP_GEMM"), std::string::npos);
}

TEST(GpuShims, RocblasWithoutTheLibraryIsNotFoundNamingItsFile) {
  if (Loadable("librocblas.so") && Loadable("libamdhip64.so")) {
    GTEST_SKIP() << "rocBLAS is installed here";
  }
  float* p = Dummy();
  EXPECT_EQ(tune_rocblas_sgemm(p, p, nullptr, p, 4, 4, 4, 0, 0, nullptr), TUNE_GPU_NOT_FOUND);
  const std::string error = tune_gpu_last_error();
  EXPECT_TRUE(error.find("librocblas.so") != std::string::npos ||
              error.find("libamdhip64.so") != std::string::npos)
      << error;
  EXPECT_NE(Describe(&tune_rocblas_describe).find("last error: "), std::string::npos);
  // An epilogue is refused whatever is installed: rocBLAS has none here.
  EXPECT_EQ(tune_rocblas_sgemm(p, p, p, p, 4, 4, 4, TUNE_GPU_EPILOGUE_BIAS, 0, nullptr),
            TUNE_GPU_UNSUPPORTED);
}

TEST(GpuShims, MiopenWithoutTheLibraryIsNotFoundNamingItsFile) {
  if (Loadable("libMIOpen.so") && Loadable("libamdhip64.so")) {
    GTEST_SKIP() << "MIOpen is installed here";
  }
  float* p = Dummy();
  EXPECT_EQ(tune_miopen_conv2d(p, p, nullptr, p, 1, 1, 4, 4, 1, 3, 3, 1, 0, 1, 0, 0, -1, nullptr),
            TUNE_GPU_NOT_FOUND);
  const std::string error = tune_gpu_last_error();
  EXPECT_TRUE(error.find("libMIOpen.so") != std::string::npos ||
              error.find("libamdhip64.so") != std::string::npos)
      << error;
  EXPECT_EQ(tune_miopen_conv2d(p, p, nullptr, p, 1, 1, 4, 4, 1, 3, 3, 1, 0, 1, 0, 0, 1, nullptr),
            TUNE_GPU_ALGO_UNSUPPORTED);  // MIOpen runs what its find chose
}

// Which of the files a CUDA shim needs this process cannot open (empty: all are there).
std::string MissingCudaFile(const char* library_13, const char* library_12) {
  if (!Loadable(library_13) && !Loadable(library_12)) {
    return library_13;
  }
  if (!Loadable("libcuda.so.1")) {
    return "libcuda.so.1";
  }
  return "";
}

TEST(GpuShims, CublasWithoutTheLibraryOrTheDriverIsNotFoundNamingTheFile) {
  const std::string missing = MissingCudaFile("libcublas.so.13", "libcublas.so.12");
  if (missing.empty()) {
    GTEST_SKIP() << "cuBLAS and the CUDA driver are installed here";
  }
  float* p = Dummy();
  EXPECT_EQ(tune_cublas_sgemm(p, p, nullptr, p, 4, 4, 4, 0, 0, nullptr), TUNE_GPU_NOT_FOUND);
  EXPECT_NE(std::string(tune_gpu_last_error()).find(missing), std::string::npos)
      << tune_gpu_last_error();
  EXPECT_NE(Describe(&tune_cublas_describe).find(missing), std::string::npos);
}

TEST(GpuShims, CudnnWithoutTheLibraryOrTheDriverIsNotFoundNamingTheFile) {
  const std::string missing = MissingCudaFile("libcudnn.so.9", "libcudnn.so");
  if (missing.empty()) {
    GTEST_SKIP() << "cuDNN and the CUDA driver are installed here";
  }
  float* p = Dummy();
  EXPECT_EQ(tune_cudnn_conv2d(p, p, nullptr, p, 1, 1, 4, 4, 1, 3, 3, 1, 0, 1, 0, 0, -1, nullptr),
            TUNE_GPU_NOT_FOUND);
  EXPECT_NE(std::string(tune_gpu_last_error()).find(missing), std::string::npos)
      << tune_gpu_last_error();
}

TEST(GpuShims, CudnnTypedWithoutTheLibraryOrTheDriverIsNotFoundNamingTheFile) {
  const std::string missing = MissingCudaFile("libcudnn.so.9", "libcudnn.so");
  if (missing.empty()) {
    GTEST_SKIP() << "cuDNN and the CUDA driver are installed here";
  }
  // A well-formed call (i8 raw sums: no scales needed) gets as far as loading.
  EXPECT_EQ(Typed(nullptr, nullptr, nullptr, TUNE_GPU_TYPE_I8, TUNE_GPU_TYPE_I32, 0, 0),
            TUNE_GPU_NOT_FOUND);
  EXPECT_NE(std::string(tune_gpu_last_error()).find(missing), std::string::npos)
      << tune_gpu_last_error();
  EXPECT_NE(Describe(&tune_cudnn_describe).find("last error: "), std::string::npos);
}

TEST(GpuShims, VersionsLoadTheVendorLibraryOrAreNotFound) {
  char version[64] = {};
  EXPECT_EQ(tune_rocblas_version(nullptr, 8), TUNE_GPU_BAD_ARGUMENT);
  struct Shim {
    const char* library;
    int32_t (*version)(char*, int64_t);
  };
  for (const Shim& shim :
       {Shim{"librocblas.so", &tune_rocblas_version}, Shim{"libMIOpen.so", &tune_miopen_version},
        Shim{"libhipblaslt.so", &tune_hipblaslt_version},
        Shim{"libcublasLt.so.13", &tune_cublas_version},
        Shim{"libcudnn.so.9", &tune_cudnn_version}}) {
    SCOPED_TRACE(shim.library);
    const int32_t rc = shim.version(version, sizeof(version));
    if (Loadable(shim.library)) {
      EXPECT_EQ(rc, 0) << tune_gpu_last_error();
      EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(version[0]))) << version;
    } else {
      EXPECT_EQ(rc, TUNE_GPU_NOT_FOUND);
    }
  }
}

TEST(GpuShims, DescribeBeforeAnyCallLoadsNothing) {
  // Only the describe line: nothing of the vendor library is opened to write it.
  EXPECT_FALSE(Describe(&tune_miopen_describe).empty());
  EXPECT_EQ(tune_cublas_describe(nullptr, 8), TUNE_GPU_BAD_ARGUMENT);
}

TEST(GpuShims, TheEpilogueKernelsPtxAssemblesForSm80) {
  const char* ptxas = "/usr/local/cuda/bin/ptxas";
  if (!std::filesystem::exists(ptxas)) {
    GTEST_SKIP() << ptxas << " is not installed";
  }
  // A directory of this test's own: ctest may run other tests beside it.
  std::string dir = testing::TempDir() + "/tune-ptx-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr) << dir;
  const std::string ptx = dir + "/tune_epilogue.ptx";
  const std::string cubin = dir + "/tune_epilogue.cubin";
  std::ofstream(ptx) << tune_cuda_epilogue_ptx();
  const std::string command = std::string(ptxas) + " -arch=sm_80 " + ptx + " -o " + cubin + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[256];
  while (fgets(buf, sizeof(buf), pipe) != nullptr) {
    output += buf;
  }
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  EXPECT_GT(std::filesystem::file_size(cubin), 0u);
  EXPECT_NE(std::string(tune_cuda_epilogue_ptx()).find(".visible .entry tune_bias_relu("),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

// tune_hipblaslt_gemm refuses what it cannot run before it opens anything: bad arguments, and
// type combinations hipBLASLt does not serve, with a message naming the served ones.
TEST(GpuShims, HipblasLtRefusesBadArgumentsAndUnservedTypesBeforeLoadingAnything) {
  float* p = Dummy();
  auto gemm = [&](const void* a, const void* bias, const float* scale, int32_t in, int32_t out,
                  int32_t nt, int32_t epilogue, int32_t algo) {
    return tune_hipblaslt_gemm(a, p, bias, p, scale, scale, 16, 16, 16, in, out, nt, epilogue, algo,
                               nullptr);
  };
  const int32_t f16 = TUNE_GPU_TYPE_F16, fnuz = TUNE_GPU_TYPE_FP8E4M3FNUZ;
  EXPECT_EQ(gemm(nullptr, nullptr, nullptr, f16, f16, 0, 0, 0), TUNE_GPU_BAD_ARGUMENT);
  EXPECT_EQ(gemm(p, nullptr, nullptr, 42, f16, 0, 0, 0), TUNE_GPU_BAD_ARGUMENT);   // no such type
  EXPECT_EQ(gemm(p, nullptr, nullptr, f16, f16, 2, 0, 0), TUNE_GPU_BAD_ARGUMENT);  // nt
  EXPECT_EQ(gemm(p, nullptr, nullptr, f16, f16, 0, 0, 8), TUNE_GPU_BAD_ARGUMENT);  // algo
  EXPECT_EQ(gemm(p, nullptr, nullptr, f16, f16, 0, TUNE_GPU_EPILOGUE_BIAS, 0),
            TUNE_GPU_BAD_ARGUMENT);  // a bias epilogue without a bias
  EXPECT_EQ(gemm(p, nullptr, nullptr, fnuz, TUNE_GPU_TYPE_BF16, 1, 0, 0),
            TUNE_GPU_BAD_ARGUMENT);  // fp8 without its scales
  EXPECT_NE(std::string(tune_gpu_last_error()).find("tune_hipblaslt_gemm: null pointer"),
            std::string::npos)
      << tune_gpu_last_error();

  struct Unserved {
    int32_t in, out, epilogue;
    const char* says;
  };
  for (const Unserved& u : {
           Unserved{TUNE_GPU_TYPE_TF32, TUNE_GPU_TYPE_F32, 0, "tf32 -> f32 is not served"},
           Unserved{TUNE_GPU_TYPE_I8, TUNE_GPU_TYPE_F32, 0, "i8 -> f32 is not served"},
           Unserved{TUNE_GPU_TYPE_I8, TUNE_GPU_TYPE_I32, TUNE_GPU_EPILOGUE_RELU,
                    "i8 -> i32 with an epilogue is not served"},
           Unserved{TUNE_GPU_TYPE_F16, TUNE_GPU_TYPE_BF16, 0, "f16 -> bf16 is not served"},
           Unserved{TUNE_GPU_TYPE_I32, TUNE_GPU_TYPE_I32, 0, "i32 -> i32 is not served"},
           Unserved{fnuz, TUNE_GPU_TYPE_I32, 0, "fp8e4m3fnuz -> i32 is not served"},
       }) {
    EXPECT_EQ(gemm(p, nullptr, p, u.in, u.out, 1, u.epilogue, 0), TUNE_GPU_UNSUPPORTED) << u.says;
    const std::string error = tune_gpu_last_error();
    EXPECT_NE(error.find(u.says), std::string::npos) << error;
    EXPECT_NE(error.find("serves f32 -> f32, f16 -> f16|f32, bf16 -> bf16|f32, i8 -> i32"),
              std::string::npos)
        << error;
  }
}

TEST(GpuShims, HipblasLtWithoutTheLibraryIsNotFoundNamingItsFile) {
  if (Loadable("libhipblaslt.so") && Loadable("libamdhip64.so")) {
    GTEST_SKIP() << "hipBLASLt is installed here";
  }
  float* p = Dummy();
  // Every form the template builds reaches the library: f16, i8 -> i32 (NN and NT) and the
  // FNUZ fp8 of gfx942 with its scales.
  EXPECT_EQ(tune_hipblaslt_gemm(p, p, nullptr, p, nullptr, nullptr, 16, 16, 16, TUNE_GPU_TYPE_F16,
                                TUNE_GPU_TYPE_F16, 0, 0, 0, nullptr),
            TUNE_GPU_NOT_FOUND);
  const std::string error = tune_gpu_last_error();
  EXPECT_TRUE(error.find("libhipblaslt.so") != std::string::npos ||
              error.find("libamdhip64.so") != std::string::npos)
      << error;
  EXPECT_EQ(tune_hipblaslt_gemm(p, p, nullptr, p, nullptr, nullptr, 16, 16, 16, TUNE_GPU_TYPE_I8,
                                TUNE_GPU_TYPE_I32, 0, 0, 3, nullptr),
            TUNE_GPU_NOT_FOUND);
  EXPECT_EQ(tune_hipblaslt_gemm(p, p, p, p, p, p, 16, 16, 16, TUNE_GPU_TYPE_FP8E5M2FNUZ,
                                TUNE_GPU_TYPE_F32, 1, TUNE_GPU_EPILOGUE_BIAS_RELU, 7, nullptr),
            TUNE_GPU_NOT_FOUND);
  const std::string line = Describe(&tune_hipblaslt_describe);
  EXPECT_NE(line.find("hipBLASLt not loaded yet"), std::string::npos) << line;
  EXPECT_NE(line.find("last error: "), std::string::npos) << line;
  EXPECT_EQ(tune_hipblaslt_describe(nullptr, 8), TUNE_GPU_BAD_ARGUMENT);
}

// tune_miopen_conv2d_typed: NHWC f32, f16, bf16 and i8 -> i32 only; an epilogue, the scaled
// forms and other type pairs are refused before MIOpen is opened, naming what is served.
TEST(GpuShims, MiopenTypedRefusesWhatItDoesNotServeBeforeLoadingAnything) {
  float* p = Dummy();
  auto conv = [&](const void* bias, int64_t H, int32_t in, int32_t out, int32_t epilogue,
                  int32_t algo) {
    return tune_miopen_conv2d_typed(p, p, bias, p, p, p, 1, 8, H, 4, 8, 3, 3, 1, 0, 1, in, out,
                                    epilogue, algo, nullptr);
  };
  const int32_t f16 = TUNE_GPU_TYPE_F16;
  EXPECT_EQ(conv(nullptr, 4, 42, f16, 0, -1), TUNE_GPU_BAD_ARGUMENT);   // no such type
  EXPECT_EQ(conv(nullptr, 2, f16, f16, 0, -1), TUNE_GPU_BAD_ARGUMENT);  // the filter does not fit
  EXPECT_EQ(conv(nullptr, 4, f16, f16, TUNE_GPU_EPILOGUE_BIAS, -1), TUNE_GPU_BAD_ARGUMENT);
  EXPECT_NE(std::string(tune_gpu_last_error()).find("tune_miopen_conv2d_typed"), std::string::npos);

  EXPECT_EQ(conv(p, 4, f16, f16, TUNE_GPU_EPILOGUE_BIAS_RELU, -1), TUNE_GPU_UNSUPPORTED);
  EXPECT_NE(std::string(tune_gpu_last_error()).find("has no bias/ReLU epilogue"),
            std::string::npos);
  struct Unserved {
    int32_t in, out;
    const char* says;
  };
  for (const Unserved& u : {
           Unserved{TUNE_GPU_TYPE_I8, TUNE_GPU_TYPE_F32, "i8 -> f32 is not served (a scaled form"},
           Unserved{TUNE_GPU_TYPE_FP8E4M3FNUZ, TUNE_GPU_TYPE_BF16,
                    "fp8e4m3fnuz -> bf16 is not served (a scaled form"},
           Unserved{TUNE_GPU_TYPE_F16, TUNE_GPU_TYPE_F32,
                    "f16 -> f32 is not served (MIOpen's convolution writes the type it reads)"},
           Unserved{TUNE_GPU_TYPE_TF32, TUNE_GPU_TYPE_F32, "tf32 -> f32 is not served"},
       }) {
    EXPECT_EQ(conv(nullptr, 4, u.in, u.out, 0, -1), TUNE_GPU_UNSUPPORTED) << u.says;
    const std::string error = tune_gpu_last_error();
    EXPECT_NE(error.find(u.says), std::string::npos) << error;
    EXPECT_NE(error.find("serves f32 -> f32, f16 -> f16, bf16 -> bf16 and i8 -> i32"),
              std::string::npos)
        << error;
  }
  EXPECT_EQ(conv(nullptr, 4, TUNE_GPU_TYPE_BF16, TUNE_GPU_TYPE_BF16, 0, 0),
            TUNE_GPU_ALGO_UNSUPPORTED);  // MIOpen runs what its find chose
}

TEST(GpuShims, MiopenTypedWithoutTheLibraryIsNotFoundNamingItsFile) {
  if (Loadable("libMIOpen.so") && Loadable("libamdhip64.so")) {
    GTEST_SKIP() << "MIOpen is installed here";
  }
  float* p = Dummy();
  for (auto [in, out] : {std::pair{TUNE_GPU_TYPE_F16, TUNE_GPU_TYPE_F16},
                         std::pair{TUNE_GPU_TYPE_I8, TUNE_GPU_TYPE_I32}}) {
    EXPECT_EQ(tune_miopen_conv2d_typed(p, p, nullptr, p, nullptr, nullptr, 1, 8, 4, 4, 8, 3, 3, 1,
                                       1, 1, in, out, 0, -1, nullptr),
              TUNE_GPU_NOT_FOUND);
    const std::string error = tune_gpu_last_error();
    EXPECT_TRUE(error.find("libMIOpen.so") != std::string::npos ||
                error.find("libamdhip64.so") != std::string::npos)
        << error;
  }
}

}  // namespace
