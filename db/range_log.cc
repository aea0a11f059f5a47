// TuningLog's answers about shape ranges (common/shape_range.h): which of a range's sizes have
// records. A range has no rows of its own: its sizes are workloads like any other.
#include <algorithm>

#include "common/shape_range.h"
#include "common/status.h"
#include "db/tables.h"
#include "db/tuning_log.h"

namespace tune {

absl::StatusOr<std::vector<int64_t>> TuningLog::RangeSizesMeasured(const ShapeRange& range,
                                                                   const std::string& device_key,
                                                                   bool successful_only) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int64_t> sizes;
  std::optional<int64_t> device_id;
  if (!device_key.empty()) {
    ASSIGN_OR_RETURN(device_id, tables::FindDeviceId(*db_, device_key));
    if (!device_id) {
      return sizes;
    }
  }
  // The range's workloads share the text before its size: a prefix of the workload's text.
  ASSIGN_OR_RETURN(sqlite::Statement stmt,
                   db_->Prepare("SELECT w.text FROM workloads w WHERE substr(w.text, 1, "
                                "length(?1)) = ?1 AND EXISTS (SELECT 1 FROM records r WHERE "
                                "r.workload_id = w.id AND (?2 = 0 OR r.device_id = ?2) AND "
                                "(?3 = 0 OR r.error_kind = 'NONE'))"));
  stmt.BindAll(range.Before(), device_id.value_or(0), successful_only ? 1 : 0);
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) {
      break;
    }
    absl::StatusOr<Workload> workload = Workload::Parse(stmt.ColumnText(0));
    if (workload.ok()) {
      if (const int64_t size = range.SizeOf(*workload); size > 0) {
        sizes.push_back(size);
      }
    }
  }
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

}  // namespace tune
