// Kernel libraries with shape ranges (Compiler::BuildLibrary with KernelRequest::range): the
// kernels chosen for the range's sizes, the header, and the entry point answering every size of
// the range through libtune_range.so, checked against the reference.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <map>

#include "codegen/compiler.h"
#include "codegen/templates/catalog.h"
#include "common/files.h"
#include "common/reference.h"
#include "common/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

using ::testing::HasSubstr;

const Target kTarget = *Target::Parse("llvm -mcpu=native -threads=1");

// A lookup that answers, for a range's measured sizes, the default config of the size with
// the given median; other sizes have no record.
struct FakeLog {
  std::map<std::string, double> medians;  // workload text -> seconds
  BestConfigLookup Lookup() const {
    return [this](const Workload& w, const Target& target,
                  std::string_view) -> absl::StatusOr<std::optional<KernelChoice>> {
      auto it = medians.find(w.ToString());
      if (it == medians.end()) {
        return std::optional<KernelChoice>();
      }
      const KernelTemplate* tpl = Catalog::BuiltIn().TemplatesFor(w, target).front();
      return std::optional<KernelChoice>(KernelChoice{std::string(tpl->name), tpl->version,
                                                      tpl->default_config(w, target), true,
                                                      "measured", it->second});
    };
  }
  MeasuredSizesLookup Sizes() const {
    return [this](const ShapeRange& range, const Target&) -> absl::StatusOr<std::vector<int64_t>> {
      std::vector<int64_t> sizes;
      for (const auto& [text, secs] : medians) {
        if (int64_t s = range.SizeOf(*Workload::Parse(text)); s > 0) {
          sizes.push_back(s);
        }
      }
      return sizes;
    };
  }
};

// Calls the range entry at `size` (its arguments from TensorSet) and compares with the
// reference; "" when it matches.
std::string CheckSize(void* entry, const ShapeRange& range, int64_t size) {
  const Workload w = range.At(size);
  TensorSet tensors(w, static_cast<uint64_t>(size));
  std::vector<void*> args = tensors.AbiPointers();
  int32_t rc = -1;
  switch (args.size()) {
    case 3:
      rc = reinterpret_cast<int32_t (*)(int64_t, void*, void*, void*)>(entry)(size, args[0],
                                                                              args[1], args[2]);
      break;
    case 4:
      rc = reinterpret_cast<int32_t (*)(int64_t, void*, void*, void*, void*)>(entry)(
          size, args[0], args[1], args[2], args[3]);
      break;
    default:
      return StrCat(args.size(), " arguments: not handled by the test");
  }
  if (rc != 0) {
    return StrCat("size ", size, ": returned ", rc);
  }
  std::vector<uint32_t> want(tensors.output_size() * 2);
  RunReference(w, tensors.Inputs(), want.data());
  CompareResult cmp = CompareOutputs(w, tensors.output_data(), want.data(), tensors.output_size());
  return cmp.ok ? "" : StrCat("size ", size, ": ", cmp.message);
}

struct Built {
  explicit Built(TempDir d) : dir(std::move(d)) {}
  TempDir dir;
  LibraryResult result;
  void* handle = nullptr;
  ~Built() {
    if (handle != nullptr) {
      dlclose(handle);
    }
  }
};

std::unique_ptr<Built> Build(const std::string& text, const FakeLog& log) {
  auto built = std::make_unique<Built>(*TempDir::Create("tune-range-test-"));
  Compiler compiler(Catalog::BuiltIn(), kTarget, log.Lookup());
  compiler.SetMeasuredSizes(log.Sizes());
  ShapeRange range = *ShapeRange::Parse(text);
  KernelRequest request{range.At(range.hi()), "ranged", std::nullopt, "", range};
  absl::StatusOr<LibraryResult> result =
      compiler.BuildLibrary({request}, built->dir.File("libr.so"), built->dir.File("r.h"));
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) {
    return nullptr;
  }
  built->result = *std::move(result);
  built->handle = dlopen(built->dir.File("libr.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(built->handle, nullptr) << dlerror();
  return built;
}

TEST(RangeLibrary, AGemmRangeOverMAnswersEverySizeFromKernelsAtTheMeasuredSizesAndBetween) {
  FakeLog log{{{"gemm:M=4,N=24,K=40", 1e-6}, {"gemm:M=32,N=24,K=40", 4e-6}}};
  std::unique_ptr<Built> built = Build("gemm:M=1..40,N=24,K=40", log);
  ASSERT_NE(built, nullptr);
  ASSERT_EQ(built->result.ranges.size(), 1u);
  const LibraryRange& r = built->result.ranges[0];
  EXPECT_TRUE(built->result.kernels.empty());
  EXPECT_EQ(r.measured, (std::vector<int64_t>{4, 32}));
  std::vector<int64_t> sizes;
  for (const LibraryKernel& k : r.kernels) {
    sizes.push_back(r.range.SizeOf(k.workload));
    EXPECT_EQ(k.func_name, StrCat("ranged__M", sizes.back()));
  }
  EXPECT_EQ(sizes,
            (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40}));
  EXPECT_THAT(r.kernels[4].origin, HasSubstr("measured at M=4"));    // 5: nearest is 4
  EXPECT_THAT(r.kernels[14].origin, HasSubstr("measured at M=32"));  // 28
  EXPECT_THAT(built->result.needed_libs, ::testing::Contains("libtune_range.so"));

  const std::string header = *ReadFile(built->dir.File("r.h"));
  EXPECT_THAT(header,
              HasSubstr("int ranged(int64_t M, const float* A, const float* B, float* C);"));
  EXPECT_THAT(header, HasSubstr("A: float[M][40]"));
  EXPECT_THAT(header, HasSubstr("tuned at 4, 32"));
  EXPECT_THAT(header, HasSubstr("tune_range_flush_recording"));

  void* entry = dlsym(built->handle, "ranged");
  ASSERT_NE(entry, nullptr);
  for (int64_t size = 1; size <= 40; ++size) {
    EXPECT_EQ(CheckSize(entry, r.range, size), "");
  }
  // Outside the range: refused, nothing computed.
  auto call = reinterpret_cast<int32_t (*)(int64_t, void*, void*, void*)>(entry);
  std::vector<float> a(41 * 40), b(40 * 24), c(41 * 24);
  EXPECT_EQ(call(41, a.data(), b.data(), c.data()), -20);
  EXPECT_EQ(call(0, a.data(), b.data(), c.data()), -20);
  auto last_error =
      reinterpret_cast<const char* (*)()>(dlsym(built->handle, "tune_range_last_error"));
  ASSERT_NE(last_error, nullptr);
  EXPECT_THAT(last_error(), HasSubstr("gemm:M=1..40,N=24,K=40"));
}

TEST(RangeLibrary, RangesOverAReductionOrAColumnDimensionPadWithZeros) {
  for (const char* text :
       {"gemm:M=9,N=17,K=3..37,epilogue=bias_relu", "gemm:M=9,N=2..37,K=17,epilogue=bias"}) {
    SCOPED_TRACE(text);
    std::unique_ptr<Built> built = Build(text, FakeLog{});
    ASSERT_NE(built, nullptr);
    const ShapeRange& range = built->result.ranges[0].range;
    EXPECT_TRUE(built->result.ranges[0].measured.empty());
    EXPECT_THAT(built->result.ranges[0].kernels[0].origin, HasSubstr("default config"));
    void* entry = dlsym(built->handle, "ranged");
    ASSERT_NE(entry, nullptr);
    for (int64_t size = range.lo(); size <= range.hi(); ++size) {
      EXPECT_EQ(CheckSize(entry, range, size), "");
    }
  }
}

TEST(RangeLibrary, AConvolutionRangesOverItsBatch) {
  std::unique_ptr<Built> built =
      Build("conv2d:N=1..9,C=8,H=6,W=6,K=8,R=3,S=3,stride=1,pad=1,epilogue=bias", FakeLog{});
  ASSERT_NE(built, nullptr);
  const ShapeRange& range = built->result.ranges[0].range;
  void* entry = dlsym(built->handle, "ranged");
  ASSERT_NE(entry, nullptr);
  for (int64_t size = 1; size <= 9; ++size) {
    EXPECT_EQ(CheckSize(entry, range, size), "");
  }
}

// A GPU range library: built and loaded without a GPU, its entry answers what needs no device
// (a size outside the range), and a size that needs a padded copy asks the GPU runtime for
// device memory (which reports the missing driver here).
TEST(RangeLibrary, AGpuRangeEntryTakesTheStreamAndCopiesThroughTheGpuRuntime) {
  TempDir dir = *TempDir::Create("tune-range-test-");
  Compiler compiler(Catalog::BuiltIn(), *Target::Parse("cuda -arch=sm_90"));
  const ShapeRange range = *ShapeRange::Parse("gemm:M=8,N=2..12,K=64");
  absl::StatusOr<LibraryResult> result = compiler.BuildLibrary(
      {{range.At(12), "ranged", std::nullopt, "", range}}, dir.File("libg.so"), dir.File("g.h"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(result->needed_libs, ::testing::Contains("libtune_range.so"));
  EXPECT_THAT(result->needed_libs, ::testing::Contains("libtune_gpurt.so"));
  EXPECT_THAT(result->llvm_ir, HasSubstr("@tune_gpurt_device_memory"));
  EXPECT_THAT(*ReadFile(dir.File("g.h")),
              HasSubstr("int ranged(int64_t N, const float* A, const float* B, float* C, "
                        "void* stream);"));
  void* handle = dlopen(dir.File("libg.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto entry =
      reinterpret_cast<int32_t (*)(int64_t, void*, void*, void*, void*)>(dlsym(handle, "ranged"));
  ASSERT_NE(entry, nullptr);
  int dummy[4];
  EXPECT_EQ(entry(13, dummy, dummy, dummy, nullptr), -20);  // TUNE_RANGE_ERROR_OUT_OF_RANGE
  if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD) == nullptr &&
      access("/dev/nvidiactl", F_OK) != 0) {
    // N=9 runs padded to the kernel at 10: the copy's allocation needs the driver.
    EXPECT_EQ(entry(9, dummy, dummy, dummy, nullptr), -21);  // TUNE_RANGE_ERROR_NO_MEMORY
    auto last_error = reinterpret_cast<const char* (*)()>(dlsym(handle, "tune_range_last_error"));
    ASSERT_NE(last_error, nullptr);
    EXPECT_THAT(last_error(), HasSubstr("libcuda"));
  }
  dlclose(handle);
}

TEST(RangeLibrary, ARangeTakesNoGivenConfig) {
  Compiler compiler(Catalog::BuiltIn(), kTarget);
  ShapeRange range = *ShapeRange::Parse("gemm:M=1..8,N=8,K=8");
  KernelRequest request{range.At(8), "r", Config{}, "", range};
  TempDir dir = *TempDir::Create("tune-range-test-");
  absl::StatusOr<LibraryResult> result =
      compiler.BuildLibrary({request}, dir.File("l.so"), dir.File("l.h"));
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("not --config"));
}

}  // namespace
}  // namespace tune
