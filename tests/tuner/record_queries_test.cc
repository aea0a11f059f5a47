// QueryBest and ExportRecords requests checked and translated into the log's queries
// (tuner/record_queries.h), without a daemon.
#include "tuner/daemon/record_queries.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/host_cpu.h"

namespace tune::tuner {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

v1::QueryBestRequest ValidBest() {
  v1::QueryBestRequest request;
  request.set_workload("gemm:K=64,M=64,N=64");
  request.set_target("llvm -mcpu=znver4 -threads=1");
  return request;
}

std::string ErrorOf(const v1::QueryBestRequest& request) {
  absl::StatusOr<ValidatedBestQuery> valid = ValidateQueryBest(request);
  EXPECT_FALSE(valid.ok());
  EXPECT_EQ(valid.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(valid.status().message());
}

std::string ErrorOf(const v1::ExportRecordsRequest& request) {
  absl::StatusOr<ValidatedExport> valid = ValidateExportRecords(request);
  EXPECT_FALSE(valid.ok());
  EXPECT_EQ(valid.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(valid.status().message());
}

TEST(QueryBestRequestTest, CanonicalizesTheWorkloadAndTheTarget) {
  v1::QueryBestRequest request = ValidBest();
  request.set_target("llvm -threads=1 -mcpu=znver4");
  request.set_flush_cache(true);
  absl::StatusOr<ValidatedBestQuery> valid = ValidateQueryBest(request);
  ASSERT_TRUE(valid.ok()) << valid.status();
  EXPECT_EQ(valid->query.workload, "gemm:M=64,N=64,K=64");
  EXPECT_EQ(valid->query.target, "llvm -mcpu=znver4 -threads=1");
  EXPECT_EQ(valid->query.device_key, "cpu/x86_64/znver4");
  EXPECT_TRUE(valid->query.flush_cache);
  EXPECT_FALSE(valid->query.template_name.has_value());
  EXPECT_FALSE(valid->query.template_version.has_value());
  EXPECT_FALSE(valid->query.tune_version.has_value());
  EXPECT_EQ(valid->top_k, 1);
}

TEST(QueryBestRequestTest, NativeTargetIsResolvedToTheDaemonHost) {
  v1::QueryBestRequest request = ValidBest();
  request.set_target("llvm -mcpu=native -threads=1");
  absl::StatusOr<ValidatedBestQuery> valid = ValidateQueryBest(request);
  ASSERT_TRUE(valid.ok()) << valid.status();
  EXPECT_EQ(valid->query.target, "llvm -mcpu=" + GetHostCpu().name + " -threads=1");
  EXPECT_EQ(valid->query.device_key, "cpu/x86_64/" + GetHostCpu().name);
}

TEST(QueryBestRequestTest, DeviceKeyAloneAsksForEveryTargetOnTheDeviceWithoutCacheState) {
  v1::QueryBestRequest request = ValidBest();
  request.clear_target();
  request.set_device_key("cuda/sm_90");
  request.set_flush_cache(true);
  absl::StatusOr<ValidatedBestQuery> valid = ValidateQueryBest(request);
  ASSERT_TRUE(valid.ok()) << valid.status();
  EXPECT_EQ(valid->query.device_key, "cuda/sm_90");
  EXPECT_EQ(valid->query.target, "");
  EXPECT_FALSE(valid->query.flush_cache);
}

TEST(QueryBestRequestTest, BothOrNeitherOfDeviceKeyAndTargetIsRefusedNamingBoth) {
  v1::QueryBestRequest both = ValidBest();
  both.set_device_key("cpu/x86_64/znver4");
  EXPECT_THAT(ErrorOf(both), StartsWith("device_key, target: set exactly one"));
  v1::QueryBestRequest neither = ValidBest();
  neither.clear_target();
  EXPECT_THAT(ErrorOf(neither), StartsWith("device_key, target: set exactly one"));
}

TEST(QueryBestRequestTest, BadWorkloadIsRefusedNamingTheField) {
  for (std::string workload : {"", "matmul:M=1,N=1,K=1", "gemm:M=0,N=64,K=64", "gemm M=64"}) {
    v1::QueryBestRequest request = ValidBest();
    request.set_workload(workload);
    EXPECT_THAT(ErrorOf(request), StartsWith("workload: ")) << workload;
  }
}

TEST(QueryBestRequestTest, BadTargetIsRefusedNamingTheField) {
  for (std::string target :
       {"fpga -speed=11", "llvm -mcpu=znver4 -threads=0", "llvm -libs=no-pe"}) {
    v1::QueryBestRequest request = ValidBest();
    request.set_target(target);
    EXPECT_THAT(ErrorOf(request), StartsWith("target: ")) << target;
  }
}

TEST(QueryBestRequestTest, ALibraryThisDaemonDoesNotLoadStillQueriesTheRecordsMadeWithIt) {
  // Records of a micro-kernel outlive the --extern-kernels that made them (another daemon, an
  // import): a query reads the log, and the log's targets need no catalog.
  v1::QueryBestRequest request = ValidBest();
  request.set_target("llvm -mcpu=znver4 -threads=1 -libs=my_ukernel");
  absl::StatusOr<ValidatedBestQuery> valid = ValidateQueryBest(request);
  ASSERT_TRUE(valid.ok()) << valid.status();
  EXPECT_EQ(valid->query.target, "llvm -mcpu=znver4 -threads=1 -libs=my_ukernel");
}

TEST(QueryBestRequestTest, NegativeTemplateVersionIsRefusedNamingTheField) {
  v1::QueryBestRequest request = ValidBest();
  request.set_template_version(-1);
  EXPECT_EQ(ErrorOf(request), "template_version: -1 is negative; expected 0 (any) or a version");
}

TEST(QueryBestRequestTest, VersionFiltersAreSetOnlyWhenGiven) {
  v1::QueryBestRequest request = ValidBest();
  request.set_template_version(2);
  request.set_tune_version("0.1.0");
  absl::StatusOr<ValidatedBestQuery> valid = ValidateQueryBest(request);
  ASSERT_TRUE(valid.ok()) << valid.status();
  EXPECT_EQ(valid->query.template_version, 2);
  EXPECT_EQ(valid->query.tune_version, "0.1.0");
}

TEST(QueryBestRequestTest, TopKZeroMeansOneAndTheLimitIsAccepted) {
  v1::QueryBestRequest request = ValidBest();
  request.set_top_k(0);
  ASSERT_TRUE(ValidateQueryBest(request).ok());
  EXPECT_EQ(ValidateQueryBest(request)->top_k, 1);
  request.set_top_k(kMaxTopK);
  ASSERT_TRUE(ValidateQueryBest(request).ok());
  EXPECT_EQ(ValidateQueryBest(request)->top_k, kMaxTopK);
}

TEST(QueryBestRequestTest, TopKAboveTheLimitIsRefusedNamingTheField) {
  v1::QueryBestRequest request = ValidBest();
  request.set_top_k(kMaxTopK + 1);
  EXPECT_EQ(ErrorOf(request), "top_k: 1001 is out of range; expected 0 (one) to 1000");
}

TEST(QueryBestRequestTest, NegativeTopKIsRefusedNamingTheField) {
  v1::QueryBestRequest request = ValidBest();
  request.set_top_k(-3);
  EXPECT_EQ(ErrorOf(request), "top_k: -3 is out of range; expected 0 (one) to 1000");
}

TEST(QueryBestRequestTest, TheFirstBadFieldInRequestOrderIsNamed) {
  v1::QueryBestRequest request;
  request.set_workload("gemm:M=0");
  request.set_top_k(-1);
  request.set_template_version(-1);
  EXPECT_THAT(ErrorOf(request), StartsWith("workload: "));
  request.set_workload("gemm:M=8,N=8,K=8");
  EXPECT_THAT(ErrorOf(request), StartsWith("device_key, target: "));
  request.set_device_key("cpu/x86_64/znver4");
  EXPECT_THAT(ErrorOf(request), StartsWith("template_version: "));
  request.set_template_version(0);
  EXPECT_THAT(ErrorOf(request), StartsWith("top_k: "));
}

TEST(ExportRecordsRequestTest, EmptyRequestExportsEverySuccessfulRecord) {
  absl::StatusOr<ValidatedExport> valid = ValidateExportRecords(v1::ExportRecordsRequest());
  ASSERT_TRUE(valid.ok()) << valid.status();
  EXPECT_FALSE(valid->filter.workload.has_value());
  EXPECT_FALSE(valid->filter.device_key.has_value());
  EXPECT_FALSE(valid->filter.job_id.has_value());
  EXPECT_FALSE(valid->filter.limit.has_value());
  EXPECT_EQ(valid->filter.after_id, 0);
  EXPECT_FALSE(valid->include_failures);
}

TEST(ExportRecordsRequestTest, CanonicalizesTheWorkloadAndKeepsTheDeviceKey) {
  v1::ExportRecordsRequest request;
  request.set_workload("gemm:N=64,K=32,M=16");
  request.set_device_key("cpu/x86_64/znver4");
  request.set_include_failures(true);
  absl::StatusOr<ValidatedExport> valid = ValidateExportRecords(request);
  ASSERT_TRUE(valid.ok()) << valid.status();
  EXPECT_EQ(valid->filter.workload, "gemm:M=16,N=64,K=32");
  EXPECT_EQ(valid->filter.device_key, "cpu/x86_64/znver4");
  EXPECT_TRUE(valid->include_failures);
}

TEST(ExportRecordsRequestTest, BadWorkloadIsRefusedNamingTheField) {
  v1::ExportRecordsRequest request;
  request.set_workload("conv2d:N=1");
  EXPECT_THAT(ErrorOf(request), StartsWith("workload: "));
  EXPECT_THAT(ErrorOf(request), HasSubstr("conv2d"));
}

}  // namespace
}  // namespace tune::tuner
