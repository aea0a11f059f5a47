// The daemon's ExportRecords without a gRPC server: a tune.v1.ExportRecordsRequest (the input
// in protobuf text format, else binary) through ValidateExportRecords
// (tuner/record_queries.h), then, as TunerService::ExportRecords does, TuningLog::ListRecords
// page by page (small pages here, so that paging is exercised) on a seeded tuning log in the
// scratch directory (fuzz/query_fuzz_util.h); a shape range's text exports each of its sizes
// with records in turn. Invariants: a rejection is InvalidArgument
// "workload: ..." for a workload that does not parse; an accepted request's filter holds the
// canonical workload and the device key as given, nothing else; its pages are read without
// error; the export is exactly the log's records of that workload and device key (successful
// ones only unless include_failures), in id order, once each, and CountRecords agrees.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/shape_range.h"
#include "common/status.h"
#include "common/workload.h"
#include "db/record.h"
#include "db/tuning_log.h"
#include "fuzz/fuzz_util.h"
#include "fuzz/query_fuzz_util.h"
#include "tune/v1/tuner.pb.h"
#include "tuner/daemon/record_queries.h"

namespace {

// Records per ListRecords call (the daemon reads 1000).
constexpr int64_t kPage = 7;

// As TunerService::ExportRecords for a shape range: each size with records on the device (with
// a successful one unless include_failures), ascending, its records in id order.
int CheckRangeExport(const tune::tuner::ValidatedExport& valid) {
  tune::TuningLog& log = *tune::fuzz::Seeded().log;
  const tune::ShapeRange& range = *valid.range;
  const std::string device = valid.filter.device_key.value_or("");
  absl::StatusOr<std::vector<int64_t>> sizes =
      log.RangeSizesMeasured(range, device, !valid.include_failures);
  TUNE_CHECK(sizes.ok()) << sizes.status();
  std::vector<int64_t> exported;
  for (int64_t size : *sizes) {
    tune::RecordFilter filter = valid.filter;
    filter.workload = range.At(size).ToString();
    absl::StatusOr<std::vector<tune::Record>> records = log.ListRecords(filter);
    TUNE_CHECK(records.ok()) << records.status();
    for (const tune::Record& r : *records) {
      if (valid.include_failures || r.measurement.ok()) {
        exported.push_back(r.id);
      }
    }
  }
  std::vector<std::pair<int64_t, int64_t>> expected;  // (size, id)
  for (const tune::Record& r : tune::fuzz::Seeded().records) {
    absl::StatusOr<tune::Workload> w = tune::Workload::Parse(r.workload);
    if (w.ok() && range.SizeOf(*w) > 0 && (device.empty() || r.device_key == device) &&
        (valid.include_failures || r.measurement.ok())) {
      expected.emplace_back(range.SizeOf(*w), r.id);
    }
  }
  std::sort(expected.begin(), expected.end());
  std::vector<int64_t> ids;
  for (const auto& [size, id] : expected) {
    ids.push_back(id);
  }
  TUNE_CHECK(exported == ids) << exported.size() << " records exported, " << ids.size()
                              << " expected";
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)tune::fuzz::Seeded();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tune::v1::ExportRecordsRequest request;
  if (!tune::fuzz::ParseRequest(data, size, request)) {
    return 0;
  }
  absl::StatusOr<tune::tuner::ValidatedExport> valid = tune::tuner::ValidateExportRecords(request);
  if (!valid.ok()) {
    TUNE_CHECK(absl::IsInvalidArgument(valid.status())) << valid.status();
    TUNE_CHECK(tune::fuzz::StartsWith(valid.status().message(), "workload: ")) << valid.status();
    TUNE_CHECK(!request.workload().empty() && !tune::Workload::Parse(request.workload()).ok())
        << valid.status();
    return 0;
  }
  const tune::RecordFilter& filter = valid->filter;
  if (valid->range) {
    absl::StatusOr<tune::ShapeRange> range = tune::ShapeRange::Parse(request.workload());
    TUNE_CHECK(range.ok() && range->ToString() == valid->range->ToString() && !filter.workload)
        << request.workload();
    return CheckRangeExport(*valid);
  }
  if (request.workload().empty()) {
    TUNE_CHECK(!filter.workload.has_value());
  } else {
    absl::StatusOr<tune::Workload> workload = tune::Workload::Parse(request.workload());
    TUNE_CHECK(workload.ok() && filter.workload == workload->ToString()) << request.workload();
    TUNE_CHECK(tune::Workload::Parse(*filter.workload)->ToString() == *filter.workload);
  }
  TUNE_CHECK(filter.device_key == (request.device_key().empty()
                                       ? std::nullopt
                                       : std::optional<std::string>(request.device_key())));
  TUNE_CHECK(!filter.job_id && !filter.limit && filter.after_id == 0);
  TUNE_CHECK(valid->include_failures == request.include_failures());

  // As TunerService::ExportRecords: pages in id order, failures skipped unless asked for.
  tune::TuningLog& log = *tune::fuzz::Seeded().log;
  tune::RecordFilter paged = filter;
  paged.limit = kPage;
  std::vector<int64_t> exported;
  int64_t listed = 0;
  while (true) {
    absl::StatusOr<std::vector<tune::Record>> page = log.ListRecords(paged);
    TUNE_CHECK(page.ok()) << "an accepted request's query fails: " << page.status();
    TUNE_CHECK(static_cast<int64_t>(page->size()) <= kPage);
    listed += static_cast<int64_t>(page->size());
    for (const tune::Record& record : *page) {
      if (valid->include_failures || record.measurement.ok()) {
        exported.push_back(record.id);
      }
    }
    if (static_cast<int64_t>(page->size()) < kPage) {
      break;
    }
    paged.after_id = page->back().id;
  }
  absl::StatusOr<int64_t> count = log.CountRecords(filter);
  TUNE_CHECK(count.ok()) << count.status();
  TUNE_CHECK(*count == listed) << *count << " counted, " << listed << " listed";

  std::vector<int64_t> expected;
  for (const tune::Record& r : tune::fuzz::Seeded().records) {
    if ((!filter.workload || r.workload == *filter.workload) &&
        (!filter.device_key || r.device_key == *filter.device_key) &&
        (valid->include_failures || r.measurement.ok())) {
      expected.push_back(r.id);
    }
  }
  TUNE_CHECK(exported == expected)
      << exported.size() << " records exported, " << expected.size() << " expected";
  return 0;
}
