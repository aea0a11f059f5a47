// The daemon's QueryBest without a gRPC server: a tune.v1.QueryBestRequest (the input in
// protobuf text format, else binary) through ValidateQueryBest (tuner/record_queries.h), then,
// as TunerService::QueryBest does, TuningLog::QueryTopK on a seeded tuning log in the scratch
// directory (fuzz/query_fuzz_util.h), falling back to the target's device key when the target
// has no records. Invariants: a rejection is InvalidArgument "<field>: ..." naming a request
// field that is wrong; an accepted request is canonical (workload text, resolved target and its
// device key; top_k in [1, kMaxTopK]; filters as requested); its queries run without error and
// return min(top_k, matching configs) successful records of the workload in the asked context
// that pass the filters, one per config, the decided best first, then the fastest configs
// fastest first, each at its fastest measurement.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/shape_range.h"
#include "common/status.h"
#include "common/target.h"
#include "common/workload.h"
#include "db/record.h"
#include "db/tuning_log.h"
#include "fuzz/fuzz_util.h"
#include "fuzz/query_fuzz_util.h"
#include "tune/v1/tuner.pb.h"
#include "tuner/daemon/record_queries.h"

namespace {

using ConfigKey = std::tuple<std::string, int, std::string>;

ConfigKey KeyOf(const tune::Record& r) { return {r.template_name, r.template_version, r.config}; }

bool Matches(const tune::Record& r, const tune::BestQuery& q) {
  return r.workload == q.workload && r.measurement.ok() &&
         (q.target.empty() ? r.device_key == q.device_key
                           : r.target == q.target && tune::ColdCache(r) == q.flush_cache) &&
         (!q.template_name || r.template_name == *q.template_name) &&
         (!q.template_version || r.template_version == *q.template_version) &&
         (!q.tune_version || r.tune_version == *q.tune_version);
}

// The request is wrong where the rejection says it is.
void CheckRejection(const tune::v1::QueryBestRequest& request, const absl::Status& status) {
  TUNE_CHECK(absl::IsInvalidArgument(status)) << status;
  const absl::string_view message = status.message();
  if (tune::fuzz::StartsWith(message, "workload: ")) {
    TUNE_CHECK(!tune::Workload::Parse(request.workload()).ok()) << status;
  } else if (tune::fuzz::StartsWith(message, "device_key, target: ")) {
    TUNE_CHECK(request.device_key().empty() == request.target().empty()) << status;
  } else if (tune::fuzz::StartsWith(message, "target: ")) {
    TUNE_CHECK(!tune::Target::Parse(request.target()).ok()) << status;
  } else if (tune::fuzz::StartsWith(message, "template_version: ")) {
    TUNE_CHECK(request.template_version() < 0) << status;
  } else if (tune::fuzz::StartsWith(message, "top_k: ")) {
    TUNE_CHECK(request.top_k() < 0 || request.top_k() > tune::tuner::kMaxTopK) << status;
  } else {
    TUNE_CHECK(false) << "the rejection names no request field: " << status;
  }
}

// The translation keeps what was asked, in canonical form.
void CheckValidated(const tune::v1::QueryBestRequest& request,
                    const tune::tuner::ValidatedBestQuery& valid) {
  const tune::BestQuery& q = valid.query;
  if (tune::ShapeRange::IsRange(request.workload())) {
    absl::StatusOr<tune::ShapeRange> range = tune::ShapeRange::Parse(request.workload());
    TUNE_CHECK(range.ok() && valid.range && valid.range->ToString() == range->ToString() &&
               q.workload == range->ToString())
        << q.workload;
  } else {
    absl::StatusOr<tune::Workload> workload = tune::Workload::Parse(q.workload);
    TUNE_CHECK(workload.ok() && workload->ToString() == q.workload && !valid.range) << q.workload;
  }
  TUNE_CHECK(request.device_key().empty() != request.target().empty());
  if (!request.device_key().empty()) {
    TUNE_CHECK(q.device_key == request.device_key() && q.target.empty() && !q.flush_cache);
  } else {
    absl::StatusOr<tune::Target> target = tune::Target::Parse(q.target);
    TUNE_CHECK(target.ok() && target->ToString() == q.target) << q.target;
    TUNE_CHECK(target->kind != tune::TargetKind::kLlvm || target->cpu != "native") << q.target;
    TUNE_CHECK(q.device_key == target->DeviceKey()) << q.device_key;
    TUNE_CHECK(q.flush_cache == request.flush_cache());
  }
  TUNE_CHECK(!q.template_name.has_value());
  TUNE_CHECK(request.template_version() >= 0);
  TUNE_CHECK(q.template_version == (request.template_version() > 0
                                        ? std::optional<int>(request.template_version())
                                        : std::nullopt));
  TUNE_CHECK(q.tune_version == (request.tune_version().empty()
                                    ? std::nullopt
                                    : std::optional<std::string>(request.tune_version())));
  TUNE_CHECK(valid.top_k >= 1 && valid.top_k <= tune::tuner::kMaxTopK) << valid.top_k;
  TUNE_CHECK(valid.top_k == std::max(1, request.top_k())) << valid.top_k;
}

// QueryTopK's answer against the seeded records.
void CheckAnswer(const tune::BestQuery& q, int k, const std::vector<tune::Record>& answer) {
  const tune::fuzz::SeededLog& seeded = tune::fuzz::Seeded();
  // The fastest measurement of each config that matches.
  std::map<ConfigKey, double> fastest;
  for (const tune::Record& r : seeded.records) {
    if (Matches(r, q)) {
      auto it = fastest.emplace(KeyOf(r), r.measurement.MedianSecs()).first;
      it->second = std::min(it->second, r.measurement.MedianSecs());
    }
  }
  TUNE_CHECK(answer.size() == std::min<size_t>(k, fastest.size()))
      << answer.size() << " records for top_k " << k << " of " << fastest.size() << " configs";
  // With a target, the decided best comes first when it is within the query.
  bool decided_first = false;
  if (!q.target.empty() && q.workload == seeded.decision.workload &&
      q.target == seeded.decision.target && q.flush_cache == seeded.decision.flush_cache) {
    for (const tune::Record& r : seeded.records) {
      if (r.id == seeded.decision.record_id && Matches(r, q)) {
        decided_first = true;
      }
    }
  }
  if (decided_first) {
    TUNE_CHECK(!answer.empty() && answer.front().id == seeded.decision.record_id)
        << "the decided best " << seeded.decision.record_id << " is not first";
  }
  std::set<ConfigKey> configs;
  for (size_t i = 0; i < answer.size(); ++i) {
    const tune::Record& r = answer[i];
    TUNE_CHECK(Matches(r, q)) << "record " << r.id << " (" << r.workload << " on " << r.target
                              << ") does not match the query";
    TUNE_CHECK(configs.insert(KeyOf(r)).second) << "config " << r.config << " twice";
    if (i == 0 && decided_first) {
      continue;
    }
    TUNE_CHECK(r.measurement.MedianSecs() == fastest.at(KeyOf(r)))
        << "record " << r.id << " is not its config's fastest";
    if (i > (decided_first ? 1u : 0u)) {
      TUNE_CHECK(answer[i - 1].measurement.MedianSecs() <= r.measurement.MedianSecs())
          << "records " << answer[i - 1].id << ", " << r.id << " are not fastest first";
    }
  }
  // A config left out is no faster than the last one in.
  if (!answer.empty() && !(decided_first && answer.size() == 1)) {
    for (const auto& [config, secs] : fastest) {
      TUNE_CHECK(configs.contains(config) || secs >= answer.back().measurement.MedianSecs())
          << "a faster config was left out: " << std::get<2>(config);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)tune::fuzz::Seeded();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tune::v1::QueryBestRequest request;
  if (!tune::fuzz::ParseRequest(data, size, request)) {
    return 0;
  }
  absl::StatusOr<tune::tuner::ValidatedBestQuery> valid = tune::tuner::ValidateQueryBest(request);
  if (!valid.ok()) {
    CheckRejection(request, valid.status());
    return 0;
  }
  CheckValidated(request, *valid);

  // As TunerService::QueryBest: the exact context, else the target's device; for a range, the
  // best of each size with a successful record on the device.
  tune::TuningLog& log = *tune::fuzz::Seeded().log;
  std::vector<tune::BestQuery> queries = {valid->query};
  int k = valid->top_k;
  if (valid->range) {
    absl::StatusOr<std::vector<int64_t>> sizes =
        log.RangeSizesMeasured(*valid->range, valid->query.device_key);
    TUNE_CHECK(sizes.ok()) << sizes.status();
    std::set<int64_t> want;
    for (const tune::Record& r : tune::fuzz::Seeded().records) {
      absl::StatusOr<tune::Workload> w = tune::Workload::Parse(r.workload);
      if (w.ok() && r.measurement.ok() && r.device_key == valid->query.device_key &&
          valid->range->SizeOf(*w) > 0) {
        want.insert(valid->range->SizeOf(*w));
      }
    }
    TUNE_CHECK(std::vector<int64_t>(want.begin(), want.end()) == *sizes)
        << sizes->size() << " sizes listed, " << want.size() << " measured";
    queries.clear();
    for (int64_t size : *sizes) {
      queries.push_back(valid->query);
      queries.back().workload = valid->range->At(size).ToString();
    }
    k = 1;
  }
  for (const tune::BestQuery& query : queries) {
    absl::StatusOr<std::vector<tune::Record>> records = log.QueryTopK(query, k);
    TUNE_CHECK(records.ok()) << "an accepted request's query fails: " << records.status();
    CheckAnswer(query, k, *records);
    if (!query.target.empty() && records->empty()) {
      tune::BestQuery device = query;
      device.target.clear();
      records = log.QueryTopK(device, k);
      TUNE_CHECK(records.ok()) << "the device fallback's query fails: " << records.status();
      CheckAnswer(device, k, *records);
    }
  }
  return 0;
}
