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

// tune_gpurt_launch_ex of `module` with a 4 x 2 grid, the given cluster and maps over the three
// pointer arguments of a kernel (device pointers 256-byte aligned, as cuMemAlloc gives them).
class LaunchEx {
 public:
  int32_t operator()(tune_gpurt_module* module, const uint32_t* cluster,
                     const tune_gpurt_tensor_map* maps, int32_t num_maps) {
    const uint32_t grid[3] = {4, 2, 1};
    const uint32_t block[3] = {128, 1, 1};
    return tune_gpurt_launch_ex(module, "noop", grid, block, cluster, 0, nullptr, args_, 3, maps,
                                num_maps);
  }

 private:
  void* pointers_[3] = {reinterpret_cast<void*>(uintptr_t{0x10000}),
                        reinterpret_cast<void*>(uintptr_t{0x20000}),
                        reinterpret_cast<void*>(uintptr_t{0x30000})};
  void* args_[3] = {&pointers_[0], &pointers_[1], &pointers_[2]};
};

tune_gpurt_tensor_map HalfTiles(uint32_t arg) {
  tune_gpurt_tensor_map map{};
  map.struct_bytes = TUNE_GPURT_TENSOR_MAP_BYTES;
  map.arg = arg;
  map.element_bytes = 2;
  map.rank = 2;
  map.dims[0] = 256;
  map.dims[1] = 64;
  map.strides[0] = 512;
  map.box[0] = 64;
  map.box[1] = 16;
  map.swizzle_bytes = 128;
  return map;
}

std::string LastError() { return tune_gpurt_last_error(); }

TEST(GpuRuntimeLaunchEx, WithoutClusterOrMapsItIsThePlainLaunch) {
  MissingDriver missing;
  tune_gpurt_module cuda = Module(TUNE_GPURT_API_CUDA);
  const uint32_t one[3] = {1, 1, 1};
  EXPECT_EQ(LaunchEx()(&cuda, one, nullptr, 0), TUNE_GPURT_ERROR_DRIVER_NOT_FOUND);
  EXPECT_NE(LastError().find("CUDA driver library not found"), std::string::npos) << LastError();
  tune_gpurt_module hip = Module(TUNE_GPURT_API_HIP);
  EXPECT_EQ(LaunchEx()(&hip, nullptr, nullptr, 0), TUNE_GPURT_ERROR_DRIVER_NOT_FOUND)
      << "a HIP library without clusters or maps launches as before";
}

TEST(GpuRuntimeLaunchEx, ClustersAndTensorMapsAreCudaOnly) {
  tune_gpurt_module hip = Module(TUNE_GPURT_API_HIP);
  const uint32_t pair[3] = {2, 1, 1};
  EXPECT_EQ(LaunchEx()(&hip, pair, nullptr, 0), TUNE_GPURT_ERROR_BAD_ARGUMENT);
  EXPECT_NE(LastError().find("CUDA-only"), std::string::npos) << LastError();
  const tune_gpurt_tensor_map map = HalfTiles(0);
  EXPECT_EQ(LaunchEx()(&hip, nullptr, &map, 1), TUNE_GPURT_ERROR_BAD_ARGUMENT);
  EXPECT_NE(LastError().find("CUDA-only"), std::string::npos) << LastError();
}

TEST(GpuRuntimeLaunchEx, BadClustersAndMapsAreRefusedBeforeTheDriverIsOpened) {
  MissingDriver missing;  // reaching the driver would be DRIVER_NOT_FOUND
  tune_gpurt_module cuda = Module(TUNE_GPURT_API_CUDA);
  const uint32_t three[3] = {3, 1, 1};
  EXPECT_EQ(LaunchEx()(&cuda, three, nullptr, 0), TUNE_GPURT_ERROR_BAD_ARGUMENT);
  EXPECT_NE(LastError().find("'noop': cluster.x = 3 does not divide grid.x = 4"), std::string::npos)
      << LastError();

  tune_gpurt_tensor_map map = HalfTiles(1);
  map.strides[0] = 520;
  EXPECT_EQ(LaunchEx()(&cuda, nullptr, &map, 1), TUNE_GPURT_ERROR_BAD_ARGUMENT);
  EXPECT_NE(LastError().find("'noop': tensor map over argument 1"), std::string::npos)
      << LastError();
  EXPECT_NE(LastError().find("strides[0] = 520 bytes is not a multiple of 16"), std::string::npos)
      << LastError();

  map = HalfTiles(3);
  EXPECT_EQ(LaunchEx()(&cuda, nullptr, &map, 1), TUNE_GPURT_ERROR_BAD_ARGUMENT);
  EXPECT_NE(LastError().find("argument 3 is not one of the kernel's 3 arguments"),
            std::string::npos)
      << LastError();

  map = HalfTiles(0);
  map.struct_bytes = TUNE_GPURT_TENSOR_MAP_BYTES + 16;  // a later version's descriptor
  EXPECT_EQ(LaunchEx()(&cuda, nullptr, &map, 1), TUNE_GPURT_ERROR_BAD_ARGUMENT);
  EXPECT_NE(LastError().find("176-byte descriptor (map 0: 176 bytes), this libtune_gpurt.so "
                             "reads 112-byte (version 1) and 160-byte (version 2) ones"),
            std::string::npos)
      << LastError();

  // A version 1 descriptor (an older tune-compile's library) is read: its own fault is named.
  map = HalfTiles(3);
  map.struct_bytes = TUNE_GPURT_TENSOR_MAP_V1_BYTES;
  EXPECT_EQ(LaunchEx()(&cuda, nullptr, &map, 1), TUNE_GPURT_ERROR_BAD_ARGUMENT);
  EXPECT_NE(LastError().find("argument 3 is not one of the kernel's 3 arguments"),
            std::string::npos)
      << LastError();

  EXPECT_EQ(LaunchEx()(&cuda, nullptr, nullptr, 2), TUNE_GPURT_ERROR_BAD_ARGUMENT);
}

TEST(GpuRuntimeLaunchEx, GoodMapsGetAsFarAsTheDriver) {
  MissingDriver missing;
  tune_gpurt_module cuda = Module(TUNE_GPURT_API_CUDA);
  const tune_gpurt_tensor_map maps[2] = {HalfTiles(0), HalfTiles(2)};
  const uint32_t pair[3] = {2, 2, 1};
  EXPECT_EQ(LaunchEx()(&cuda, pair, maps, 2), TUNE_GPURT_ERROR_DRIVER_NOT_FOUND) << LastError();
}

}  // namespace
