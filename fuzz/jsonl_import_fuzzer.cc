// TuningLog::ImportJsonl (db/tuning_log.h) on a real tuning log in the scratch directory: any
// text, as `tune-client import` would send it. Invariants: a rejection is InvalidArgument
// "line N: ..." and changes nothing (the record count stays); an accepted import, repeated,
// imports nothing and skips every record as a duplicate.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>

#include "common/status.h"
#include "db/tuning_log.h"
#include "fuzz/fuzz_util.h"

namespace {

tune::TuningLog* log_ = nullptr;

int64_t Count() {
  absl::StatusOr<int64_t> count = log_->CountRecords();
  TUNE_CHECK(count.ok()) << count.status();
  return *count;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tune::fuzz::QuietLogs();
  absl::StatusOr<std::unique_ptr<tune::TuningLog>> log =
      tune::TuningLog::Open(tune::fuzz::ScratchDir() + "/import.db");
  TUNE_CHECK(log.ok()) << log.status();
  log_ = log->release();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(tune::fuzz::AsText(data, size));
  const int64_t before = Count();
  std::istringstream in(text);
  absl::StatusOr<tune::TuningLog::ImportStats> stats = log_->ImportJsonl(in);
  if (!stats.ok()) {
    TUNE_CHECK(absl::IsInvalidArgument(stats.status())) << stats.status();
    TUNE_CHECK(tune::fuzz::StartsWith(stats.status().message(), "line ")) << stats.status();
    TUNE_CHECK(Count() == before) << "a rejected import changed the log";
    return 0;
  }
  TUNE_CHECK(Count() == before + stats->imported);
  std::istringstream again_in(text);
  absl::StatusOr<tune::TuningLog::ImportStats> again = log_->ImportJsonl(again_in);
  TUNE_CHECK(again.ok()) << "an accepted import is rejected the second time: " << again.status();
  TUNE_CHECK(again->imported == 0 &&
             again->skipped_duplicates == stats->imported + stats->skipped_duplicates)
      << again->imported << " imported, " << again->skipped_duplicates << " skipped; first "
      << stats->imported << " imported, " << stats->skipped_duplicates << " skipped";
  return 0;
}
