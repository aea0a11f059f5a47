// Extern micro-kernel manifests: the worked example loads, and every kind of bad manifest is
// refused naming the file, the field and the form. (A catalog's use of them:
// tests/codegen/templates/catalog_test.cc.)
#include "common/extern_kernels.h"

#include <elf.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/files.h"
#include "nlohmann/json.hpp"

namespace tune {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

class ExternKernelsTest : public ::testing::Test {
 protected:
  // The example manifest with `edit` applied, written beside a copy of the example library.
  std::string Manifest(const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = nlohmann::json::parse(ReadFile(TUNE_EXAMPLE_UKERNEL_MANIFEST).value());
    edit(j);
    std::filesystem::copy_file(TUNE_EXAMPLE_UKERNEL_LIBRARY,
                               dir_.File("libtune_example_ukernel.so"),
                               std::filesystem::copy_options::overwrite_existing);
    const std::string path = dir_.File("manifest.json");
    std::ofstream(path) << j.dump(2);
    return path;
  }
  absl::Status Refused(const std::function<void(nlohmann::json&)>& edit) {
    absl::StatusOr<ExternKernel> k = LoadExternKernel(Manifest(edit));
    EXPECT_TRUE(absl::IsInvalidArgument(k.status())) << k.status();
    return k.status();
  }
  TempDir dir_ = TempDir::Create("tune-extern-kernels-test-").value();
};

TEST_F(ExternKernelsTest, TheExampleManifestLoadsWithItsLibraryBesideIt) {
  absl::StatusOr<ExternKernel> k = LoadExternKernel(TUNE_EXAMPLE_UKERNEL_MANIFEST);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->name, "example_ukernel");
  EXPECT_EQ(k->symbol, "example_sgemm_ukernel");
  EXPECT_EQ(k->mr, 8);
  EXPECT_EQ(k->nr, 32);
  EXPECT_EQ(k->isa, "avx2");
  EXPECT_EQ(k->library_file, "libtune_example_ukernel.so");
  EXPECT_EQ(std::filesystem::path(k->library_path),
            std::filesystem::path(TUNE_EXAMPLE_UKERNEL_LIBRARY).lexically_normal());
}

TEST_F(ExternKernelsTest, ManifestsLoadSortedByName) {
  const std::string other = Manifest([](nlohmann::json& j) { j["name"] = "another_ukernel"; });
  absl::StatusOr<std::vector<ExternKernel>> kernels =
      LoadExternKernels({TUNE_EXAMPLE_UKERNEL_MANIFEST, other});
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  ASSERT_EQ(kernels->size(), 2u);
  EXPECT_EQ((*kernels)[0].name, "another_ukernel");
  EXPECT_EQ((*kernels)[1].name, "example_ukernel");
}

TEST_F(ExternKernelsTest, TwoManifestsOfOneNameAreRefused) {
  absl::Status s =
      LoadExternKernels({TUNE_EXAMPLE_UKERNEL_MANIFEST, Manifest([](auto&) {})}).status();
  ASSERT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("'example_ukernel' is defined by both"));
}

TEST_F(ExternKernelsTest, AMissingFieldIsNamed) {
  EXPECT_THAT(Refused([](nlohmann::json& j) { j.erase("symbol"); }).message(),
              AllOf(HasSubstr("manifest.json"), HasSubstr("\"symbol\" is missing"),
                    HasSubstr("a manifest has the form")));
}

TEST_F(ExternKernelsTest, AnUnknownFieldIsNamed) {
  EXPECT_THAT(Refused([](nlohmann::json& j) { j["mR"] = 8; }).message(),
              HasSubstr("\"mR\" is not a manifest field"));
}

TEST_F(ExternKernelsTest, AnUnknownIsaIsNamedWithTheAcceptedOnes) {
  EXPECT_THAT(Refused([](nlohmann::json& j) { j["isa"] = "neon"; }).message(),
              HasSubstr("\"isa\" 'neon' is unknown (accepted: avx2, avx512f)"));
}

TEST_F(ExternKernelsTest, ABlockSizeOutOfRangeIsRefused) {
  EXPECT_THAT(Refused([](nlohmann::json& j) { j["nr"] = 0; }).message(),
              HasSubstr("\"nr\" is not an integer in [1, 64]"));
  EXPECT_THAT(Refused([](nlohmann::json& j) { j["mr"] = "8"; }).message(),
              HasSubstr("\"mr\" is not an integer"));
}

TEST_F(ExternKernelsTest, ASymbolTheLibraryLacksIsRefused) {
  EXPECT_THAT(Refused([](nlohmann::json& j) {
                j["symbol"] = "no_such_kernel";
                j["signature"] =
                    "void no_such_kernel(int64_t kc, const float* a, const float* b, float* c, "
                    "int64_t ldc, int32_t accumulate)";
              }).message(),
              HasSubstr("'no_such_kernel' is not a function that"));
}

TEST_F(ExternKernelsTest, ASignatureThatIsNotTheRolesIsRefusedShowingTheRightOne) {
  EXPECT_THAT(Refused([](nlohmann::json& j) {
                j["signature"] =
                    "void example_sgemm_ukernel(int kc, const float* a, const float* b, "
                    "float* c, int64_t ldc, int32_t accumulate)";
              }).message(),
              AllOf(HasSubstr("is not the gemm_block signature"), HasSubstr("int64_t kc")));
  // Spacing and parameter names do not matter.
  EXPECT_TRUE(LoadExternKernel(Manifest([](nlohmann::json& j) {
                j["signature"] =
                    "void  example_sgemm_ukernel( int64_t, const float *x, "
                    "const float* y,float*z, int64_t n, int32_t acc )";
              })).ok());
}

TEST_F(ExternKernelsTest, ALibraryThatIsNotASharedObjectIsRefused) {
  std::string path = Manifest([](nlohmann::json& j) { j["library"] = "not-a-library.so"; });
  std::ofstream(dir_.File("not-a-library.so")) << "plain text, not ELF";
  absl::StatusOr<ExternKernel> k = LoadExternKernel(path);
  ASSERT_TRUE(absl::IsInvalidArgument(k.status()));
  EXPECT_THAT(k.status().message(),
              AllOf(HasSubstr("\"library\""), HasSubstr("not a 64-bit ELF shared object")));
  EXPECT_THAT(Refused([](nlohmann::json& j) { j["library"] = "/nonexistent/libx.so"; }).message(),
              HasSubstr("/nonexistent/libx.so"));
}

TEST_F(ExternKernelsTest, AnElfWhoseTablesLieOutsideTheFileOrMisalignedIsRefusedUnread) {
  const std::string library = ReadFile(TUNE_EXAMPLE_UKERNEL_LIBRARY).value();
  Elf64_Ehdr header;
  std::memcpy(&header, library.data(), sizeof(header));
  const uint64_t table_size = uint64_t{header.e_shnum} * sizeof(Elf64_Shdr);
  auto check = [&](std::string bytes, std::string_view what) {
    const std::string path = dir_.File("patched.so");
    std::ofstream(path, std::ios::binary) << bytes;
    absl::StatusOr<bool> defined = ElfDefinesSymbol(path, "example_sgemm_ukernel");
    ASSERT_TRUE(absl::IsInvalidArgument(defined.status())) << what << ": " << defined.status();
    EXPECT_THAT(defined.status().message(), HasSubstr("malformed ELF")) << what;
  };
  auto with_shoff = [&](uint64_t shoff) {
    Elf64_Ehdr patched = header;
    patched.e_shoff = shoff;
    std::string bytes = library;
    std::memcpy(bytes.data(), &patched, sizeof(patched));
    return bytes;
  };
  // e_shoff + the table's size wraps around to 64: it used to pass, and the table was read
  // from before the file's first byte.
  check(with_shoff(0 - table_size + 64), "section table offset wrapping around");
  check(with_shoff(header.e_shoff - 4), "misaligned section table");
  // The same for the symbol table's own offset.
  std::string bytes = library;
  for (int i = 0; i < header.e_shnum; ++i) {
    Elf64_Shdr section;
    const size_t at = header.e_shoff + i * sizeof(Elf64_Shdr);
    std::memcpy(&section, bytes.data() + at, sizeof(section));
    if (section.sh_type == SHT_DYNSYM) {
      section.sh_offset = 0 - section.sh_size + 8;
      std::memcpy(bytes.data() + at, &section, sizeof(section));
    }
  }
  check(bytes, "symbol table offset wrapping around");
}

TEST_F(ExternKernelsTest, ANameOfABuiltInLibraryIsRefused) {
  EXPECT_THAT(Refused([](nlohmann::json& j) { j["name"] = "dnnl"; }).message(),
              HasSubstr("a library tune has a shim for"));
  EXPECT_THAT(Refused([](nlohmann::json& j) { j["name"] = "Bad-Name"; }).message(),
              HasSubstr("[a-z][a-z0-9_]*"));
}

TEST_F(ExternKernelsTest, NotJsonIsRefusedNamingTheFile) {
  const std::string path = dir_.File("broken.json");
  std::ofstream(path) << "{ not json";
  absl::StatusOr<ExternKernel> k = LoadExternKernel(path);
  ASSERT_TRUE(absl::IsInvalidArgument(k.status()));
  EXPECT_THAT(k.status().message(), AllOf(HasSubstr(path), HasSubstr("not a JSON object")));
}

}  // namespace
}  // namespace tune
