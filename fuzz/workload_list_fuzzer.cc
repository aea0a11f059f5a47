// ParseWorkloadList (common/workload_list.h): a model's workloads file. Invariants: a rejection
// is InvalidArgument naming the source; an accepted list holds 1 to kMaxModelWorkloads distinct
// canonical workloads with finite positive weights, and FormatWorkloadList's text parses back
// to the same list, weights included.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/workload_list.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = tune::fuzz::AsText(data, size);
  absl::StatusOr<std::vector<tune::WeightedWorkload>> list =
      tune::ParseWorkloadList(text, "fuzz.txt");
  if (!list.ok()) {
    TUNE_CHECK(absl::IsInvalidArgument(list.status())) << list.status();
    TUNE_CHECK(tune::fuzz::StartsWith(list.status().message(), "fuzz.txt")) << list.status();
    return 0;
  }
  TUNE_CHECK(!list->empty() && list->size() <= static_cast<size_t>(tune::kMaxModelWorkloads));
  std::set<std::string> seen;
  for (const tune::WeightedWorkload& entry : *list) {
    TUNE_CHECK(seen.insert(entry.workload.ToString()).second) << entry.workload.ToString();
    TUNE_CHECK(std::isfinite(entry.weight) && entry.weight > 0) << entry.weight;
  }
  const std::string formatted = tune::FormatWorkloadList(*list);
  absl::StatusOr<std::vector<tune::WeightedWorkload>> again =
      tune::ParseWorkloadList(formatted, "formatted");
  TUNE_CHECK(again.ok()) << "the formatted list does not parse: " << again.status() << "\n"
                         << formatted;
  TUNE_CHECK(again->size() == list->size()) << formatted;
  for (size_t i = 0; i < list->size(); ++i) {
    TUNE_CHECK((*again)[i].workload == (*list)[i].workload) << formatted;
    TUNE_CHECK((*again)[i].weight == (*list)[i].weight)
        << (*again)[i].weight << " != " << (*list)[i].weight << " in\n"
        << formatted;
  }
  return 0;
}
