#include "tuner/scheduler/job_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/host_cpu.h"
#include "tests/fault/fault_templates.h"

namespace tune::tuner {
namespace {

using ::testing::HasSubstr;

v1::JobSpec Valid() {
  v1::JobSpec spec;
  spec.set_workload("gemm:K=64,M=64,N=64");
  spec.set_target("llvm -mcpu=native -threads=1");
  spec.set_trials(8);
  return spec;
}

std::string ErrorOf(const v1::JobSpec& spec, ValidationOptions options = {}) {
  absl::StatusOr<ValidatedJob> job = ValidateJobSpec(spec, options);
  EXPECT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(job.status().message());
}

TEST(ValidateJobSpecTest, ACpuThatLlvmDoesNotKnowIsRefusedWithoutEchoingAPath) {
  v1::JobSpec path = Valid();
  path.set_target("llvm -mcpu=/tmp/evil.so -threads=1");
  std::string error = ErrorOf(path);
  EXPECT_THAT(error, HasSubstr("spec.target: -mcpu="));
  EXPECT_THAT(error, HasSubstr("accepted form: native or an LLVM x86-64 CPU name"));
  EXPECT_THAT(error, ::testing::Not(HasSubstr("/tmp/evil.so")));
  v1::JobSpec unknown = Valid();
  unknown.set_target("llvm -mcpu=pentium9 -threads=1");
  EXPECT_THAT(ErrorOf(unknown), HasSubstr("-mcpu=pentium9 is not an x86-64 CPU that LLVM"));
  for (const char* known : {"haswell", "znver4", "sapphirerapids", "x86-64"}) {
    v1::JobSpec spec = Valid();
    spec.set_target(std::string("llvm -mcpu=") + known + " -threads=1");
    EXPECT_TRUE(ValidateJobSpec(spec, {}).ok()) << known;
  }
}

TEST(ValidateJobSpecTest, CanonicalizesAndResolvesNativeToTheDaemonHost) {
  absl::StatusOr<ValidatedJob> job = ValidateJobSpec(Valid(), {});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_EQ(job->spec.workload, "gemm:M=64,N=64,K=64");
  EXPECT_EQ(job->spec.target, "llvm -mcpu=" + GetHostCpu().name + " -threads=1");
  EXPECT_EQ(job->spec.device_key, "cpu/x86_64/" + GetHostCpu().name);
  EXPECT_EQ(job->spec.strategy, "auto");
  EXPECT_EQ(job->spec.seed, 1u);
  ASSERT_FALSE(job->templates.empty());
  EXPECT_EQ(job->templates.front()->op, OpKind::kGemm);
}

TEST(ValidateJobSpecTest, NamesTheWorkloadFieldForBadWorkloads) {
  for (std::string workload : {"", "matmul:M=1,N=1,K=1", "gemm:M=0,N=64,K=64",
                               "gemm:M=-4,N=64,K=64", "gemm:M=64,N=64", "gemm M=64"}) {
    v1::JobSpec spec = Valid();
    spec.set_workload(workload);
    EXPECT_THAT(ErrorOf(spec), HasSubstr("spec.workload")) << workload;
  }
}

TEST(ValidateJobSpecTest, RejectsUnknownAndUnsupportedTargets) {
  v1::JobSpec spec = Valid();
  spec.set_target("fpga -speed=11");
  EXPECT_THAT(ErrorOf(spec), HasSubstr("spec.target"));
  spec.set_target("cuda -arch=sm_75");
  EXPECT_THAT(ErrorOf(spec), HasSubstr("sm_80, sm_86, sm_89, sm_90"));
}

TEST(ValidateJobSpecTest, RejectsBadBudgetStrategyPriorityAndTiming) {
  v1::JobSpec spec = Valid();
  spec.set_trials(0);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("spec.trials"));
  spec.set_trials(-3);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("spec.trials"));
  spec = Valid();
  spec.set_strategy("annealing");
  EXPECT_THAT(ErrorOf(spec), HasSubstr("accepted: grid, random, ga, xgb, auto, seeds"));
  spec = Valid();
  spec.set_priority(kMaxPriority + 1);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("spec.priority"));
  spec = Valid();
  spec.mutable_timing()->set_repeat(-1);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("spec.timing"));
  spec = Valid();
  spec.mutable_timing()->set_max_repeat(-2);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("timing.max_repeat = -2 is not valid; expected >= 0"));
  spec = Valid();
  spec.mutable_timing()->set_target_ci(1.5);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("timing.target_ci = 1.5 is not valid"));
  spec = Valid();
  spec.set_early_stopping(-1);
  EXPECT_THAT(ErrorOf(spec), HasSubstr("spec.early_stopping"));
}

TEST(ValidateJobSpecTest, PreparedWeightsAreTunedOnCpuTargetsAndRefusedOnGpuOnesSayingWhy) {
  v1::JobSpec spec = Valid();
  spec.set_workload("conv2d:N=1,C=64,H=14,W=14,K=64,R=3,S=3,stride=1,pad=1,weights=prepared");
  absl::StatusOr<ValidatedJob> job = ValidateJobSpec(spec, {});
  ASSERT_TRUE(job.ok()) << job.status();
  EXPECT_TRUE(job->workload.prepared_weights());
  spec.set_target("cuda -arch=sm_90");
  std::string error = ErrorOf(spec);
  EXPECT_THAT(error, HasSubstr("spec.workload"));
  EXPECT_THAT(error, HasSubstr("weights=prepared is built for llvm (CPU) targets"));
  EXPECT_THAT(error, HasSubstr("weights=canonical"));
}

TEST(ValidateJobSpecTest, Fp8OnSm80IsRefusedAtSubmitNamingTheFieldTheTargetAndTheAccepted) {
  v1::JobSpec spec = Valid();
  spec.set_workload("gemm:M=64,N=64,K=64,layout=NT,dtype=fp8e4m3");
  spec.set_target("cuda -arch=sm_80");
  std::string error = ErrorOf(spec);
  EXPECT_THAT(error, HasSubstr("spec.workload: dtype=fp8e4m3 is not run on 'cuda -arch=sm_80'"));
  EXPECT_THAT(error, HasSubstr("accepted there: f32|tf32|f16|bf16|i8|u8i8"));
}

TEST(ValidateJobSpecTest, ADtypeWithNoTemplateYetSaysWhichFormsTheTemplatesThereBuild) {
  v1::JobSpec spec = Valid();
  // gfx90a runs i8, and conv2d.rocm.mfma convolves it in NHWC; no template there takes NCHW.
  spec.set_workload("conv2d:N=1,C=16,H=8,W=8,K=16,R=3,S=3,stride=1,pad=1,dtype=i8");
  spec.set_target("rocm -mcpu=gfx90a");
  std::string error = ErrorOf(spec);
  EXPECT_THAT(error, HasSubstr("spec.workload: no template builds dtype=i8 for conv2d on "
                               "'rocm -mcpu=gfx90a' yet; templates there build dtype="));
  EXPECT_THAT(error, HasSubstr("in layout=NCHW or layout=NHWC"));
}

TEST(ValidateJobSpecTest, ARequantisingGemmWhereNoTemplateRequantisesIsRefusedSayingSo) {
  v1::JobSpec spec = Valid();
  spec.set_workload("gemm:M=64,N=64,K=64,layout=NT,dtype=i8,epilogue=requant");
  spec.set_target("cuda -arch=sm_90");
  std::string error = ErrorOf(spec);
  EXPECT_THAT(error, HasSubstr("spec.workload: no template builds dtype=i8, layout=NT, "
                               "epilogue=requant for gemm on 'cuda -arch=sm_90' yet"));
  EXPECT_THAT(error, HasSubstr("none with epilogue=requant"));
  spec.set_target("llvm -mcpu=znver4");
  EXPECT_TRUE(ValidateJobSpec(spec, {}).ok()) << "gemm.cpu.dot requantises";
}

TEST(ValidateJobSpecTest, AWinogradTemplateOnALayerItDoesNotFitIsRefusedSayingWhy) {
  v1::JobSpec spec = Valid();
  spec.set_workload("conv2d:N=1,C=64,H=56,W=56,K=256,R=1,S=1,stride=1,pad=0,layout=NCHW16c");
  spec.add_templates("conv2d.cpu.winograd");
  std::string error = ErrorOf(spec);
  EXPECT_THAT(error, HasSubstr("spec.templates"));
  EXPECT_THAT(error, HasSubstr("R=1,S=1"));
  EXPECT_THAT(error, HasSubstr("R=3,S=3,stride=1,dilation=1"));
  spec.set_workload("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=2,pad=1,layout=NCHW16c");
  EXPECT_THAT(ErrorOf(spec), HasSubstr("stride=2"));
  spec.set_workload("conv2d:N=1,C=3,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1");
  EXPECT_THAT(ErrorOf(spec), HasSubstr("layout=NCHW with C and K multiples of 4"));
  spec.set_workload("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1");
  ASSERT_TRUE(ValidateJobSpec(spec, {}).ok());
  // A template of the other layout is refused naming the layouts it builds.
  spec.clear_templates();
  spec.add_templates("conv2d.cpu.blocked");
  EXPECT_THAT(ErrorOf(spec), HasSubstr("layout=NCHW4c|NCHW8c|NCHW16c"));
  spec.clear_templates();
  spec.add_templates("conv2d.cpu.winograd");
  spec.set_workload("conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1,layout=NCHW16c");
  absl::StatusOr<ValidatedJob> job = ValidateJobSpec(spec, {});
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->templates.size(), 1u);
  EXPECT_EQ(job->templates.front()->name, "conv2d.cpu.winograd");
}

TEST(ValidateJobSpecTest, FaultTemplatesExistOnlyInACatalogThatHasThem) {
  v1::JobSpec spec = Valid();
  spec.add_templates(std::string(kFaultCrashTemplate));
  EXPECT_THAT(ErrorOf(spec), HasSubstr("spec.templates"));
  absl::StatusOr<ValidatedJob> job =
      ValidateJobSpec(spec, {.catalog = Catalog().WithTemplates(FaultTemplates())});
  ASSERT_TRUE(job.ok()) << job.status();
  ASSERT_EQ(job->templates.size(), 1u);
  EXPECT_EQ(job->templates.front()->name, kFaultCrashTemplate);
}

}  // namespace
}  // namespace tune::tuner
