// Shape ranges in the tuning log (db/range_log.cc): a range's sizes are the workloads of its
// text with records, and a range job keeps its range.
#include "common/shape_range.h"
#include "common/strings.h"
#include "db/tuning_log.h"
#include "gtest/gtest.h"
#include "tests/db/test_util.h"

namespace tune {
namespace {

using testing::FailedRecord;
using testing::kDevice;
using testing::OpenLog;
using testing::SampleRecord;

Record At(const std::string& workload, Record r = SampleRecord()) {
  r.workload = workload;
  return r;
}

TEST(RangeLogTest, ARangesSizesAreItsWorkloadsWithRecordsOnTheDevice) {
  TempDir dir = *TempDir::Create("tune-range-log-test-");
  auto log = OpenLog(dir.File("tuning.db"));
  const ShapeRange range = *ShapeRange::Parse("gemm:M=1..64,N=64,K=64");
  for (const Record& r :
       {At("gemm:M=32,N=64,K=64"), At("gemm:M=4,N=64,K=64"),
        At("gemm:M=8,N=64,K=64", FailedRecord(ErrorKind::kTimeout)),
        At("gemm:M=128,N=64,K=64"),               // outside the range
        At("gemm:M=16,N=64,K=64,epilogue=bias"),  // another workload that shares the prefix
        At("gemm:M=2,N=64,K=32")}) {              // another K
    ASSERT_TRUE(log->CommitRecord(r).ok());
  }
  EXPECT_EQ(*log->RangeSizesMeasured(range, kDevice), (std::vector<int64_t>{4, 32}));
  EXPECT_EQ(*log->RangeSizesMeasured(range, kDevice, /*successful_only=*/false),
            (std::vector<int64_t>{4, 8, 32}));
  EXPECT_EQ(*log->RangeSizesMeasured(range, ""), (std::vector<int64_t>{4, 32}));
  EXPECT_TRUE(log->RangeSizesMeasured(range, "cuda/sm_90")->empty());
}

TEST(RangeLogTest, ARangeJobKeepsItsRangeAndNeedsATrialPerTunedSize) {
  TempDir dir = *TempDir::Create("tune-range-log-test-");
  auto log = OpenLog(dir.File("tuning.db"));
  JobSpec spec;
  spec.target = "llvm -mcpu=znver4 -threads=1";
  spec.device_key = kDevice;
  spec.strategy = "random";
  spec.range = "gemm:N=8,K=8,M=1..4";
  for (int m : {1, 2, 3, 4}) {  // tuned sizes 1, 2, 4 and the midpoint 3
    spec.tasks.push_back(JobTask{StrCat("gemm:M=", m, ",N=8,K=8"), 1, 0});
  }
  spec.trials = 2;
  absl::StatusOr<Job> refused = log->CreateJob(spec);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("fewer than the model's 3"), std::string::npos)
      << refused.status();
  spec.trials = 3;  // the midpoint may get none
  absl::StatusOr<Job> job = log->CreateJob(spec);
  ASSERT_TRUE(job.ok()) << job.status();
  absl::StatusOr<Job> read = log->GetJob(job->id);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->spec.range, "gemm:M=1..4,N=8,K=8");
  EXPECT_EQ(read->spec.tasks.size(), 4u);
  spec.range = "gemm:M=4..1,N=8,K=8";
  absl::StatusOr<Job> bad = log->CreateJob(spec);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("range"), std::string::npos) << bad.status();
}

}  // namespace
}  // namespace tune
