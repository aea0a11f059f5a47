// What a client may ask of the tuning log through the daemon, checked: the QueryBest and
// ExportRecords requests of tune.v1.Tuner translated into the log's BestQuery and RecordFilter.
// The gRPC handlers (tuner_service.cc) run these, then the query; nothing here reads the log.
#pragma once

#include <optional>

#include "absl/status/statusor.h"
#include "common/shape_range.h"
#include "db/record.h"
#include "tune/v1/tuner.pb.h"

namespace tune::tuner {

/// Largest QueryBestRequest.top_k.
inline constexpr int kMaxTopK = 1000;

/// A QueryBest request, checked: what to ask TuningLog::QueryTopK.
struct ValidatedBestQuery {
  /// Canonical workload; either a device key alone (target empty, flush_cache false) or a
  /// resolved canonical target with its device key and the requested cache state; the
  /// template and tune version filters when the request sets them. template_name is never set.
  BestQuery query;
  /// How many records, in [1, kMaxTopK] (a request's 0 means 1).
  int top_k = 1;
  /// A shape range was asked: query.workload is its text, and each size is asked in turn.
  std::optional<ShapeRange> range;
};

/// Checks a QueryBest request, in this order: the workload parses (canonicalised; a shape
/// range's text is parsed as one, common/shape_range.h); exactly one
/// of device_key and target is set; the target parses (with the known libraries) and
/// "-mcpu=native" is resolved to the daemon host's CPU; template_version >= 0 (0: any);
/// top_k in [0, kMaxTopK] (0: 1). device_key and tune_version are taken as given. The first
/// problem is InvalidArgument "<field>: <problem>" naming the request's field (`workload`,
/// `device_key, target` when both or neither is set, `target`, `template_version`, `top_k`).
absl::StatusOr<ValidatedBestQuery> ValidateQueryBest(const v1::QueryBestRequest& request);

/// An ExportRecords request, checked: what to ask TuningLog::ListRecords, page by page.
struct ValidatedExport {
  /// The canonical workload and the device key when the request sets them; job_id, after_id
  /// and limit unset (the caller pages).
  RecordFilter filter;
  /// Export failed trials too; otherwise only successful records.
  bool include_failures = false;
  /// A shape range was asked: filter.workload is unset, and each size is exported in turn.
  std::optional<ShapeRange> range;
};

/// Checks an ExportRecords request: a workload, when set, parses (canonicalised; or as a shape
/// range); the device
/// key is taken as given (empty: all). A problem is InvalidArgument "workload: <problem>".
absl::StatusOr<ValidatedExport> ValidateExportRecords(const v1::ExportRecordsRequest& request);

}  // namespace tune::tuner
