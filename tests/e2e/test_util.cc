#include "tests/e2e/test_util.h"

#include <memory>

#include "common/status.h"
#include "common/strings.h"
#include "db/tuning_log.h"

namespace tune::testing {

namespace {

// The records matching `filter` whose `final` flag is `final`.
absl::StatusOr<std::vector<Record>> Records(const std::string& db, const RecordFilter& filter,
                                            bool final) {
  ASSIGN_OR_RETURN(std::unique_ptr<TuningLog> log, TuningLog::Open(db, TuningLog::Mode::kReadOnly));
  ASSIGN_OR_RETURN(std::vector<Record> records, log->ListRecords(filter));
  std::erase_if(records, [final](const Record& r) { return r.final != final; });
  return records;
}

}  // namespace

absl::StatusOr<std::vector<Record>> RecordsOfJob(const std::string& db, int64_t job_id) {
  return Records(db, RecordFilter{.job_id = job_id}, false);
}

absl::StatusOr<std::vector<Record>> FinalRecordsOfJob(const std::string& db, int64_t job_id) {
  return Records(db, RecordFilter{.job_id = job_id}, true);
}

absl::StatusOr<std::vector<Record>> AllRecords(const std::string& db) {
  return Records(db, RecordFilter{}, false);
}

std::map<std::string, int> CountPerConfig(const std::vector<Record>& records) {
  std::map<std::string, int> count;
  for (const Record& r : records) {
    ++count[StrCat(r.template_name, " ", r.config)];
  }
  return count;
}

uint64_t FirstLineJobId(const std::string& out) {
  std::string_view first = out;
  first = first.substr(0, first.find('\n'));
  std::optional<int64_t> id = ParseInt(first);
  return id && *id > 0 ? static_cast<uint64_t>(*id) : 0;
}

}  // namespace tune::testing
