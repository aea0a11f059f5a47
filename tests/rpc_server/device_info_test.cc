#include "rpc_server/device_info.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include "common/host_cpu.h"
#include "common/target.h"

namespace tune::rpc {
namespace {

TEST(DeviceInfoTest, CpuIsAcceptedAndGpuKindsAreNotBuiltInYet) {
  EXPECT_TRUE(CheckDeviceKind("cpu").ok());
  for (const char* gpu : {"cuda", "rocm"}) {
    absl::Status s = CheckDeviceKind(gpu);
    EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
    EXPECT_NE(std::string(s.message()).find("not built into this worker yet"), std::string::npos);
  }
  EXPECT_TRUE(absl::IsInvalidArgument(CheckDeviceKind("tpu")));
}

TEST(DeviceInfoTest, DeviceKeyMatchesTheNativeTargetsKey) {
  absl::StatusOr<Target> native = Target::Parse("llvm -mcpu=native");
  ASSERT_TRUE(native.ok()) << native.status();
  EXPECT_EQ(HostCpuDeviceKey(), native->DeviceKey());
  EXPECT_TRUE(HostCpuDeviceKey().starts_with("cpu/x86_64/"));
}

TEST(DeviceInfoTest, CapabilitiesDescribeHostThreadsAndPreloads) {
  std::vector<PreloadedLibrary> preloaded = {{"/opt/lib/libopenblas.so.0", "libopenblas.so.0"}};
  v1::Capabilities caps = HostCpuCapabilities(0, 2, preloaded);
  const HostCpu& cpu = GetHostCpu();
  EXPECT_EQ(caps.cores(), cpu.cores);
  EXPECT_EQ(caps.threads(), cpu.cores) << "0 threads means all cores";
  EXPECT_EQ(caps.capacity(), 2);
  EXPECT_EQ(caps.cpu_name(), cpu.name);
  EXPECT_EQ(caps.features_size(), static_cast<int>(cpu.features.size()));
  ASSERT_EQ(caps.preloaded_libraries_size(), 1);
  EXPECT_EQ(caps.preloaded_libraries(0).basename(), "libopenblas.so.0");
  EXPECT_EQ(caps.pid(), getpid());
  EXPECT_FALSE(caps.hostname().empty());
  EXPECT_TRUE(caps.device_fingerprint().starts_with(HostCpuDeviceKey()))
      << caps.device_fingerprint();
  EXPECT_NE(caps.device_fingerprint().find("preload=libopenblas.so.0"), std::string::npos);
  EXPECT_EQ(HostCpuCapabilities(3, 0, {}).threads(), 3);
  EXPECT_EQ(HostCpuCapabilities(3, 0, {}).capacity(), 1);
}

TEST(DeviceInfoTest, FingerprintChangesWithThreadsAndFeatures) {
  HostCpu cpu;
  cpu.name = "znver4";
  cpu.cores = 8;
  cpu.features = {"avx2", "fma"};
  std::string base = DeviceFingerprint(cpu, 4, {});
  EXPECT_EQ(base.substr(0, base.find(" features=")),
            "cpu/x86_64/znver4 cores=8 threads=4 isa=avx2,fma");
  EXPECT_NE(DeviceFingerprint(cpu, 2, {}), base);
  cpu.features.push_back("avx512f");
  EXPECT_NE(DeviceFingerprint(cpu, 4, {}), base);
}

TEST(PreloadTest, MissingLibraryIsInvalidArgumentNamingThePath) {
  auto loaded = PreloadLibraries({TUNE_TEST_MICROKERNEL, "/nonexistent/libnope.so"});
  ASSERT_FALSE(loaded.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(loaded.status()));
  EXPECT_NE(std::string(loaded.status().message()).find("/nonexistent/libnope.so"),
            std::string::npos);
}

TEST(PreloadTest, LoadedLibrariesKeepTheirOrderAndBasenames) {
  auto loaded = PreloadLibraries({TUNE_TEST_MICROKERNEL});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_EQ((*loaded)[0].path, TUNE_TEST_MICROKERNEL);
  EXPECT_EQ((*loaded)[0].basename, "libtune_test_microkernel.so");
}

TEST(PreloadTest, NeededLibrariesMatchByShortNameOrFileName) {
  std::vector<std::string> have = {"libopenblas.so.0", "libdnnl.so.3"};
  EXPECT_TRUE(IsLibraryPreloaded("openblas", have));
  EXPECT_TRUE(IsLibraryPreloaded("libopenblas.so.0", have));
  EXPECT_TRUE(IsLibraryPreloaded("dnnl", have));
  EXPECT_FALSE(IsLibraryPreloaded("open", have));
  EXPECT_FALSE(IsLibraryPreloaded("mkl", have));
  EXPECT_FALSE(IsLibraryPreloaded("openblas", {}));
}

}  // namespace
}  // namespace tune::rpc
