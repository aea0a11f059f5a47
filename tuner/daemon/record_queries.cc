#include "tuner/daemon/record_queries.h"

#include <algorithm>
#include <string>

#include "common/status.h"
#include "common/strings.h"
#include "common/target.h"

namespace tune::tuner {
namespace {

// The context a QueryBest asks about: exactly one of a device key or a (resolved) target.
absl::Status SetContext(const v1::QueryBestRequest& request, BestQuery& query) {
  if (request.device_key().empty() == request.target().empty()) {
    return absl::InvalidArgumentError(
        "device_key, target: set exactly one: a target (e.g. 'llvm -mcpu=native -threads=1') "
        "for the records measured with it, or a device key (e.g. 'cpu/x86_64/znver4') for those "
        "of every target on that device");
  }
  if (!request.device_key().empty()) {
    query.device_key = request.device_key();
    return absl::OkStatus();
  }
  absl::StatusOr<Target> target = Target::Parse(request.target());
  if (!target.ok()) {
    return absl::InvalidArgumentError(StrCat("target: ", std::string(target.status().message())));
  }
  query.target = target->Resolved().ToString();
  query.device_key = target->Resolved().DeviceKey();
  query.flush_cache = request.flush_cache();
  return absl::OkStatus();
}

absl::StatusOr<ShapeRange> ParseRange(const std::string& text) {
  absl::StatusOr<ShapeRange> range = ShapeRange::Parse(text);
  if (!range.ok()) {
    return absl::InvalidArgumentError(StrCat("workload: ", range.status().message()));
  }
  return range;
}

}  // namespace

absl::StatusOr<ValidatedBestQuery> ValidateQueryBest(const v1::QueryBestRequest& request) {
  ValidatedBestQuery valid;
  BestQuery& query = valid.query;
  if (ShapeRange::IsRange(request.workload())) {
    ASSIGN_OR_RETURN(valid.range, ParseRange(request.workload()));
    query.workload = valid.range->ToString();
  } else {
    ASSIGN_OR_RETURN(query.workload, CanonicalWorkload(request.workload(), "workload"));
  }
  RETURN_IF_ERROR(SetContext(request, query));
  if (request.template_version() < 0) {
    return absl::InvalidArgumentError(StrCat("template_version: ", request.template_version(),
                                             " is negative; expected 0 (any) or a version"));
  }
  if (request.template_version() > 0) {
    query.template_version = request.template_version();
  }
  if (!request.tune_version().empty()) {
    query.tune_version = request.tune_version();
  }
  if (request.top_k() < 0 || request.top_k() > kMaxTopK) {
    return absl::InvalidArgumentError(
        StrCat("top_k: ", request.top_k(), " is out of range; expected 0 (one) to ", kMaxTopK));
  }
  valid.top_k = std::max(1, request.top_k());
  return valid;
}

absl::StatusOr<ValidatedExport> ValidateExportRecords(const v1::ExportRecordsRequest& request) {
  ValidatedExport valid;
  if (ShapeRange::IsRange(request.workload())) {
    ASSIGN_OR_RETURN(valid.range, ParseRange(request.workload()));
  } else if (!request.workload().empty()) {
    ASSIGN_OR_RETURN(valid.filter.workload, CanonicalWorkload(request.workload(), "workload"));
  }
  if (!request.device_key().empty()) {
    valid.filter.device_key = request.device_key();
  }
  valid.include_failures = request.include_failures();
  return valid;
}

}  // namespace tune::tuner
