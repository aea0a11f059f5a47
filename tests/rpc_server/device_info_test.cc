#include "rpc_server/device_info.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "common/element_type.h"
#include "common/fingerprint.h"
#include "common/host_cpu.h"
#include "common/target.h"

namespace tune::rpc {
namespace {

TEST(DeviceInfoTest, DeviceSpecsParseCpuAndGpuOrdinals) {
  absl::StatusOr<DeviceSpec> cpu = ParseDeviceSpec("cpu");
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ(cpu->kind, TargetKind::kLlvm);
  EXPECT_EQ(cpu->ToString(), "cpu");
  absl::StatusOr<DeviceSpec> cuda = ParseDeviceSpec("cuda:3");
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_EQ(cuda->kind, TargetKind::kCuda);
  EXPECT_EQ(cuda->index, 3);
  absl::StatusOr<DeviceSpec> rocm = ParseDeviceSpec("rocm");
  ASSERT_TRUE(rocm.ok()) << rocm.status();
  EXPECT_EQ(rocm->ToString(), "rocm:0");
}

TEST(DeviceInfoTest, MalformedDeviceSpecsNameTheAcceptedForms) {
  for (const char* bad : {"tpu", "cuda:", "cuda:x", "cuda:-1", "cuda:1234", "gpu:0", "CUDA:0"}) {
    absl::StatusOr<DeviceSpec> s = ParseDeviceSpec(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(s.status())) << s.status();
    EXPECT_NE(std::string(s.status().message()).find("accepted: cpu, cuda:N or rocm:N"),
              std::string::npos)
        << s.status();
  }
}

TEST(DeviceInfoTest, GpuKeyCapabilitiesAndFingerprintComeFromTheDevicesFacts) {
  v1::GpuDevice gpu;
  gpu.set_runtime("cuda");
  gpu.set_index(0);
  gpu.set_name("NVIDIA H100 80GB HBM3");
  gpu.set_arch("sm_90");
  gpu.set_multiprocessors(132);
  gpu.set_total_memory_bytes(int64_t{80} << 30);
  gpu.set_sm_clock_khz(1980000);
  gpu.set_memory_clock_khz(2619000);
  gpu.set_l2_cache_bytes(int64_t{50} << 20);
  gpu.set_driver_version(12040);
  gpu.set_driver_release("580.159.04");
  EXPECT_EQ(GpuDeviceKey(gpu), "cuda/sm_90");
  EXPECT_TRUE(CheckGpuArchSupported(gpu).ok());
  v1::Capabilities caps = GpuCapabilities(gpu, 0, 1, {});
  EXPECT_EQ(caps.gpu().arch(), "sm_90");
  // The dtypes its device-side references make: the float and integer ones, fp8 from sm_89 on.
  EXPECT_EQ(
      std::vector<std::string>(caps.dtypes().begin(), caps.dtypes().end()),
      (std::vector<std::string>{"bf16", "f16", "f32", "fp8e4m3", "fp8e5m2", "i8", "tf32", "u8i8"}));
  gpu.set_arch("sm_80");
  v1::Capabilities ampere = GpuCapabilities(gpu, 0, 1, {});
  EXPECT_EQ(std::vector<std::string>(ampere.dtypes().begin(), ampere.dtypes().end()),
            (std::vector<std::string>{"bf16", "f16", "f32", "i8", "tf32", "u8i8"}));
  EXPECT_EQ(caps.device_fingerprint(),
            "cuda/sm_90 fp=2 gpu='NVIDIA H100 80GB HBM3' sms=132 mem=80.0GiB sm_clock=1980MHz "
            "mem_clock=2619MHz l2=50.0MiB driver=580.159.04 cuda=12.4");
  // The libraries' versions, as the shims reported them, and the preloaded files.
  const std::string with_libraries =
      GpuCapabilities(gpu, 0, 1, {{"/opt/libtune_cublas.so", "libtune_cublas.so"}},
                      {{"cublas", "13.1.0"}, {"cudnn", "9.14.0"}})
          .device_fingerprint();
  EXPECT_THAT(with_libraries, ::testing::EndsWith(" cuda=12.4 preload=libtune_cublas.so "
                                                  "lib.cublas=13.1.0 lib.cudnn=9.14.0"));
  // An upgrade of one library is a new fingerprint, and says what changed.
  const std::string upgraded = GpuDeviceFingerprint(gpu, {}, {{"cublas", "13.2.0"}});
  EXPECT_EQ(Fingerprint::Parse(upgraded).DescribeChangeFrom(
                Fingerprint::Parse(GpuDeviceFingerprint(gpu, {}, {{"cublas", "13.1.0"}}))),
            "lib.cublas 13.1.0 -> 13.2.0");
  // ROCm names HIP's version: hipDriverGetVersion's 60241134 is 6.2.
  gpu.set_runtime("rocm");
  gpu.set_arch("gfx942");
  gpu.set_driver_version(60241134);
  EXPECT_THAT(GpuDeviceFingerprint(gpu, {}), ::testing::EndsWith(" hip=6.2"));
}

TEST(DeviceInfoTest, AnArchTuneDoesNotSupportIsRefusedNamingTheSupportedOnes) {
  v1::GpuDevice gpu;
  gpu.set_runtime("cuda");
  gpu.set_arch("sm_75");
  gpu.set_name("Tesla T4");
  absl::Status s = CheckGpuArchSupported(gpu);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_NE(std::string(s.message()).find("sm_75"), std::string::npos) << s;
  EXPECT_NE(std::string(s.message()).find("supported: sm_80"), std::string::npos) << s;
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
  // A CPU measurement child references every dtype on the host.
  EXPECT_EQ(caps.dtypes_size(), kNumDtypes);
  EXPECT_TRUE(std::is_sorted(caps.dtypes().begin(), caps.dtypes().end()));
}

TEST(DeviceInfoTest, FingerprintChangesWithThreadsAndFeatures) {
  HostCpu cpu;
  cpu.name = "znver4";
  cpu.cores = 8;
  cpu.features = {"avx2", "fma"};
  cpu.model = "AMD EPYC 9654 96-Core Processor";
  cpu.microcode = "0xa101148";
  std::string base = DeviceFingerprint(cpu, 4, {});
  EXPECT_EQ(base.substr(0, base.find(" features=")),
            "cpu/x86_64/znver4 fp=2 cpu='AMD EPYC 9654 96-Core Processor' microcode=0xa101148 "
            "cores=8 threads=4 isa=avx2,fma");
  EXPECT_NE(DeviceFingerprint(cpu, 2, {}), base);
  EXPECT_THAT(DeviceFingerprint(cpu, 4, {}, {{"dnnl", "2.6.3"}, {"openblas", "0.3.21"}}),
              ::testing::EndsWith(" lib.dnnl=2.6.3 lib.openblas=0.3.21"));
  cpu.microcode = "0xa101154";  // a microcode update
  EXPECT_EQ(Fingerprint::Parse(DeviceFingerprint(cpu, 4, {}))
                .DescribeChangeFrom(Fingerprint::Parse(base)),
            "microcode 0xa101148 -> 0xa101154");
  cpu.microcode = "";  // where Linux does not show it, the field is left out
  EXPECT_THAT(DeviceFingerprint(cpu, 4, {}), ::testing::Not(::testing::HasSubstr("microcode")));
  cpu.features.push_back("avx512f");
  EXPECT_NE(DeviceFingerprint(cpu, 4, {}), base);
}

TEST(DeviceInfoTest, FingerprintNamesTheMatrixFeatures) {
  HostCpu cpu;
  cpu.name = "sapphirerapids";
  cpu.cores = 16;
  cpu.features = {"amx-bf16", "amx-int8",   "amx-tile",   "avx2", "avx512bf16",
                  "avx512f",  "avx512fp16", "avx512vnni", "fma"};
  const std::string fingerprint = DeviceFingerprint(cpu, 1, {});
  EXPECT_THAT(fingerprint, ::testing::HasSubstr(" isa=avx2,fma,avx512f,avx512vnni,avx512bf16,"
                                                "avx512fp16,amx-tile,amx-bf16,amx-int8 "));
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
