#include <gtest/gtest.h>

#include "db/record.h"
#include "tuner/api/client_format.h"
#include "tuner/api/grpc_status.h"
#include "tuner/api/proto_convert.h"

namespace tune::tuner {
namespace {

TEST(ProtoConvertTest, RecordsRoundTripThroughTheWire) {
  Record record;
  record.uid = "abc123";
  record.workload = "gemm:M=64,N=64,K=64";
  record.target = "llvm -mcpu=znver4 -threads=1";
  record.device_key = "cpu/x86_64/znver4";
  record.template_name = "gemm.cpu.blocked";
  record.template_version = 2;
  record.config = R"({"mc":64})";
  record.measurement.round_secs = {1e-5, 2e-5};
  record.measurement.number = 10;
  record.measurement.device_fingerprint = "cpu";
  record.tune_version = "0.1.0";
  record.llvm_version = "19.1.7";
  record.worker = "w";
  record.created_at_ms = 1234;
  record.job_id = 9;
  v1::Record wire = RecordToProto(record);
  EXPECT_EQ(wire.job_id(), 9u);
  absl::StatusOr<Record> back = RecordFromProto(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->uid, record.uid);
  EXPECT_EQ(back->measurement.round_secs, record.measurement.round_secs);
  EXPECT_EQ(back->template_version, 2);
  EXPECT_FALSE(back->job_id.has_value());  // job ids are local to one log

  record.target = "cuda -arch=sm_90";
  record.device_key = "cuda/sm_90";
  record.measurement.gpu_clock = GpuClock::kGraph;
  record.measurement.host_round_secs = {1.6e-5, 2.6e-5};
  back = RecordFromProto(RecordToProto(record));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->measurement.gpu_clock, GpuClock::kGraph);
  EXPECT_EQ(back->measurement.host_round_secs, record.measurement.host_round_secs);
}

TEST(ProtoConvertTest, JobStatesMapBothWaysAndUnspecifiedIsRejected) {
  for (JobState s : {JobState::kQueued, JobState::kRunning, JobState::kDone, JobState::kFailed,
                     JobState::kCancelled}) {
    absl::StatusOr<JobState> back = JobStateFromProto(JobStateToProto(s), "state");
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, s);
  }
  EXPECT_EQ(JobStateToProto(JobState::kDone), v1::JOB_STATE_SUCCEEDED);
  EXPECT_FALSE(JobStateFromProto(v1::JOB_STATE_UNSPECIFIED, "state").ok());
}

TEST(GrpcStatusTest, CodesAndMessagesSurviveTheRoundTrip) {
  absl::Status s = absl::InvalidArgumentError("spec.trials: 0 is out of range");
  grpc::Status g = ToGrpcStatus(s);
  EXPECT_EQ(g.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(FromGrpcStatus(g), s);
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_EQ(ToGrpcStatus(absl::NotFoundError("x")).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST(ClientFormatTest, ProgressShowsTrialsBestAndEta) {
  v1::JobEvent e;
  e.set_state(v1::JOB_STATE_RUNNING);
  e.set_trials_done(3);
  e.set_trials_failed(1);
  e.set_trials_total(12);
  e.set_best_gflops(35.25);
  e.set_eta_seconds(125);
  EXPECT_EQ(ProgressText(e), "3/12 trials (1 failed), best 35.25 GFLOPS, ETA 2m05s");
  e.set_eta_seconds(-1);
  EXPECT_EQ(ProgressText(e), "3/12 trials (1 failed), best 35.25 GFLOPS, ETA ?");
  std::string bar = ProgressBar(e, 80);
  EXPECT_EQ(bar.front(), '[');
  EXPECT_NE(bar.find('#'), std::string::npos);
}

TEST(ClientFormatTest, BestShowsHowALibraryCandidatesLibraryRan) {
  Record record;
  record.uid = "u1";
  record.workload = "gemm:M=64,N=64,K=64";
  record.device_key = "cpu/x86_64/znver4";
  record.template_name = "gemm.cpu.openblas";
  record.config = "{}";
  record.measurement.round_secs = {1e-5};
  record.measurement.number = 1;
  record.measurement.library_info = "openblas: OpenBLAS 0.3.21; core=Haswell; threads=1";
  Record generated = record;
  generated.template_name = "gemm.cpu.blocked";
  generated.measurement.library_info = "";
  std::string text = BestText({RecordToProto(record), RecordToProto(generated)});
  EXPECT_NE(text.find("gemm.cpu.openblas {}"), std::string::npos) << text;
  EXPECT_NE(text.find("\n    library: openblas: OpenBLAS 0.3.21; core=Haswell"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("library:"), text.rfind("library:")) << "only the library candidate";
}

TEST(ClientFormatTest, BestJsonMarksEveryRecordOfAFallbackWithTheTargetAsked) {
  Record record;
  record.uid = "u2";
  record.workload = "gemm:M=64,N=64,K=64";
  record.target = "llvm -mcpu=znver4 -threads=2";
  record.device_key = "cpu/x86_64/znver4";
  record.template_name = "gemm.cpu.blocked";
  record.config = "{}";
  record.measurement.round_secs = {1e-5};
  record.measurement.number = 1;
  v1::QueryBestResponse best;
  *best.add_records() = RecordToProto(record);
  *best.add_records() = RecordToProto(record);

  best.set_match(v1::BEST_MATCH_EXACT);
  nlohmann::json exact = BestJson(best, "llvm -mcpu=znver4 -threads=2");
  ASSERT_EQ(exact.size(), 2u);
  for (const nlohmann::json& r : exact) {
    EXPECT_EQ(r["fallback"], false);
    EXPECT_FALSE(r.contains("requested_target")) << r.dump();
    EXPECT_EQ(r["uid"], "u2");
  }

  best.set_match(v1::BEST_MATCH_SAME_DEVICE);
  nlohmann::json fallback = BestJson(best, "llvm -mcpu=native -threads=1");
  ASSERT_EQ(fallback.size(), 2u);
  for (const nlohmann::json& r : fallback) {
    EXPECT_EQ(r["fallback"], true);
    EXPECT_EQ(r["requested_target"], "llvm -mcpu=native -threads=1");
    EXPECT_EQ(r["target"], "llvm -mcpu=znver4 -threads=2") << "the record's own target stays";
  }

  best.set_match(v1::BEST_MATCH_DEVICE);
  EXPECT_EQ(BestJson(best, "")[0]["fallback"], false) << "a device key asks for every target";
  best.clear_records();
  EXPECT_EQ(BestJson(best, ""), nlohmann::json::array());
}

TEST(ClientFormatTest, BestShowsTheCallByCallReadingOnlyWhereItDiffersBeyondTheIntervals) {
  Record record;
  record.uid = "g1";
  record.workload = "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1";
  record.device_key = "cuda/sm_90";
  record.template_name = "conv2d.cuda.cudnn";
  record.config = "{}";
  record.measurement.round_secs = {1.0e-5, 1.01e-5, 0.99e-5};
  record.measurement.host_round_secs = {1.6e-5, 1.62e-5, 1.58e-5};
  record.measurement.number = 64;
  record.measurement.gpu_clock = GpuClock::kGraph;
  Record agreeing = record;
  agreeing.uid = "g2";
  agreeing.template_name = "conv2d.gpu.direct";
  agreeing.measurement.host_round_secs = {1.02e-5, 1.0e-5, 0.98e-5};
  Record events = record;
  events.uid = "e1";
  events.measurement.gpu_clock = GpuClock::kEvents;
  events.measurement.host_round_secs = events.measurement.round_secs;
  std::string text =
      BestText({RecordToProto(record), RecordToProto(agreeing), RecordToProto(events)});
  EXPECT_NE(text.find("\n    call by call (events): 1.6e-05 s, 1.60x the device time (graph "
                      "replay)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("call by call (events):"), text.rfind("call by call (events):"))
      << "only the record whose readings differ";
  EXPECT_NE(text.find("(record e1,"), std::string::npos) << text;
  EXPECT_NE(text.find("\n    timed call by call (events), not by graph replay\n"),
            std::string::npos)
      << text;

  nlohmann::json j = RecordJson(RecordToProto(record));
  EXPECT_EQ(j["gpu_clock"], "graph");
  EXPECT_DOUBLE_EQ(j["host_median_secs"].get<double>(), 1.6e-5);
  EXPECT_EQ(RecordJson(RecordToProto(events))["gpu_clock"], "events");
}

TEST(ClientFormatTest, ARecordShowsItsMediansConfidenceIntervalAndItsCode) {
  Record record;
  record.uid = "r1";
  record.workload = "gemm:M=64,N=64,K=64";
  record.target = "llvm -mcpu=znver5 -threads=1";
  record.device_key = "cpu/x86_64/znver5";
  record.template_name = "gemm.cpu.blocked";
  record.config = "{}";
  record.artifact_hash = std::string(64, 'a');
  record.measurement.round_secs = {1.00e-3, 1.02e-3, 0.98e-3};
  record.measurement.number = 1;
  nlohmann::json j = RecordJson(RecordToProto(record));
  EXPECT_NEAR(j["relative_ci"].get<double>(), 0.02, 1e-9);
  EXPECT_EQ(j["artifact_hash"], record.artifact_hash);
  EXPECT_NE(BestText({RecordToProto(record)}).find("0.001 s ±2.0%"), std::string::npos)
      << BestText({RecordToProto(record)});
  record.measurement.round_secs = {1e-3};
  EXPECT_TRUE(RecordJson(RecordToProto(record))["relative_ci"].is_null());
}

TEST(ClientFormatTest, DurationsReadNaturally) {
  EXPECT_EQ(Duration(0), "0s");
  EXPECT_EQ(Duration(59.4), "59s");
  EXPECT_EQ(Duration(61), "1m01s");
  EXPECT_EQ(Duration(3720), "1h02m");
  EXPECT_EQ(Duration(-1), "?");
}

}  // namespace
}  // namespace tune::tuner
