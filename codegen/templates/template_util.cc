#include "codegen/templates/template_util.h"

#include <algorithm>

#include "common/status.h"
#include "common/strings.h"

namespace tune {

std::vector<int64_t> ClipToExtent(const std::vector<int64_t>& candidates, int64_t extent) {
  std::vector<int64_t> out;
  for (int64_t c : candidates) {
    if (c < extent) {
      out.push_back(c);
    }
  }
  out.push_back(extent);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int64_t> AtMost(const std::vector<int64_t>& candidates, int64_t limit,
                            int64_t fallback) {
  std::vector<int64_t> out;
  for (int64_t c : candidates) {
    if (c <= limit) {
      out.push_back(c);
    }
  }
  if (out.empty()) {
    out.push_back(fallback);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int64_t LargestAtMost(const std::vector<int64_t>& values, int64_t limit) {
  TUNE_CHECK(!values.empty());
  int64_t best = *std::min_element(values.begin(), values.end());
  for (int64_t v : values) {
    if (v <= limit && v > best) {
      best = v;
    }
  }
  return best;
}

int64_t KnobValue(const Config& config, std::string_view name) {
  auto it = config.find(name);
  TUNE_CHECK(it != config.end()) << "config has no knob '" << name << "'";
  return it->second;
}

absl::Status CheckBuildRequest(const KernelTemplate& tpl, const Workload& workload,
                               const Target& target, const Config& config) {
  if (workload.op() != tpl.op) {
    return absl::InvalidArgumentError(StrCat("template ", tpl.name, " builds ", OpKindName(tpl.op),
                                             " kernels, not '", workload.ToString(), "'"));
  }
  if (target.kind != tpl.target_kind) {
    return absl::InvalidArgumentError(StrCat("template ", tpl.name, " is for ",
                                             TargetKindName(tpl.target_kind), " targets, not '",
                                             target.ToString(), "'"));
  }
  if (!tpl.library.empty() && !target.HasLib(tpl.library)) {
    return absl::InvalidArgumentError(StrCat("template ", tpl.name, " calls ", tpl.library,
                                             ": its target must name it (-libs=", tpl.library,
                                             "), not '", target.ToString(), "'"));
  }
  absl::Status valid = tpl.space(workload, target).Validate(config);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(
        StrCat("config ", ConfigToString(config), " is not in the space of ", tpl.name, " for ",
               workload.ToString(), ": ", std::string(valid.message())));
  }
  return absl::OkStatus();
}

}  // namespace tune
