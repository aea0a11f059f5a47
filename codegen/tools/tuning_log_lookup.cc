#include "codegen/tools/tuning_log_lookup.h"

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
  return KernelChoice{record.template_name, record.template_version, *std::move(config), true,
                      std::move(note)};
}

// The fastest record of `query` among `templates`, each at its current version or at any.
absl::StatusOr<std::optional<Record>> Fastest(TuningLog& log, const BestQuery& query,
                                              const std::vector<const KernelTemplate*>& templates,
                                              bool current_version) {
  std::optional<Record> best;
  for (const KernelTemplate* tpl : templates) {
    BestQuery q = query;
    q.template_name = std::string(tpl->name);
    if (current_version) {
      q.template_version = tpl->version;
    }
    ASSIGN_OR_RETURN(std::optional<Record> record, log.QueryBest(q));
    if (record.has_value() &&
        (!best.has_value() || record->measurement.MedianSecs() < best->measurement.MedianSecs())) {
      best = std::move(record);
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
        ASSIGN_OR_RETURN(std::optional<Record> record, Fastest(*log, exact, templates, current));
        if (record.has_value()) {
          ASSIGN_OR_RETURN(KernelChoice choice,
                           ChoiceOf(*record, StrCat("exact match: measured with '", record->target,
                                                    "'", clock_note(clocks))));
          return std::optional<KernelChoice>(std::move(choice));
        }
      }
    }
    for (ClockScope clocks : {ClockScope::kDeviceTime, ClockScope::kEvents}) {
      BestQuery device{
          .workload = workload.ToString(), .device_key = target.DeviceKey(), .clocks = clocks};
      for (bool current : {true, false}) {
        ASSIGN_OR_RETURN(std::optional<Record> record, Fastest(*log, device, templates, current));
        if (record.has_value()) {
          ASSIGN_OR_RETURN(
              KernelChoice choice,
              ChoiceOf(*record,
                       StrCat("FALLBACK: no record for '", target.ToString(),
                              "' with warm caches; this config was measured with '", record->target,
                              "'", ColdCache(*record) ? " with cold caches" : "", " on ",
                              record->device_key, clock_note(clocks))));
          return std::optional<KernelChoice>(std::move(choice));
        }
      }
    }
    return std::optional<KernelChoice>();
  };
}

}  // namespace tune
