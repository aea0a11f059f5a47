// Shared by the fuzzers of the daemon's record queries (query_best, export_records): a request
// read from protobuf text format (else binary), and a tuning log in the scratch directory seeded
// with records that the queries find: two workloads on four targets of three device keys, warm
// and cold caches, two template versions and two tune versions, slower re-measurements of the
// same config, failed trials, and one decided best that is not the fastest record.
#pragma once

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/message.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/strings.h"
#include "common/target.h"
#include "db/record.h"
#include "db/tuning_log.h"
#include "fuzz/fuzz_util.h"

namespace tune::fuzz {

/// Workloads of the seeded log (canonical).
inline constexpr const char* kSeedGemm = "gemm:M=64,N=64,K=64";
inline constexpr const char* kSeedConv = "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1";

// Text format errors are the fuzzer's daily bread: not worth a line on stderr each.
class SilentErrors final : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
};

/// `request` from the input in protobuf text format, else binary; false when neither parses.
inline bool ParseRequest(const uint8_t* data, size_t size, google::protobuf::Message& request) {
  SilentErrors errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  if (parser.ParseFromString(std::string(AsText(data, size)), &request)) {
    return true;
  }
  request.Clear();
  return request.ParseFromArray(data, static_cast<int>(size));
}

/// The seeded log: every record it holds (id order), and the decided best it holds.
struct SeededLog {
  TuningLog* log = nullptr;
  std::vector<Record> records = {};
  BestDecision decision = {};
};

/// Opens and seeds the log once per process (in LLVMFuzzerInitialize); quiets protobuf's and
/// tune's loggers. Aborts on any error: the fuzzer would test nothing.
inline const SeededLog& Seeded() {
  static const SeededLog* seeded = [] {
    QuietLogs();
    google::protobuf::SetLogHandler(nullptr);  // it logs every string that is not UTF-8
    absl::StatusOr<std::unique_ptr<TuningLog>> opened =
        TuningLog::Open(ScratchDir() + "/records.db");
    TUNE_CHECK(opened.ok()) << opened.status();
    auto* out = new SeededLog{.log = opened->release()};

    // "native" resolves to this host, so that requests naming it find records.
    const std::string host_target =
        Target::Parse("llvm -mcpu=native -threads=1")->Resolved().ToString();
    struct Context {
      std::string target, device_key;
    };
    std::vector<Context> contexts;
    for (std::string text : {std::string("llvm -mcpu=znver4 -threads=1"),
                             std::string("llvm -mcpu=znver4 -threads=4 -libs=openblas"),
                             host_target, std::string("cuda -arch=sm_90")}) {
      absl::StatusOr<Target> target = Target::Parse(text);
      TUNE_CHECK(target.ok()) << text << ": " << target.status();
      contexts.push_back({target->ToString(), target->DeviceKey()});
    }
    int i = 0;
    for (const char* workload : {kSeedGemm, kSeedConv}) {
      const bool gemm = std::string(workload) == kSeedGemm;
      for (const Context& context : contexts) {
        const bool gpu = context.device_key.starts_with("cuda/");
        for (int n = 0; n < 9; ++n, ++i) {
          Record r;
          r.workload = workload;
          r.target = context.target;
          r.device_key = context.device_key;
          r.template_name = gpu    ? (gemm ? "gemm.gpu.tiled" : "conv2d.gpu.direct")
                            : gemm ? "gemm.cpu.blocked"
                                   : "conv2d.cpu.direct";
          r.template_version = 1 + i % 2;
          r.config = StrCat(R"({"mc":)", 1 + n % 4, R"(,"nc":)", 8 * (1 + i % 3), "}");
          const double secs = 1e-3 * (1 + (i * 7) % 11);
          r.measurement.round_secs = {secs * 1.01, secs, secs * 0.99};  // median: secs
          r.measurement.number = 10;
          r.measurement.device_fingerprint = "fuzz";
          if (n % 5 == 4) {
            r.measurement.error = ErrorKind::kTimeout;
            r.measurement.message = "kernel exceeded the 10000 ms deadline";
            r.measurement.round_secs.clear();
            r.measurement.number = 0;
          }
          if (n % 3 == 2) {
            r.timing = TimingOptions{.flush_cache = true};
          } else if (n % 3 == 1) {
            r.timing = TimingOptions{};
          }
          r.tune_version = i % 4 == 3 ? "0.2.0" : "0.1.0";
          r.llvm_version = "19.1.7";
          r.worker = "fuzz-worker";
          absl::StatusOr<Record> committed = out->log->CommitRecord(r);
          TUNE_CHECK(committed.ok()) << committed.status();
        }
      }
    }
    absl::StatusOr<std::vector<Record>> all = out->log->ListRecords();
    TUNE_CHECK(all.ok()) << all.status();
    out->records = *std::move(all);

    // The slowest successful warm record of the gemm on the first target is the decided best.
    const Record* slowest = nullptr;
    for (const Record& r : out->records) {
      if (r.workload == kSeedGemm && r.target == contexts[0].target && r.measurement.ok() &&
          !ColdCache(r) &&
          (slowest == nullptr || r.measurement.MedianSecs() > slowest->measurement.MedianSecs())) {
        slowest = &r;
      }
    }
    TUNE_CHECK(slowest != nullptr);
    out->decision = BestDecision{.workload = kSeedGemm,
                                 .target = contexts[0].target,
                                 .record_id = slowest->id,
                                 .median_secs = slowest->measurement.MedianSecs()};
    absl::Status decided = out->log->SetBestDecision(out->decision);
    TUNE_CHECK(decided.ok()) << decided;
    return out;
  }();
  return *seeded;
}

}  // namespace tune::fuzz
