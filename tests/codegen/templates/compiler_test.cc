#include "codegen/compiler.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/templates/catalog.h"
#include "codegen/templates/conv2d_cpu_direct.h"
#include "codegen/templates/gemm_cpu_blocked.h"
#include "codegen/templates/gemm_gpu_tiled.h"
#include "codegen/tools/tuning_log_lookup.h"
#include "common/files.h"
#include "common/reference.h"
#include "common/version.h"
#include "db/tuning_log.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

Target ParseTarget(const char* text) { return *Target::Parse(text); }
Workload ParseWorkload(const char* text) { return *Workload::Parse(text); }

std::string ReadText(const std::string& path) { return ReadFile(path).value_or(""); }

// A lookup that always answers `choice`.
BestConfigLookup Fixed(std::optional<KernelChoice> choice) {
  return
      [choice](const Workload&, const Target&,
               std::string_view) -> absl::StatusOr<std::optional<KernelChoice>> { return choice; };
}

const Target kTarget = ParseTarget("llvm -mcpu=native -threads=1");
const Workload kGemm = ParseWorkload("gemm:M=33,N=20,K=17");

TEST(CompilerChoose, WithoutALookupTheDefaultConfigIsUsedAndSaidSo) {
  Compiler compiler(Catalog::BuiltIn(), kTarget);
  std::string origin;
  absl::StatusOr<KernelChoice> choice = compiler.Choose({kGemm, "", std::nullopt, ""}, &origin);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->template_name, "gemm.cpu.blocked");
  EXPECT_EQ(choice->config, kGemmCpuBlocked.default_config(kGemm, kTarget));
  EXPECT_FALSE(choice->from_log);
  EXPECT_THAT(origin, HasSubstr("default config"));
}

TEST(CompilerChoose, AValidRecordedConfigIsUsed) {
  Config recorded = kGemmCpuBlocked.default_config(kGemm, kTarget);
  recorded["unroll_k"] = 1;
  recorded["pack_a"] = 0;
  Compiler compiler(Catalog::BuiltIn(), kTarget,
                    Fixed(KernelChoice{"gemm.cpu.blocked", 1, recorded, true}));
  std::string origin;
  absl::StatusOr<KernelChoice> choice = compiler.Choose({kGemm, "", std::nullopt, ""}, &origin);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->config, recorded);
  EXPECT_TRUE(choice->from_log);
  EXPECT_THAT(origin, HasSubstr("tuning log"));
}

TEST(CompilerChoose, AStaleRecordedConfigFallsBackToTheDefault) {
  Config stale = kGemmCpuBlocked.default_config(kGemm, kTarget);
  stale["mr"] = 5;  // not a candidate today
  Compiler compiler(Catalog::BuiltIn(), kTarget,
                    Fixed(KernelChoice{"gemm.cpu.blocked", 1, stale, true}));
  std::string origin;
  absl::StatusOr<KernelChoice> choice = compiler.Choose({kGemm, "", std::nullopt, ""}, &origin);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->config, kGemmCpuBlocked.default_config(kGemm, kTarget));
  EXPECT_FALSE(choice->from_log);
  EXPECT_THAT(origin, HasSubstr("stale"));
}

TEST(CompilerChoose, ARecordOfAnUnknownTemplateFallsBackToTheDefault) {
  Compiler compiler(Catalog::BuiltIn(), kTarget,
                    Fixed(KernelChoice{"gemm.cpu.retired", 3, Config{{"x", 1}}, true}));
  std::string origin;
  absl::StatusOr<KernelChoice> choice = compiler.Choose({kGemm, "", std::nullopt, ""}, &origin);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_EQ(choice->template_name, "gemm.cpu.blocked");
  EXPECT_FALSE(choice->from_log);
  EXPECT_THAT(origin, HasSubstr("gemm.cpu.retired"));
}

TEST(CompilerChoose, AnInvalidGivenConfigIsAnError) {
  Compiler compiler(Catalog::BuiltIn(), kTarget);
  absl::StatusOr<KernelChoice> choice =
      compiler.Choose({kGemm, "", Config{{"mr", 3}}, "gemm.cpu.blocked"});
  ASSERT_FALSE(choice.ok());
  EXPECT_EQ(choice.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CompilerChoose, ALookupErrorIsReturned) {
  Compiler compiler(Catalog::BuiltIn(), kTarget,
                    [](const Workload&, const Target&,
                       std::string_view) -> absl::StatusOr<std::optional<KernelChoice>> {
                      return absl::UnavailableError("database is locked");
                    });
  absl::StatusOr<KernelChoice> choice = compiler.Choose({kGemm, "", std::nullopt, ""});
  EXPECT_EQ(choice.status().code(), absl::StatusCode::kUnavailable);
}

TEST(CompilerArtifact, IsASharedObjectWithAStableContentHash) {
  Compiler compiler(Catalog::BuiltIn(), kTarget);
  Config config = kGemmCpuBlocked.default_config(kGemm, kTarget);
  absl::StatusOr<Artifact> a = compiler.BuildArtifact(kGemm, kGemmCpuBlocked, config, "kern");
  absl::StatusOr<Artifact> b = compiler.BuildArtifact(kGemm, kGemmCpuBlocked, config, "kern");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->format, CodeFormat::kSharedObject);
  EXPECT_EQ(a->code.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_EQ(a->hash, ArtifactHash(CodeFormat::kSharedObject, a->code));
  EXPECT_EQ(a->hash, b->hash);
  EXPECT_EQ(a->entry_symbol, "kern");
  EXPECT_EQ(a->template_name, "gemm.cpu.blocked");
  EXPECT_EQ(a->template_version, kGemmCpuBlocked.version);
  EXPECT_EQ(a->config, ConfigToString(config));
  EXPECT_TRUE(a->needed_libs.empty());
  EXPECT_THAT(a->llvm_ir, HasSubstr("define"));

  Config other = config;
  other["unroll_k"] = config["unroll_k"] == 1 ? 2 : 1;
  absl::StatusOr<Artifact> c = compiler.BuildArtifact(kGemm, kGemmCpuBlocked, other, "kern");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_NE(a->hash, c->hash);
}

TEST(CompilerArtifact, EmitCompilesWhatLowerLoweredIntoTheArtifactBuildArtifactGives) {
  Compiler compiler(Catalog::BuiltIn(), kTarget);
  Config config = kGemmCpuBlocked.default_config(kGemm, kTarget);
  absl::StatusOr<LoweredKernel> kernel = compiler.Lower(kGemm, kGemmCpuBlocked, config, "kern");
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  ASSERT_EQ(kernel->funcs.size(), 1u);
  EXPECT_EQ(kernel->funcs.front().name, "kern");
  EXPECT_EQ(kernel->source.name, "kern");
  EXPECT_TRUE(kernel->constants.empty());
  absl::StatusOr<Artifact> emitted = compiler.Emit(*kernel);
  absl::StatusOr<Artifact> built = compiler.BuildArtifact(kGemm, kGemmCpuBlocked, config, "kern");
  ASSERT_TRUE(emitted.ok()) << emitted.status();
  ASSERT_TRUE(built.ok()) << built.status();
  EXPECT_EQ(emitted->hash, built->hash);
  EXPECT_EQ(emitted->config, built->config);
  EXPECT_EQ(emitted->tolerance_scale, built->tolerance_scale);

  // Prepared weights: the preparation and its size are part of the kernel and of its text.
  const Workload prepared = ParseWorkload("gemm:M=33,N=20,K=17,weights=prepared");
  absl::StatusOr<LoweredKernel> with_prep = compiler.Lower(
      prepared, kGemmCpuBlocked, kGemmCpuBlocked.default_config(prepared, kTarget), "kern");
  ASSERT_TRUE(with_prep.ok()) << with_prep.status();
  ASSERT_EQ(with_prep->funcs.size(), 2u);
  EXPECT_EQ(with_prep->funcs[1].name, "kern_prepare");
  ASSERT_EQ(with_prep->constants.size(), 1u);
  EXPECT_THAT(with_prep->text, HasSubstr("const int64 kern_prepared_floats = "));
  EXPECT_NE(with_prep->text, kernel->text);

  // A GPU kernel becomes PTX the same way.
  const Target cuda = ParseTarget("cuda -arch=sm_80");
  Compiler gpu(Catalog::BuiltIn(), cuda);
  const Config tiled = kGemmGpuTiled.default_config(kGemm, cuda);
  absl::StatusOr<LoweredKernel> device = gpu.Lower(kGemm, kGemmGpuTiled, tiled, "kern");
  ASSERT_TRUE(device.ok()) << device.status();
  absl::StatusOr<Artifact> ptx = gpu.Emit(*device);
  absl::StatusOr<Artifact> ptx_built = gpu.BuildArtifact(kGemm, kGemmGpuTiled, tiled, "kern");
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  ASSERT_TRUE(ptx_built.ok()) << ptx_built.status();
  EXPECT_EQ(ptx->format, CodeFormat::kPtx);
  EXPECT_EQ(ptx->hash, ptx_built->hash);
}

TEST(CompilerArtifact, LowerRefusesAFunctionNameThatIsNotACIdentifier) {
  Compiler compiler(Catalog::BuiltIn(), kTarget);
  absl::StatusOr<LoweredKernel> kernel = compiler.Lower(
      kGemm, kGemmCpuBlocked, kGemmCpuBlocked.default_config(kGemm, kTarget), "9kern");
  EXPECT_EQ(kernel.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(kernel.status().message(), HasSubstr("'9kern' is not a C identifier"));
}

TEST(CompilerArtifact, ParallelKernelsNeedTheOpenMpRuntime) {
  Target threaded = ParseTarget("llvm -mcpu=native -threads=4");
  Compiler compiler(Catalog::BuiltIn(), threaded);
  Workload w = ParseWorkload("gemm:M=256,N=64,K=32");
  absl::StatusOr<Artifact> a = compiler.BuildArtifact(
      w, kGemmCpuBlocked, kGemmCpuBlocked.default_config(w, threaded), "kern");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->needed_libs, ::testing::ElementsAre("libgomp.so.1"));
}

TEST(CompilerArtifact, AConfigOutsideTheSpaceIsInvalidArgument) {
  Compiler compiler(Catalog::BuiltIn(), kTarget);
  absl::StatusOr<Artifact> a =
      compiler.BuildArtifact(kGemm, kGemmCpuBlocked, Config{{"mr", 1}}, "kern");
  EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CompilerLibrary, BuildsOneLibraryAndAHeaderThatDocumentsEachKernel) {
  TempDir dir = TempDir::Create().value();
  Workload conv = ParseWorkload("conv2d:N=1,C=3,H=9,W=9,K=5,R=3,S=3,stride=2,pad=1,epilogue=bias");
  Config recorded = kGemmCpuBlocked.default_config(kGemm, kTarget);
  recorded["pack_a"] = 0;
  Compiler compiler(Catalog::BuiltIn(), kTarget,
                    [&](const Workload& w, const Target&,
                        std::string_view) -> absl::StatusOr<std::optional<KernelChoice>> {
                      if (w == kGemm) {
                        return KernelChoice{"gemm.cpu.blocked", 1, recorded, true};
                      }
                      return std::nullopt;
                    });
  absl::StatusOr<LibraryResult> result =
      compiler.BuildLibrary({{kGemm, "", std::nullopt, ""}, {conv, "my_conv", std::nullopt, ""}},
                            dir.File("libk.so"), dir.File("k.h"));
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->kernels.size(), 2u);
  EXPECT_TRUE(result->kernels[0].choice.from_log);
  EXPECT_FALSE(result->kernels[1].choice.from_log);

  std::string header = ReadText(dir.File("k.h"));
  EXPECT_THAT(header, HasSubstr("int tune_gemm_M33_N20_K17(const float* A, const float* B, "
                                "float* C);"));
  EXPECT_THAT(header, HasSubstr("int my_conv(const float* input, const float* weight, "
                                "const float* bias, float* output);"));
  EXPECT_THAT(header, HasSubstr(ConfigToString(recorded)));
  EXPECT_THAT(header, HasSubstr("config source: the tuning log"));
  EXPECT_THAT(header, HasSubstr("config source: default config"));
  EXPECT_THAT(header, HasSubstr("NCHW"));
  EXPECT_THAT(header, HasSubstr("extern \"C\""));

  // Both kernels are exported and compute the reference.
  void* handle = dlopen(dir.File("libk.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto* gemm =
      reinterpret_cast<int (*)(void*, void*, void*)>(dlsym(handle, "tune_gemm_M33_N20_K17"));
  ASSERT_NE(gemm, nullptr);
  TensorSet tensors(kGemm, 1);
  std::vector<void*> args = tensors.AbiPointers();
  EXPECT_EQ(gemm(args[0], args[1], args[2]), 0);
  std::vector<float> want(tensors.output_size());
  RunReference(kGemm, tensors.InputPointers(), want.data());
  CompareResult gemm_cmp = CompareOutputs(kGemm, tensors.output(), want.data(), want.size());
  EXPECT_TRUE(gemm_cmp.ok) << gemm_cmp.message;

  auto* my_conv = reinterpret_cast<int (*)(void*, void*, void*, void*)>(dlsym(handle, "my_conv"));
  ASSERT_NE(my_conv, nullptr);
  TensorSet conv_tensors(conv, 2);
  std::vector<void*> conv_args = conv_tensors.AbiPointers();
  ASSERT_EQ(conv_args.size(), 4u) << "input, weight, bias, output";
  EXPECT_EQ(my_conv(conv_args[0], conv_args[1], conv_args[2], conv_args[3]), 0);
  std::vector<float> conv_want(conv_tensors.output_size());
  RunReference(conv, conv_tensors.InputPointers(), conv_want.data());
  CompareResult conv_cmp =
      CompareOutputs(conv, conv_tensors.output(), conv_want.data(), conv_want.size());
  EXPECT_TRUE(conv_cmp.ok) << conv_cmp.message;
  dlclose(handle);
}

TEST(CompilerLibrary, DuplicateOrInvalidFunctionNamesAreInvalidArgument) {
  TempDir dir = TempDir::Create().value();
  Compiler compiler(Catalog::BuiltIn(), kTarget);
  absl::StatusOr<LibraryResult> twice =
      compiler.BuildLibrary({{kGemm, "", std::nullopt, ""}, {kGemm, "", std::nullopt, ""}},
                            dir.File("l.so"), dir.File("l.h"));
  EXPECT_EQ(twice.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(twice.status().message()), HasSubstr("tune_gemm_M33_N20_K17"));
  absl::StatusOr<LibraryResult> bad = compiler.BuildLibrary({{kGemm, "9lives", std::nullopt, ""}},
                                                            dir.File("l.so"), dir.File("l.h"));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir.File("l.so")));
}

// A kernel on prepared weights comes with its preparation and the size of what it writes, and
// the header says how to call them: Winograd's transformed filters, and a copy for a template
// that reads the canonical layout.
TEST(CompilerLibrary, KernelsOnPreparedWeightsExportTheirPreparationAndComputeTheReference) {
  TempDir dir = TempDir::Create().value();
  const Workload conv = ParseWorkload(
      "conv2d:N=1,C=16,H=8,W=8,K=32,R=3,S=3,stride=1,pad=1,epilogue=bias,weights=prepared");
  const Workload gemm = kGemm.WithWeightForm(WeightForm::kPrepared);
  Compiler compiler(Catalog::BuiltIn(), kTarget);
  absl::StatusOr<LibraryResult> result = compiler.BuildLibrary(
      {{conv, "wino", std::nullopt, "conv2d.cpu.winograd"}, {gemm, "", std::nullopt, ""}},
      dir.File("libp.so"), dir.File("p.h"));
  ASSERT_TRUE(result.ok()) << result.status();
  const std::string header = ReadText(dir.File("p.h"));
  EXPECT_THAT(header, HasSubstr("#include <stdint.h>"));
  EXPECT_THAT(header, HasSubstr("extern const int64_t wino_prepared_floats;\n"
                                "int wino_prepare(const float* weight, float* prepared_weight);\n"
                                "int wino(const float* input, const float* prepared_weight, "
                                "const float* bias, float* output);"));
  EXPECT_THAT(header, HasSubstr("int tune_gemm_M33_N20_K17_prepared(const float* A, "
                                "const float* prepared_B, float* C);"));
  EXPECT_THAT(header, HasSubstr("call wino_prepare(weight, prepared_weight) once"));

  void* handle = dlopen(dir.File("libp.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  for (const LibraryKernel& k : result->kernels) {
    const std::string& name = k.func_name;
    const Workload& workload = k.workload;
    const auto* floats =
        static_cast<const int64_t*>(dlsym(handle, PreparedFloatsName(name).c_str()));
    auto* prepare =
        reinterpret_cast<int (*)(void*, void*)>(dlsym(handle, PrepareFunctionName(name).c_str()));
    void* kernel = dlsym(handle, name.c_str());
    ASSERT_NE(floats, nullptr) << name;
    ASSERT_NE(prepare, nullptr) << name;
    ASSERT_NE(kernel, nullptr) << name;
    TensorSet tensors(workload, 3);
    std::vector<void*> args = tensors.AbiPointers();
    const int64_t weights = workload.Arguments()[1].NumElements();
    if (name == "wino") {
      EXPECT_GT(*floats, weights) << "F(m,3) transforms 3x3 filters into (m+2)^2 points";
    } else {
      EXPECT_EQ(*floats, weights) << "a copy";
    }
    std::vector<float> prepared(static_cast<size_t>(*floats));
    ASSERT_EQ(prepare(args[1], prepared.data()), 0) << name;
    args[1] = prepared.data();
    const int rc = args.size() == 3 ? reinterpret_cast<int (*)(void*, void*, void*)>(kernel)(
                                          args[0], args[1], args[2])
                                    : reinterpret_cast<int (*)(void*, void*, void*, void*)>(kernel)(
                                          args[0], args[1], args[2], args[3]);
    ASSERT_EQ(rc, 0) << name;
    std::vector<float> want(tensors.output_size());
    RunReference(workload, tensors.InputPointers(), want.data());
    const double tolerance = TemplateTolerance(
        *Catalog::BuiltIn().FindTemplate(k.choice.template_name), workload, k.choice.config);
    CompareResult cmp =
        CompareOutputs(workload, tensors.output(), want.data(), want.size(), tolerance);
    EXPECT_TRUE(cmp.ok) << name << ": " << cmp.message;
  }
  dlclose(handle);
}

TEST(CompilerLibrary, PreparedWeightsOnAGpuTargetOrAPreparationNameTakenAreRefused) {
  TempDir dir = TempDir::Create().value();
  const Workload gemm = kGemm.WithWeightForm(WeightForm::kPrepared);
  Compiler gpu(Catalog::BuiltIn(), ParseTarget("cuda -arch=sm_90"));
  absl::StatusOr<LibraryResult> on_gpu =
      gpu.BuildLibrary({{gemm, "", std::nullopt, ""}}, dir.File("g.so"), dir.File("g.h"));
  EXPECT_EQ(on_gpu.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(on_gpu.status().message()),
              HasSubstr("weights=prepared is built for llvm (CPU) targets"));
  // `k` on prepared weights brings k_prepare, which another kernel may not be called.
  Compiler cpu(Catalog::BuiltIn(), kTarget);
  absl::StatusOr<LibraryResult> taken =
      cpu.BuildLibrary({{gemm, "k", std::nullopt, ""}, {kGemm, "k_prepare", std::nullopt, ""}},
                       dir.File("c.so"), dir.File("c.h"));
  EXPECT_EQ(taken.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(taken.status().message()), HasSubstr("'k_prepare' is used twice"));
  EXPECT_FALSE(fs::exists(dir.File("g.so")));
  EXPECT_FALSE(fs::exists(dir.File("c.so")));
}

TEST(CompilerLibrary, AGpuTargetBuildsAHostLibraryTakingAStream) {
  // (tests/codegen/gpu_library_test.cc checks GPU libraries in detail.)
  TempDir dir = TempDir::Create().value();
  Compiler compiler(Catalog::BuiltIn(), ParseTarget("cuda -arch=sm_90"));
  absl::StatusOr<LibraryResult> r =
      compiler.BuildLibrary({{kGemm, "", std::nullopt, ""}}, dir.File("l.so"), dir.File("l.h"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->needed_libs, std::vector<std::string>{"libtune_gpurt.so"});
  EXPECT_THAT(ReadFile(dir.File("l.h")).value_or(""),
              HasSubstr("(const float* A, const float* B, float* C, void* stream);"));
}

TEST(CompilerLibrary, AnUnwritableOutputLeavesNothingBehind) {
  TempDir dir = TempDir::Create().value();
  Compiler compiler(Catalog::BuiltIn(), kTarget);
  absl::StatusOr<LibraryResult> r = compiler.BuildLibrary(
      {{kGemm, "", std::nullopt, ""}}, dir.File("l.so"), dir.File("missing/dir/l.h"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("missing/dir/l.h"));
  EXPECT_FALSE(fs::exists(dir.File("l.so")));
}

// A successful record in a real tuning log.
Record MakeRecord(const Workload& w, const Target& target, const std::string& tpl, int version,
                  const Config& config, double secs) {
  Record r;
  r.workload = w.ToString();
  r.target = target.Resolved().ToString();
  r.device_key = target.DeviceKey();
  r.template_name = tpl;
  r.template_version = version;
  r.config = ConfigToString(config);
  r.measurement.round_secs = {secs, secs};
  r.measurement.number = 1;
  r.tune_version = kTuneVersion;
  r.llvm_version = kLlvmVersion;
  r.worker = "test";
  return r;
}

TEST(TuningLogLookup, PicksTheFastestRecordOfTheCurrentTemplateVersion) {
  TempDir dir = TempDir::Create().value();
  auto log = TuningLog::Open(dir.File("tuning.db"));
  ASSERT_TRUE(log.ok()) << log.status();
  Config fast = kGemmCpuBlocked.default_config(kGemm, kTarget);
  fast["unroll_k"] = 1;
  Config slow = fast;
  slow["pack_b"] = 0;
  Config old = fast;
  old["order"] = 3;
  int v = kGemmCpuBlocked.version;
  ASSERT_TRUE(
      (*log)->CommitRecord(MakeRecord(kGemm, kTarget, "gemm.cpu.blocked", v, slow, 2e-3)).ok());
  ASSERT_TRUE(
      (*log)->CommitRecord(MakeRecord(kGemm, kTarget, "gemm.cpu.blocked", v, fast, 1e-3)).ok());
  // Faster, but measured with an older (stale) template version: not preferred.
  ASSERT_GE(v, 1);
  ASSERT_TRUE(
      (*log)->CommitRecord(MakeRecord(kGemm, kTarget, "gemm.cpu.blocked", v - 1, old, 1e-4)).ok());

  BestConfigLookup lookup =
      TuningLogLookup(std::shared_ptr<TuningLog>(std::move(*log)), Catalog::BuiltIn());
  absl::StatusOr<std::optional<KernelChoice>> got = lookup(kGemm, kTarget, "");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->config, fast);
  EXPECT_EQ((*got)->template_version, v);

  absl::StatusOr<std::optional<KernelChoice>> none =
      lookup(ParseWorkload("gemm:M=1,N=2,K=3"), kTarget, "");
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->has_value());
}

TEST(TuningLogLookup, FallsBackToAnyVersionWhenTheCurrentOneHasNoRecord) {
  TempDir dir = TempDir::Create().value();
  auto log = TuningLog::Open(dir.File("tuning.db"));
  ASSERT_TRUE(log.ok()) << log.status();
  Config old = kGemmCpuBlocked.default_config(kGemm, kTarget);
  old["order"] = 2;
  // Only a record of an older (stale) template version.
  ASSERT_GE(kGemmCpuBlocked.version, 1);
  ASSERT_TRUE((*log)
                  ->CommitRecord(MakeRecord(kGemm, kTarget, "gemm.cpu.blocked",
                                            kGemmCpuBlocked.version - 1, old, 1e-3))
                  .ok());
  Compiler compiler(
      Catalog::BuiltIn(), kTarget,
      TuningLogLookup(std::shared_ptr<TuningLog>(std::move(*log)), Catalog::BuiltIn()));
  std::string origin;
  absl::StatusOr<KernelChoice> choice = compiler.Choose({kGemm, "", std::nullopt, ""}, &origin);
  ASSERT_TRUE(choice.ok()) << choice.status();
  EXPECT_TRUE(choice->from_log);
  EXPECT_EQ(choice->config, old);
  EXPECT_EQ(choice->template_version, kGemmCpuBlocked.version);
  EXPECT_THAT(origin, HasSubstr("template version"));
}

TEST(TuningLogLookup, OnAGpuTargetGraphTimedRecordsWinAndAnEventsFallbackIsSaid) {
  const Target gpu = ParseTarget("cuda -arch=sm_90");
  const Workload w = ParseWorkload("gemm:M=64,N=64,K=64");
  auto record = [&](const std::string& config, double secs, GpuClock clock) {
    absl::StatusOr<Config> c = ParseConfig(config);
    EXPECT_TRUE(c.ok()) << c.status();
    Record r = MakeRecord(w, gpu, "gemm.gpu.tiled", kGemmGpuTiled.version, *c, secs);
    r.measurement.gpu_clock = clock;
    return r;
  };
  TempDir dir = TempDir::Create().value();
  auto log = TuningLog::Open(dir.File("tuning.db"));
  ASSERT_TRUE(log.ok()) << log.status();
  std::shared_ptr<TuningLog> shared(std::move(*log));
  BestConfigLookup lookup = TuningLogLookup(shared, Catalog::BuiltIn());
  // Only a record timed call by call: it answers, and the note says it is a fallback.
  ASSERT_TRUE(shared->CommitRecord(record(R"({"bm":16})", 1e-5, GpuClock::kEvents)).ok());
  absl::StatusOr<std::optional<KernelChoice>> got = lookup(w, gpu, "");
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status();
  EXPECT_EQ((*got)->config, ParseConfig(R"({"bm":16})").value());
  EXPECT_THAT((*got)->note, HasSubstr("FALLBACK: no record timed by graph replay"));
  // A graph-timed record wins over the faster events reading, with no fallback said.
  ASSERT_TRUE(shared->CommitRecord(record(R"({"bm":32})", 2e-5, GpuClock::kGraph)).ok());
  got = lookup(w, gpu, "");
  ASSERT_TRUE(got.ok() && got->has_value()) << got.status();
  EXPECT_EQ((*got)->config, ParseConfig(R"({"bm":32})").value());
  EXPECT_THAT((*got)->note, Not(HasSubstr("FALLBACK")));
}

}  // namespace
}  // namespace tune
