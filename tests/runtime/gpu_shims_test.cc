// The GPU shims without a GPU: bad arguments are refused before anything is loaded, a missing
// vendor library is TUNE_GPU_NOT_FOUND with a message naming its file, describe lines say what
// was (not) loaded, and the epilogue kernel's hand-written PTX assembles for sm_80.
#include <dlfcn.h>
#include <sys/wait.h>

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

}  // namespace
