// libtune_gpurt.so (runtime/tune_gpurt.h) without a GPU: argument checks, the driver that is
// not there, and the thread-local error text.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "runtime/tune_gpurt.h"

namespace {

constexpr char kPtx[] =
    ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry noop()\n{\nret;\n}\n";

tune_gpurt_module Module(int32_t api) {
  return tune_gpurt_module{TUNE_GPURT_ABI_VERSION, api, kPtx, sizeof kPtx, nullptr};
}

int32_t Launch(tune_gpurt_module* module, const char* name = "noop") {
  const uint32_t grid[3] = {1, 1, 1};
  const uint32_t block[3] = {1, 1, 1};
  return tune_gpurt_launch(module, name, grid, block, 0, nullptr, nullptr, 0);
}

// Points the runtime at a driver file that exists nowhere, for one test.
class MissingDriver {
 public:
  MissingDriver() { setenv("TUNE_GPURT_DRIVER", "libtune_test_missing_driver.so", 1); }
  ~MissingDriver() { unsetenv("TUNE_GPURT_DRIVER"); }
};

TEST(GpuRuntime, AMissingDriverIsDriverNotFoundNamingIt) {
  MissingDriver missing;
  tune_gpurt_module cuda = Module(TUNE_GPURT_API_CUDA);
  EXPECT_EQ(Launch(&cuda), TUNE_GPURT_ERROR_DRIVER_NOT_FOUND);
  EXPECT_NE(std::string(tune_gpurt_last_error()).find("CUDA driver library not found"),
            std::string::npos)
      << tune_gpurt_last_error();
  EXPECT_NE(std::string(tune_gpurt_last_error()).find("libtune_test_missing_driver.so"),
            std::string::npos)
      << tune_gpurt_last_error();

  tune_gpurt_module hip = Module(TUNE_GPURT_API_HIP);
  EXPECT_EQ(Launch(&hip), TUNE_GPURT_ERROR_DRIVER_NOT_FOUND);
  EXPECT_NE(std::string(tune_gpurt_last_error()).find("HIP runtime library not found"),
            std::string::npos)
      << tune_gpurt_last_error();
  EXPECT_EQ(cuda.state, nullptr) << "nothing was loaded";
}

TEST(GpuRuntime, ALibraryOfAnotherAbiVersionIsABadArgumentNamingBoth) {
  tune_gpurt_module module = Module(TUNE_GPURT_API_CUDA);
  module.abi_version = TUNE_GPURT_ABI_VERSION + 1;
  EXPECT_EQ(Launch(&module), TUNE_GPURT_ERROR_BAD_ARGUMENT);
  EXPECT_NE(std::string(tune_gpurt_last_error()).find("ABI version"), std::string::npos)
      << tune_gpurt_last_error();
}

TEST(GpuRuntime, AnUnknownApiOrNullArgumentIsABadArgument) {
  tune_gpurt_module module = Module(7);
  EXPECT_EQ(Launch(&module), TUNE_GPURT_ERROR_BAD_ARGUMENT);
  EXPECT_NE(std::string(tune_gpurt_last_error()).find("unknown GPU api 7"), std::string::npos);
  EXPECT_EQ(Launch(nullptr), TUNE_GPURT_ERROR_BAD_ARGUMENT);
  tune_gpurt_module cuda = Module(TUNE_GPURT_API_CUDA);
  EXPECT_EQ(Launch(&cuda, nullptr), TUNE_GPURT_ERROR_BAD_ARGUMENT);
}

TEST(GpuRuntime, ZeroingChecksItsArgumentsAndNeedsTheDriverToo) {
  tune_gpurt_module cuda = Module(TUNE_GPURT_API_CUDA);
  float* fake = reinterpret_cast<float*>(uintptr_t{0x1000});
  EXPECT_EQ(tune_gpurt_zero(nullptr, fake, 64, nullptr), TUNE_GPURT_ERROR_BAD_ARGUMENT);
  EXPECT_EQ(tune_gpurt_zero(&cuda, fake, 6, nullptr), TUNE_GPURT_ERROR_BAD_ARGUMENT);
  EXPECT_NE(std::string(tune_gpurt_last_error()).find("multiple of 4 (got 6)"), std::string::npos)
      << tune_gpurt_last_error();
  EXPECT_EQ(tune_gpurt_zero(&cuda, nullptr, 64, nullptr), TUNE_GPURT_ERROR_BAD_ARGUMENT);
  MissingDriver missing;
  EXPECT_EQ(tune_gpurt_zero(&cuda, fake, 64, nullptr), TUNE_GPURT_ERROR_DRIVER_NOT_FOUND);
  EXPECT_NE(std::string(tune_gpurt_last_error()).find("CUDA driver library not found"),
            std::string::npos)
      << tune_gpurt_last_error();
}

TEST(GpuRuntime, TheErrorTextBelongsToTheCallingThread) {
  tune_gpurt_module module = Module(7);
  EXPECT_EQ(Launch(&module), TUNE_GPURT_ERROR_BAD_ARGUMENT);
  std::string other = "unset";
  std::thread([&] { other = tune_gpurt_last_error(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_NE(std::string(tune_gpurt_last_error()), "");
}

}  // namespace
