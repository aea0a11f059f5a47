#include "common/fingerprint.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include "common/host.h"
#include "common/host_cpu.h"

namespace tune {
namespace {

TEST(FingerprintTest, StructuredTextRoundTripsWithQuotedValues) {
  Fingerprint fp("cuda/sm_90");
  fp.Set("gpu", "NVIDIA H200");
  fp.Set("driver", "580.159.04");
  fp.Set("odd", "it's a \\ path");
  fp.Set("lib.cublas", "13.1.0");
  const std::string text = fp.ToString();
  EXPECT_EQ(text,
            "cuda/sm_90 fp=2 gpu='NVIDIA H200' driver=580.159.04 odd='it\\'s a \\\\ path' "
            "lib.cublas=13.1.0");
  Fingerprint back = Fingerprint::Parse(text);
  EXPECT_TRUE(back.structured());
  EXPECT_EQ(back.device_key(), "cuda/sm_90");
  EXPECT_EQ(back.fields(), fp.fields());
  EXPECT_EQ(back.ToString(), text);
}

TEST(FingerprintTest, AFreeTextFingerprintOfEarlierWorkersParsesAsUnstructured) {
  Fingerprint old = Fingerprint::Parse(
      "cuda/sm_90 name='NVIDIA H200' sms=132 mem=139.8GiB driver=13000 preload=libtune_cublas.so");
  EXPECT_FALSE(old.structured());
  EXPECT_EQ(old.Get("name"), "NVIDIA H200");
  EXPECT_EQ(old.Get("driver"), "13000");
  Fingerprint loose = Fingerprint::Parse("some host words");
  EXPECT_EQ(loose.device_key(), "some");
  EXPECT_EQ(loose.Get("text"), "host words");
}

TEST(FingerprintTest, DescribesWhatChangedFieldByField) {
  Fingerprint before("cuda/sm_90");
  before.Set("driver", "575.57.08");
  before.Set("lib.cublas", "13.0.0");
  before.Set("lib.gone", "1");
  Fingerprint after("cuda/sm_90");
  after.Set("driver", "580.159.04");
  after.Set("lib.cublas", "13.0.0");
  after.Set("lib.cudnn", "9.14.0");
  EXPECT_EQ(after.DescribeChangeFrom(before),
            "driver 575.57.08 -> 580.159.04, lib.cudnn new (9.14.0), no longer lib.gone (was 1)");
  EXPECT_EQ(after.DescribeChangeFrom(after), "");
  Fingerprint legacy = Fingerprint::Parse("cuda/sm_90 driver=13000");
  EXPECT_EQ(
      after.DescribeChangeFrom(legacy).rfind("structured (was free text), driver 13000 -> ", 0),
      0u);
}

TEST(FingerprintTest, SettingAnEmptyValueRemovesTheField) {
  Fingerprint fp("cpu/x86_64/znver5");
  fp.Set("microcode", "0x1");
  fp.Set("microcode", "");
  EXPECT_EQ(fp.Get("microcode"), std::nullopt);
  EXPECT_EQ(fp.ToString(), "cpu/x86_64/znver5 fp=2");
}

TEST(HostTest, TheCpuModelAndMicrocodeAreThoseLinuxShows) {
  const HostCpu& cpu = GetHostCpu();
  EXPECT_FALSE(cpu.model.empty()) << "every x86-64 CPU tune runs on has a brand string";
  EXPECT_EQ(cpu.model.front() != ' ' && cpu.model.back() != ' ', true) << cpu.model;
  // Where /proc/cpuinfo has a microcode line, the revision is its value.
  FILE* f = std::fopen("/proc/cpuinfo", "r");
  ASSERT_NE(f, nullptr);
  char line[512];
  std::string shown;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    std::string text = line;
    if (text.rfind("microcode", 0) == 0) {
      shown = text.substr(text.find(':') + 2);
      shown.erase(shown.find_last_not_of("\n") + 1);
      break;
    }
  }
  std::fclose(f);
  EXPECT_EQ(cpu.microcode, shown);
}

TEST(HostTest, ALoadedLibraryNamesTheReleaseInItsResolvedFileName) {
  // libstdc++.so.6 is a link to libstdc++.so.6.0.N on every Debian and Ubuntu.
  const std::string release = LoadedLibraryRelease("libstdc++.so.6");
  EXPECT_EQ(release.rfind("6.0.", 0), 0u) << release;
  EXPECT_EQ(LoadedLibraryRelease("libtune_not_loaded.so.1"), "");
  EXPECT_EQ(LoadedLibraryRelease(""), "");
}

}  // namespace
}  // namespace tune
