#include "codegen/tools/tuning_log_lookup.h"

#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

absl::StatusOr<KernelChoice> ChoiceOf(const Record& record) {
  absl::StatusOr<Config> config = ParseConfig(record.config);
  if (!config.ok()) {
    return absl::DataLossError(
        StrCat("tuning log record ", record.uid, " has config '", record.config,
               "' that does not parse: ", std::string(config.status().message())));
  }
  return KernelChoice{record.template_name, record.template_version, *std::move(config), true};
}

}  // namespace

BestConfigLookup TuningLogLookup(std::shared_ptr<TuningLog> log) {
  return
      [log = std::move(log)](const Workload& workload,
                             const Target& target) -> absl::StatusOr<std::optional<KernelChoice>> {
        BestQuery query;
        query.workload = workload.ToString();
        query.device_key = target.DeviceKey();
        std::optional<Record> best;
        for (const KernelTemplate* tpl : TemplatesFor(workload, target)) {
          BestQuery current = query;
          current.template_name = std::string(tpl->name);
          current.template_version = tpl->version;
          ASSIGN_OR_RETURN(std::optional<Record> record, log->QueryBest(current));
          if (record.has_value() && (!best.has_value() || record->measurement.MedianSecs() <
                                                              best->measurement.MedianSecs())) {
            best = std::move(record);
          }
        }
        if (!best.has_value()) {
          ASSIGN_OR_RETURN(best, log->QueryBest(query));
        }
        if (!best.has_value()) {
          return std::optional<KernelChoice>();
        }
        ASSIGN_OR_RETURN(KernelChoice choice, ChoiceOf(*best));
        return std::optional<KernelChoice>(std::move(choice));
      };
}

}  // namespace tune
