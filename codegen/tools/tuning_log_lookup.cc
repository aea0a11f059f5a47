#include "codegen/tools/tuning_log_lookup.h"

#include <map>

#include "common/fingerprint.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

absl::StatusOr<KernelChoice> ChoiceOf(const Record& record, std::string note) {
  absl::StatusOr<Config> config = ParseConfig(record.config);
  if (!config.ok()) {
    return absl::DataLossError(
        StrCat("tuning log record ", record.uid, " has config '", record.config,
               "' that does not parse: ", std::string(config.status().message())));
  }
  return KernelChoice{record.template_name, record.template_version,
                      *std::move(config),   true,
                      std::move(note),      record.measurement.MedianSecs()};
}

// How new a record's fingerprint is on its device: 0 for the newest, 1 for the one before, ...;
// a fingerprint the log does not list counts as the oldest.
class FingerprintAge {
 public:
  explicit FingerprintAge(TuningLog& log) : log_(log) {}

  absl::StatusOr<size_t> Of(const Record& record) {
    auto [it, inserted] = devices_.try_emplace(record.device_key);
    if (inserted) {
      ASSIGN_OR_RETURN(it->second, log_.ListFingerprints(record.device_key));
    }
    const std::vector<SeenFingerprint>& seen = it->second;
    for (size_t age = 0; age < seen.size(); ++age) {
      if (seen[age].text == record.measurement.device_fingerprint) {
        return age;
      }
    }
    return seen.size();
  }

  /// "" for a record of the newest fingerprint; else the note tune-compile prints with it.
  absl::StatusOr<std::string> UnverifiedNote(const Record& record) {
    ASSIGN_OR_RETURN(size_t age, Of(record));
    if (age == 0) {
      return std::string();
    }
    const std::vector<SeenFingerprint>& seen = devices_[record.device_key];
    return tune::UnverifiedNote(record.device_key, seen.front().text,
                                record.measurement.device_fingerprint);
  }

 private:
  TuningLog& log_;
  std::map<std::string, std::vector<SeenFingerprint>> devices_;
};

// The best record of `query` among `templates`, each at its current version or at any: the
// fastest among those of the newest fingerprint (each template's answer comes from the newest
// fingerprint it has records of; an older one's only where no template has the newest's).
absl::StatusOr<std::optional<Record>> Fastest(TuningLog& log, const BestQuery& query,
                                              const std::vector<const KernelTemplate*>& templates,
                                              bool current_version, FingerprintAge& ages) {
  std::optional<Record> best;
  size_t best_age = 0;
  for (const KernelTemplate* tpl : templates) {
    BestQuery q = query;
    q.template_name = std::string(tpl->name);
    if (current_version) {
      q.template_version = tpl->version;
    }
    ASSIGN_OR_RETURN(std::optional<Record> record, log.QueryBest(q));
    if (!record.has_value()) {
      continue;
    }
    ASSIGN_OR_RETURN(size_t age, ages.Of(*record));
    if (!best.has_value() || age < best_age ||
        (age == best_age && record->measurement.MedianSecs() < best->measurement.MedianSecs())) {
      best = std::move(record);
      best_age = age;
    }
  }
  return best;
}

}  // namespace

BestConfigLookup TuningLogLookup(std::shared_ptr<TuningLog> log, Catalog catalog) {
  return [log = std::move(log), catalog = std::move(catalog)](
             const Workload& workload, const Target& given,
             std::string_view only_template) -> absl::StatusOr<std::optional<KernelChoice>> {
    const Target target = given.Resolved();  // records name the CPU, never "native"
    FingerprintAge ages(*log);
    std::vector<const KernelTemplate*> templates = catalog.TemplatesFor(workload, target);
    if (!only_template.empty()) {
      std::erase_if(templates, [&](const KernelTemplate* t) { return t->name != only_template; });
    }
    // Within each stage, device time first: GPU records timed call by call (events) only
    // when no record of the stage was timed by graph replay.
    auto clock_note = [](ClockScope clocks) -> std::string {
      return clocks == ClockScope::kEvents
                 ? "; FALLBACK: no record timed by graph replay (device time); this one was "
                   "timed call by call (events)"
                 : "";
    };
    for (ClockScope clocks : {ClockScope::kDeviceTime, ClockScope::kEvents}) {
      BestQuery exact{
          .workload = workload.ToString(), .target = target.ToString(), .clocks = clocks};
      for (bool current : {true, false}) {
        ASSIGN_OR_RETURN(std::optional<Record> record,
                         Fastest(*log, exact, templates, current, ages));
        if (record.has_value()) {
          ASSIGN_OR_RETURN(std::string unverified, ages.UnverifiedNote(*record));
          ASSIGN_OR_RETURN(KernelChoice choice,
                           ChoiceOf(*record, StrCat("exact match: measured with '", record->target,
                                                    "'", clock_note(clocks), unverified)));
          return std::optional<KernelChoice>(std::move(choice));
        }
      }
    }
    for (ClockScope clocks : {ClockScope::kDeviceTime, ClockScope::kEvents}) {
      BestQuery device{
          .workload = workload.ToString(), .device_key = target.DeviceKey(), .clocks = clocks};
      for (bool current : {true, false}) {
        ASSIGN_OR_RETURN(std::optional<Record> record,
                         Fastest(*log, device, templates, current, ages));
        if (record.has_value()) {
          ASSIGN_OR_RETURN(std::string unverified, ages.UnverifiedNote(*record));
          ASSIGN_OR_RETURN(
              KernelChoice choice,
              ChoiceOf(*record,
                       StrCat("FALLBACK: no record for '", target.ToString(),
                              "' with warm caches; this config was measured with '", record->target,
                              "'", ColdCache(*record) ? " with cold caches" : "", " on ",
                              record->device_key, clock_note(clocks), unverified)));
          return std::optional<KernelChoice>(std::move(choice));
        }
      }
    }
    return std::optional<KernelChoice>();
  };
}

MeasuredSizesLookup TuningLogSizes(std::shared_ptr<TuningLog> log) {
  return [log = std::move(log)](const ShapeRange& range,
                                const Target& target) -> absl::StatusOr<std::vector<int64_t>> {
    return log->RangeSizesMeasured(range, target.Resolved().DeviceKey());
  };
}

}  // namespace tune
