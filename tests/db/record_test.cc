// Records: commit and read back, validation, best / top-k / measured-config queries, filters.
#include <limits>
#include <string>
#include <vector>

#include "db/tuning_log.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/db/test_util.h"

namespace tune {
namespace {

using testing::FailedRecord;
using ::testing::HasSubstr;
using testing::kDevice;
using testing::kGemm;
using testing::kTarget;
using testing::OpenLog;
using testing::SampleRecord;
using tune::TempDir;

class RecordTest : public ::testing::Test {
 protected:
  TempDir dir_ = TempDir::Create("tune-db-test-").value();
  std::unique_ptr<TuningLog> log_ = OpenLog(dir_.File("tuning.db"));
};

TEST_F(RecordTest, CommitAssignsIdUidAndTimeAndReadsBackEveryField) {
  Record in = SampleRecord();
  in.measurement.round_secs = {1.0000000000000002e-3, 0.1 + 0.2, 3.14159e-7};
  in.measurement.message = "";
  in.measurement.library_info = "dnnl: oneDNN 2.6.3; isa=avx512_core; impl=brg:avx512_core";
  absl::StatusOr<Record> stored = log_->CommitRecord(in);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_GT(stored->id, 0);
  EXPECT_EQ(stored->uid.size(), 32u);
  EXPECT_GT(stored->created_at_ms, 1'600'000'000'000);

  absl::StatusOr<std::vector<Record>> all = log_->ListRecords();
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 1u);
  testing::ExpectSameRecord(all->front(), *stored);
  EXPECT_EQ(all->front().measurement.round_secs, in.measurement.round_secs);  // bit-exact
}

TEST_F(RecordTest, CommitKeepsGivenUidAndTimeAndRejectsADuplicateUid) {
  Record in = SampleRecord();
  in.uid = "0123456789abcdef0123456789abcdef";
  in.created_at_ms = 1234;
  absl::StatusOr<Record> stored = log_->CommitRecord(in);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->uid, in.uid);
  EXPECT_EQ(stored->created_at_ms, 1234);

  absl::StatusOr<Record> again = log_->CommitRecord(in);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(std::string(again.status().message()), HasSubstr(in.uid));
  EXPECT_EQ(*log_->CountRecords(), 1);
}

TEST_F(RecordTest, CommitCanonicalizesWorkloadTargetAndConfig) {
  Record in = SampleRecord(R"({ "nc" : 64, "mc" : 32 })");
  in.workload = "gemm:K=64,N=64,M=64";
  in.target = "llvm  -threads=1 -mcpu=znver4";
  absl::StatusOr<Record> stored = log_->CommitRecord(in);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->workload, kGemm);
  EXPECT_EQ(stored->target, kTarget);
  EXPECT_EQ(stored->config, R"({"mc":32,"nc":64})");
}

TEST_F(RecordTest, FailedTrialsAreStoredWithKindAndMessage) {
  Record in = FailedRecord(ErrorKind::kTimeout);
  absl::StatusOr<Record> stored = log_->CommitRecord(in);
  ASSERT_TRUE(stored.ok()) << stored.status();
  std::vector<Record> all = *log_->ListRecords();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].measurement.error, ErrorKind::kTimeout);
  EXPECT_EQ(all[0].measurement.message, in.measurement.message);
  EXPECT_TRUE(all[0].measurement.round_secs.empty());
  // A failure is never "best".
  EXPECT_FALSE(log_->QueryBest({.workload = kGemm, .device_key = kDevice})->has_value());
}

TEST_F(RecordTest, InvalidRecordsAreRejectedNamingTheField) {
  struct Case {
    std::string name;
    Record record;
    std::string field;
  };
  std::vector<Case> cases;
  cases.push_back({"bad workload", SampleRecord(), "record.workload"});
  cases.back().record.workload = "gemm:M=0,N=1,K=1";
  cases.push_back({"native target", SampleRecord(), "record.target"});
  cases.back().record.target = "llvm -threads=1";
  cases.push_back({"bad config", SampleRecord(R"({"mc":1.5})"), "record.config"});
  cases.push_back({"empty device key", SampleRecord(), "record.device_key"});
  cases.back().record.device_key = "";
  cases.push_back({"empty template", SampleRecord(), "record.template_name"});
  cases.back().record.template_name = "";
  cases.push_back({"success without rounds", SampleRecord(), "record.measurement.round_secs"});
  cases.back().record.measurement.round_secs.clear();
  cases.push_back({"infinite round", SampleRecord(), "record.measurement.round_secs"});
  cases.back().record.measurement.round_secs[1] = std::numeric_limits<double>::infinity();
  cases.push_back({"success with number 0", SampleRecord(), "record.measurement.number"});
  cases.back().record.measurement.number = 0;
  cases.push_back({"bad uid", SampleRecord(), "record.uid"});
  cases.back().record.uid = "has space";
  cases.push_back({"unknown job", SampleRecord(), "record.job_id"});
  cases.back().record.job_id = 99;
  for (const Case& c : cases) {
    absl::StatusOr<Record> stored = log_->CommitRecord(c.record);
    EXPECT_EQ(stored.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(std::string(stored.status().message()), HasSubstr(c.field)) << c.name;
  }
  EXPECT_EQ(*log_->CountRecords(), 0);
}

TEST_F(RecordTest, BestIsTheFastestSuccessfulRecordPerWorkloadAndDevice) {
  ASSERT_TRUE(log_->CommitRecord(SampleRecord(R"({"mc":1})", 3e-3)).ok());
  absl::StatusOr<Record> fastest = log_->CommitRecord(SampleRecord(R"({"mc":2})", 1e-3));
  ASSERT_TRUE(fastest.ok());
  ASSERT_TRUE(log_->CommitRecord(SampleRecord(R"({"mc":3})", 2e-3)).ok());
  ASSERT_TRUE(log_->CommitRecord(FailedRecord(ErrorKind::kWrongAnswer, R"({"mc":4})")).ok());
  // Faster, but for another device or another workload.
  Record other_device = SampleRecord(R"({"mc":5})", 1e-6);
  other_device.device_key = "cpu/x86_64/sapphirerapids";
  ASSERT_TRUE(log_->CommitRecord(other_device).ok());
  Record other_workload = SampleRecord(R"({"mc":6})", 1e-6);
  other_workload.workload = "gemm:M=128,N=64,K=64";
  ASSERT_TRUE(log_->CommitRecord(other_workload).ok());

  absl::StatusOr<std::optional<Record>> best =
      log_->QueryBest({.workload = kGemm, .device_key = kDevice});
  ASSERT_TRUE(best.ok()) << best.status();
  ASSERT_TRUE(best->has_value());
  EXPECT_EQ((*best)->id, fastest->id);
  EXPECT_EQ((*best)->config, R"({"mc":2})");

  // Non-canonical workload text finds the same record.
  EXPECT_EQ((*log_->QueryBest({.workload = "gemm:K=64,M=64,N=64", .device_key = kDevice}))->id,
            fastest->id);
  EXPECT_FALSE(log_->QueryBest({.workload = kGemm, .device_key = "cuda/sm_90"})->has_value());
  EXPECT_FALSE(
      log_->QueryBest({.workload = "gemm:M=1,N=1,K=1", .device_key = kDevice})->has_value());
  EXPECT_EQ(log_->QueryBest({.workload = "gemm", .device_key = kDevice}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(RecordTest, BestRespectsTemplateTemplateVersionAndTuneVersionFilters) {
  Record v1 = SampleRecord(R"({"mc":1})", 1e-3);
  Record v2 = SampleRecord(R"({"mc":1})", 2e-3);
  v2.template_version = 2;
  Record blas = SampleRecord("{}", 0.5e-3);
  blas.template_name = "gemm.cpu.extern_blas";
  blas.template_version = 3;
  Record new_tune = SampleRecord(R"({"mc":2})", 0.1e-3);
  new_tune.tune_version = "0.2.0";
  for (Record* r : {&v1, &v2, &blas, &new_tune}) {
    absl::StatusOr<Record> stored = log_->CommitRecord(*r);
    ASSERT_TRUE(stored.ok()) << stored.status();
    *r = *stored;
  }
  auto best_id = [&](BestQuery q) -> int64_t {
    q.workload = kGemm;
    q.device_key = kDevice;
    absl::StatusOr<std::optional<Record>> best = log_->QueryBest(q);
    EXPECT_TRUE(best.ok()) << best.status();
    return best.ok() && best->has_value() ? (*best)->id : 0;
  };
  EXPECT_EQ(best_id({}), new_tune.id);
  EXPECT_EQ(best_id({.tune_version = "0.1.0"}), blas.id);
  EXPECT_EQ(best_id({.template_name = "gemm.cpu.blocked", .tune_version = "0.1.0"}), v1.id);
  EXPECT_EQ(best_id({.template_name = "gemm.cpu.blocked", .template_version = 2}), v2.id);
  EXPECT_EQ(best_id({.template_version = 1, .tune_version = "0.1.0"}), v1.id);
  EXPECT_EQ(best_id({.template_name = "conv2d.cpu.nchwc"}), 0);
}

TEST_F(RecordTest, BestForATargetMatchesItsThreadsLibrariesAndCacheStateExactly) {
  // The fastest record overall was measured with 16 threads, the next with a library, the next
  // with cold caches: none of them is the best for a 1-thread, library-free, warm target.
  Record threaded = SampleRecord(R"({"mc":1})", 1e-6);
  threaded.target = "llvm -mcpu=znver4 -threads=16";
  Record with_libs = SampleRecord(R"({"mc":2})", 2e-6);
  with_libs.target = "llvm -mcpu=znver4 -threads=1 -libs=openblas";
  Record cold = SampleRecord(R"({"mc":3})", 3e-6);
  cold.timing = TimingOptions{.flush_cache = true};
  Record plain_slow = SampleRecord(R"({"mc":4})", 9e-3);
  plain_slow.timing = TimingOptions{};
  Record plain_fast = SampleRecord(R"({"mc":5})", 5e-3);  // no timing kept: warm
  for (Record* r : {&threaded, &with_libs, &cold, &plain_slow, &plain_fast}) {
    absl::StatusOr<Record> stored = log_->CommitRecord(*r);
    ASSERT_TRUE(stored.ok()) << stored.status();
    *r = *stored;
  }
  auto best_id = [&](BestQuery q) -> int64_t {
    q.workload = kGemm;
    absl::StatusOr<std::optional<Record>> best = log_->QueryBest(q);
    EXPECT_TRUE(best.ok()) << best.status();
    return best.ok() && best->has_value() ? (*best)->id : 0;
  };
  EXPECT_EQ(best_id({.target = testing::kTarget}), plain_fast.id);
  EXPECT_EQ(best_id({.target = "llvm -threads=1 -mcpu=znver4"}), plain_fast.id)
      << "the target text is canonicalized";
  EXPECT_EQ(best_id({.target = testing::kTarget, .flush_cache = true}), cold.id);
  EXPECT_EQ(best_id({.target = "llvm -mcpu=znver4 -threads=16"}), threaded.id);
  EXPECT_EQ(best_id({.target = "llvm -mcpu=znver4 -threads=1 -libs=openblas"}), with_libs.id);
  EXPECT_EQ(best_id({.target = "llvm -mcpu=znver4 -threads=2"}), 0);
  // The whole device, as before.
  EXPECT_EQ(best_id({.device_key = kDevice}), threaded.id);
  EXPECT_EQ(log_->QueryBest({.workload = kGemm, .target = "llvm -mcpu=native"}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(RecordTest, ATrialWithoutAVerdictIsNotAMeasuredConfig) {
  ASSERT_TRUE(log_->CommitRecord(FailedRecord(ErrorKind::kWorkerLost, R"({"mc":1})")).ok());
  ASSERT_TRUE(log_->CommitRecord(FailedRecord(ErrorKind::kRuntimeCrash, R"({"mc":2})")).ok());
  // Not written by a daemon, but a log may import it.
  ASSERT_TRUE(log_->CommitRecord(FailedRecord(ErrorKind::kWorkerError, R"({"mc":3})")).ok());
  absl::StatusOr<std::vector<ConfigKey>> measured = log_->MeasuredConfigs(kGemm, testing::kTarget);
  ASSERT_TRUE(measured.ok()) << measured.status();
  ASSERT_EQ(measured->size(), 1u);
  EXPECT_EQ(measured->front().config, R"({"mc":2})");
}

TEST_F(RecordTest, TopKIsFastestFirstWithOneRecordPerConfig) {
  ASSERT_TRUE(log_->CommitRecord(SampleRecord(R"({"mc":1})", 4e-3)).ok());
  ASSERT_TRUE(log_->CommitRecord(SampleRecord(R"({"mc":2})", 2e-3)).ok());
  ASSERT_TRUE(log_->CommitRecord(SampleRecord(R"({"mc":2})", 1e-3)).ok());  // re-measured
  ASSERT_TRUE(log_->CommitRecord(SampleRecord(R"({"mc":3})", 3e-3)).ok());
  ASSERT_TRUE(log_->CommitRecord(FailedRecord(ErrorKind::kRuntimeCrash, R"({"mc":9})")).ok());

  BestQuery q{.workload = kGemm, .device_key = kDevice};
  absl::StatusOr<std::vector<Record>> top = log_->QueryTopK(q, 3);
  ASSERT_TRUE(top.ok()) << top.status();
  std::vector<std::string> configs;
  for (const Record& r : *top) {
    configs.push_back(r.config);
  }
  EXPECT_THAT(configs, ::testing::ElementsAre(R"({"mc":2})", R"({"mc":3})", R"({"mc":1})"));
  EXPECT_DOUBLE_EQ(top->front().measurement.MedianSecs(), 1e-3);

  EXPECT_EQ(log_->QueryTopK(q, 10)->size(), 3u);
  EXPECT_EQ(log_->QueryTopK(q, 1)->size(), 1u);
  EXPECT_EQ(log_->QueryTopK(q, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RecordTest, MeasuredConfigsListsEveryOutcomeOnceInFirstMeasuredOrder) {
  ASSERT_TRUE(log_->CommitRecord(SampleRecord(R"({"mc":2})")).ok());
  ASSERT_TRUE(log_->CommitRecord(FailedRecord(ErrorKind::kBuildError, R"({"mc":1})")).ok());
  ASSERT_TRUE(log_->CommitRecord(SampleRecord(R"({"mc":2})")).ok());
  Record blas = SampleRecord("{}");
  blas.template_name = "gemm.cpu.extern_blas";
  ASSERT_TRUE(log_->CommitRecord(blas).ok());
  Record other_target = SampleRecord(R"({"mc":7})");
  other_target.target = "llvm -mcpu=znver4 -threads=8";
  ASSERT_TRUE(log_->CommitRecord(other_target).ok());

  absl::StatusOr<std::vector<ConfigKey>> measured = log_->MeasuredConfigs(kGemm, kTarget);
  ASSERT_TRUE(measured.ok()) << measured.status();
  EXPECT_THAT(*measured, ::testing::ElementsAre(ConfigKey{"gemm.cpu.blocked", 1, R"({"mc":2})"},
                                                ConfigKey{"gemm.cpu.blocked", 1, R"({"mc":1})"},
                                                ConfigKey{"gemm.cpu.extern_blas", 1, "{}"}));
  EXPECT_TRUE(log_->MeasuredConfigs(kGemm, "cuda -arch=sm_90")->empty());
  EXPECT_EQ(log_->MeasuredConfigs(kGemm, "llvm").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(RecordTest, TrialsOfTemplateListOtherWorkloadsOfTheTargetNewestFirst) {
  auto on = [](const char* workload, const char* config, double secs) {
    Record r = SampleRecord(config, secs);
    r.workload = workload;
    return r;
  };
  ASSERT_TRUE(log_->CommitRecord(on("gemm:M=32,N=64,K=64", R"({"mc":1})", 2e-3)).ok());
  ASSERT_TRUE(log_->CommitRecord(SampleRecord(R"({"mc":9})")).ok());  // kGemm itself
  Record failed = FailedRecord(ErrorKind::kBuildError, R"({"mc":2})");
  failed.workload = "gemm:M=16,N=64,K=64";
  ASSERT_TRUE(log_->CommitRecord(failed).ok());
  Record lost = FailedRecord(ErrorKind::kWorkerLost, R"({"mc":3})");
  lost.workload = "gemm:M=16,N=64,K=64";
  ASSERT_TRUE(log_->CommitRecord(lost).ok());
  Record timeout = FailedRecord(ErrorKind::kTimeout, R"({"mc":6})");
  timeout.workload = "gemm:M=16,N=64,K=64";
  timeout.timing = TimingOptions{.timeout_ms = 2500};
  ASSERT_TRUE(log_->CommitRecord(timeout).ok());
  Record other_template = on("gemm:M=16,N=64,K=64", "{}", 1e-3);
  other_template.template_name = "gemm.cpu.extern_blas";
  ASSERT_TRUE(log_->CommitRecord(other_template).ok());
  Record other_target = on("gemm:M=16,N=64,K=64", R"({"mc":4})", 1e-3);
  other_target.target = "llvm -mcpu=znver4 -threads=8";
  ASSERT_TRUE(log_->CommitRecord(other_target).ok());
  ASSERT_TRUE(log_->CommitRecord(on("gemm:M=16,N=64,K=64", R"({"mc":5})", 3e-3)).ok());

  absl::StatusOr<std::vector<TemplateTrial>> trials =
      log_->TrialsOfTemplate("gemm.cpu.blocked", 1, kTarget, false, kGemm, 10);
  ASSERT_TRUE(trials.ok()) << trials.status();
  ASSERT_EQ(trials->size(), 4u);
  EXPECT_EQ((*trials)[0].config, R"({"mc":5})");
  EXPECT_EQ((*trials)[0].error, ErrorKind::kNone);
  EXPECT_DOUBLE_EQ((*trials)[0].secs, 3e-3);
  // A TIMEOUT is lent as at least as slow as its deadline.
  EXPECT_EQ((*trials)[1].config, R"({"mc":6})");
  EXPECT_EQ((*trials)[1].error, ErrorKind::kTimeout);
  EXPECT_DOUBLE_EQ((*trials)[1].secs, 2.5);
  EXPECT_EQ((*trials)[2].config, R"({"mc":2})");
  EXPECT_EQ((*trials)[2].error, ErrorKind::kBuildError);
  EXPECT_EQ((*trials)[2].secs, 0);
  EXPECT_EQ((*trials)[3].workload, "gemm:M=32,N=64,K=64");
  EXPECT_EQ(log_->TrialsOfTemplate("gemm.cpu.blocked", 1, kTarget, false, kGemm, 1)->size(), 1u);
  EXPECT_TRUE(log_->TrialsOfTemplate("gemm.cpu.blocked", 2, kTarget, false, kGemm, 10)->empty());
  EXPECT_TRUE(log_->TrialsOfTemplate("gemm.cpu.blocked", 1, kTarget, true, kGemm, 10)->empty());
}

TEST_F(RecordTest, ListRecordsFiltersAndPagesInIdOrder) {
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) {
    Record r = SampleRecord(fmt::format(R"({{"mc":{}}})", i));
    if (i % 2 == 1) {
      r.device_key = "cpu/x86_64/sapphirerapids";
    }
    ids.push_back(log_->CommitRecord(r)->id);
  }
  auto list_ids = [&](const RecordFilter& filter) {
    std::vector<int64_t> out;
    absl::StatusOr<std::vector<Record>> records = log_->ListRecords(filter);
    EXPECT_TRUE(records.ok()) << records.status();
    for (const Record& r : *records) {
      out.push_back(r.id);
    }
    return out;
  };
  EXPECT_EQ(list_ids({}), ids);
  EXPECT_EQ(list_ids({.device_key = kDevice}), (std::vector<int64_t>{ids[0], ids[2], ids[4]}));
  EXPECT_EQ(list_ids({.workload = kGemm, .after_id = ids[1], .limit = 2}),
            (std::vector<int64_t>{ids[2], ids[3]}));
  EXPECT_TRUE(list_ids({.workload = "gemm:M=1,N=1,K=1"}).empty());
  EXPECT_TRUE(list_ids({.device_key = "rocm/gfx90a"}).empty());
  EXPECT_EQ(*log_->CountRecords({.device_key = "cpu/x86_64/sapphirerapids"}), 2);
}

}  // namespace
}  // namespace tune

namespace tune {
namespace {

class BestDecisionTest : public ::testing::Test {
 protected:
  TempDir dir_ = TempDir::Create("tune-db-test-").value();
  std::unique_ptr<TuningLog> log_ = testing::OpenLog(dir_.File("tuning.db"));
};

TEST_F(BestDecisionTest, TheDecidedBestLeadsTheTargetsBestEvenWhenARecordIsFaster) {
  using testing::SampleRecord;
  ASSERT_TRUE(log_->CommitRecord(SampleRecord(R"({"mc":1})", 1.00e-3)).ok());  // lucky once
  Record final = SampleRecord(R"({"mc":2})", 1.02e-3);
  final.final = true;
  absl::StatusOr<Record> stored = log_->CommitRecord(final);
  ASSERT_TRUE(stored.ok()) << stored.status();
  ASSERT_TRUE(log_->CommitRecord(SampleRecord(R"({"mc":3})", 2e-3)).ok());

  BestQuery by_target{.workload = testing::kGemm, .target = testing::kTarget};
  EXPECT_EQ((*log_->QueryBest(by_target))->config, R"({"mc":1})") << "no decision yet";

  ASSERT_TRUE(log_->SetBestDecision(BestDecision{.workload = testing::kGemm,
                                                 .target = testing::kTarget,
                                                 .record_id = stored->id,
                                                 .median_secs = 1.01e-3,
                                                 .relative_ci = 0.004})
                  .ok());
  absl::StatusOr<std::vector<Record>> top = log_->QueryTopK(by_target, 3);
  ASSERT_TRUE(top.ok()) << top.status();
  ASSERT_EQ(top->size(), 3u);
  EXPECT_EQ((*top)[0].config, R"({"mc":2})");
  EXPECT_TRUE((*top)[0].final);
  EXPECT_EQ((*top)[1].config, R"({"mc":1})");
  EXPECT_EQ((*top)[2].config, R"({"mc":3})");

  // A query the decision is outside of, and a device key, rank by median alone.
  BestQuery other_template = by_target;
  other_template.template_name = "gemm.cpu.other";
  EXPECT_FALSE((*log_->QueryBest(other_template)).has_value());
  BestQuery by_device{.workload = testing::kGemm, .device_key = testing::kDevice};
  EXPECT_EQ((*log_->QueryBest(by_device))->config, R"({"mc":1})");
  BestQuery cold = by_target;
  cold.flush_cache = true;
  EXPECT_FALSE((*log_->QueryBest(cold)).has_value());

  auto decision = log_->GetBestDecision(testing::kGemm, testing::kTarget, false);
  ASSERT_TRUE(decision.ok() && decision->has_value());
  EXPECT_EQ((*decision)->record_id, stored->id);
  EXPECT_DOUBLE_EQ((*decision)->median_secs, 1.01e-3);
  EXPECT_GT((*decision)->decided_at_ms, 0);
}

TEST_F(BestDecisionTest, ADecisionNamingAnotherWorkloadsRecordIsRefused) {
  Record other = testing::SampleRecord(R"({"mc":2})");
  other.workload = "gemm:M=8,N=8,K=8";
  absl::StatusOr<Record> stored = log_->CommitRecord(other);
  ASSERT_TRUE(stored.ok()) << stored.status();
  absl::Status s = log_->SetBestDecision(BestDecision{
      .workload = testing::kGemm, .target = testing::kTarget, .record_id = stored->id});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("decision.record_id"));
  EXPECT_FALSE(log_->GetBestDecision(testing::kGemm, testing::kTarget, false)->has_value());
}

}  // namespace
}  // namespace tune
