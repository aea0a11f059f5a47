// Catalogs as values: what the names of a target's -libs= and of templates mean to one program,
// with no process state between them.
#include "codegen/templates/catalog.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

Catalog WithExampleUkernel() {
  absl::StatusOr<std::vector<ExternKernel>> kernels =
      LoadExternKernels({TUNE_EXAMPLE_UKERNEL_MANIFEST});
  EXPECT_TRUE(kernels.ok()) << kernels.status();
  return Catalog().WithExternKernels(kernels.ok() ? *std::move(kernels)
                                                  : std::vector<ExternKernel>{});
}

TEST(CatalogTest, ParsingATargetChecksSyntaxAndTheCatalogSaysWhichLibrariesExist) {
  EXPECT_TRUE(Target::Parse("llvm -libs=example_ukernel").ok());
  absl::StatusOr<Target> unknown = Catalog().ParseTarget("llvm -libs=example_ukernel");
  ASSERT_TRUE(absl::IsInvalidArgument(unknown.status())) << unknown.status();
  EXPECT_THAT(unknown.status().message(),
              HasSubstr("library 'example_ukernel' is not available for llvm targets (accepted: "
                        "dnnl, openblas)"));
  EXPECT_TRUE(WithExampleUkernel().ParseTarget("llvm -libs=example_ukernel,dnnl").ok());
}

TEST(CatalogTest, ALibraryOfAnotherKindIsNamedAsSuch) {
  absl::Status s = Catalog().ParseTarget("cuda -arch=sm_90 -libs=dnnl").status();
  ASSERT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("dnnl is a library of llvm targets"));
  EXPECT_THAT(s.message(), HasSubstr("accepted forms"));
}

TEST(CatalogTest, ATargetNamesOneMicroKernelAtMost) {
  const Catalog one = WithExampleUkernel();
  ASSERT_EQ(one.extern_kernels().size(), 1u);
  ExternKernel second = one.extern_kernels().front();
  second.name = "second_ukernel";
  const Catalog two = Catalog().WithExternKernels({one.extern_kernels().front(), second});
  absl::Status s = two.ParseTarget("llvm -libs=example_ukernel,second_ukernel").status();
  ASSERT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("a target may name one"));
}

TEST(CatalogTest, CopiesAreIndependentValues) {
  const Catalog built_in;
  const Catalog with_ukernel = WithExampleUkernel();
  const Target target = *Target::Parse("llvm -mcpu=haswell -libs=example_ukernel");
  const Workload gemm = *Workload::Parse("gemm:M=64,N=64,K=64");
  EXPECT_EQ(built_in.FindExternKernel("example_ukernel"), nullptr);
  ASSERT_NE(with_ukernel.FindExternKernel("example_ukernel"), nullptr);
  const KernelTemplate* ukernel = with_ukernel.FindTemplate("gemm.cpu.ukernel");
  ASSERT_NE(ukernel, nullptr);
  EXPECT_THAT(with_ukernel.TemplatesFor(gemm, target), Contains(ukernel));
  EXPECT_THAT(built_in.TemplatesFor(gemm, target),
              Not(Contains(built_in.FindTemplate("gemm.cpu.ukernel"))));
  std::optional<TemplateLibrary> lib = with_ukernel.LibraryOf(*ukernel, target);
  ASSERT_TRUE(lib.has_value());
  EXPECT_EQ(lib->file, "libtune_example_ukernel.so");
  EXPECT_EQ(with_ukernel.sources().extern_kernel_manifests.size(), 1u);
}

TEST(CatalogTest, ATemplateNotOfferedIsFoundOnlyByName) {
  KernelTemplate hidden = *Catalog::BuiltIn().FindTemplate("gemm.cpu.blocked");
  hidden.name = "test.hidden";
  hidden.offered = false;
  const Catalog catalog = Catalog().WithTemplates({&hidden});
  const Workload gemm = *Workload::Parse("gemm:M=64,N=64,K=64");
  const Target cpu = *Target::Parse("llvm -mcpu=haswell");
  EXPECT_EQ(catalog.FindTemplate("test.hidden", TargetKind::kLlvm, OpKind::kGemm), &hidden);
  EXPECT_EQ(catalog.FindTemplate("test.hidden", TargetKind::kLlvm, OpKind::kConv2d), nullptr);
  EXPECT_THAT(catalog.TemplatesFor(gemm, cpu), Not(Contains(&hidden)));
  EXPECT_EQ(Catalog::BuiltIn().FindTemplate("test.hidden"), nullptr);
  ASSERT_EQ(catalog.sources().extra_templates.size(), 1u);
}

TEST(CatalogTest, AFamilyCannotTakeATemplatesName) {
  auto family =
      std::make_shared<KernelTemplate>(*Catalog::BuiltIn().FindTemplate("gemm.cpu.blocked"));
  absl::StatusOr<Catalog> taken = Catalog().WithFamilies({{family, "/opt/plugin"}});
  ASSERT_TRUE(absl::IsInvalidArgument(taken.status())) << taken.status();
  EXPECT_THAT(taken.status().message(),
              HasSubstr("codegen plugin /opt/plugin: family 'gemm.cpu.blocked': the name is taken "
                        "by a built-in template"));
  family->name = "plugin.gemm";
  absl::StatusOr<Catalog> added = Catalog().WithFamilies({{family, "/opt/plugin"}});
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->FindTemplate("plugin.gemm"), family.get());
  EXPECT_EQ(added->SourceOf(*family), "/opt/plugin");
  EXPECT_EQ(added->sources().codegen_plugins, std::vector<std::string>{"/opt/plugin"});
  absl::StatusOr<Catalog> again = added->WithFamilies({{family, "/opt/other"}});
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.status().message(), HasSubstr("the name is taken by /opt/plugin"));
}

}  // namespace
}  // namespace tune
