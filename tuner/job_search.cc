#include "tuner/job_search.h"

#include <algorithm>

#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"

namespace tune::tuner {

absl::StatusOr<std::unique_ptr<JobSearch>> JobSearch::Create(
    const Workload& workload, const Target& target,
    const std::vector<const KernelTemplate*>& templates, std::string_view strategy, uint64_t seed,
    const std::vector<ConfigKey>& measured, std::string_view saved_state) {
  if (templates.empty()) {
    return absl::InvalidArgumentError("spec.templates: the job has no template to search");
  }
  nlohmann::json saved;
  if (!saved_state.empty()) {
    saved = nlohmann::json::parse(saved_state, nullptr, /*allow_exceptions=*/false);
    if (!saved.is_object()) {
      Logger("daemon")->warn("search state of {} is not a JSON object; starting afresh",
                             workload.ToString());
      saved = nlohmann::json();
    }
  }
  const nlohmann::json* states =
      saved.is_object() && saved.contains("states") && saved["states"].is_object()
          ? &saved["states"]
          : nullptr;
  std::vector<PerTemplate> parts;
  for (size_t i = 0; i < templates.size(); ++i) {
    const KernelTemplate* tpl = templates[i];
    ConfigSpace space = tpl->space(workload, target);
    std::vector<Config> seen;
    for (const ConfigKey& key : measured) {
      if (key.template_name != tpl->name || key.template_version != tpl->version) {
        continue;
      }
      absl::StatusOr<Config> config = ParseConfig(key.config);
      if (config.ok()) {
        seen.push_back(std::move(*config));
      }
    }
    std::string state;
    const std::string name(tpl->name);
    if (states != nullptr && states->contains(name) && (*states)[name].is_string()) {
      state = (*states)[name].get<std::string>();
    }
    absl::StatusOr<std::unique_ptr<SearchStrategy>> made =
        MakeStrategy(strategy, space, seed + i, seen, state);
    if (!made.ok() && !state.empty()) {
      Logger("daemon")->warn(
          "saved search state of template {} no longer applies ({}); "
          "starting it afresh",
          name, made.status().message());
      made = MakeStrategy(strategy, space, seed + i, seen, "");
    }
    if (!made.ok()) {
      return absl::InvalidArgumentError(
          StrCat("spec.strategy: ", std::string(made.status().message())));
    }
    Config default_config = tpl->default_config(workload, target);
    bool default_done = std::find(seen.begin(), seen.end(), default_config) != seen.end();
    if (saved.is_object() && saved.contains("defaults_proposed") &&
        saved["defaults_proposed"].is_array()) {
      for (const nlohmann::json& done : saved["defaults_proposed"]) {
        default_done = default_done || (done.is_string() && done.get<std::string>() == name);
      }
    }
    parts.push_back(PerTemplate{tpl, std::move(*made), std::move(default_config), !default_done});
  }
  size_t next = 0;
  if (saved.is_object() && saved.contains("next") && saved["next"].is_number_unsigned()) {
    next = saved["next"].get<size_t>() % parts.size();
  }
  return std::unique_ptr<JobSearch>(new JobSearch(std::move(parts), next));
}

std::vector<Candidate> JobSearch::Propose(int n) {
  std::vector<Candidate> out;
  for (PerTemplate& part : parts_) {
    if (static_cast<int>(out.size()) < n && part.default_pending) {
      part.default_pending = false;
      out.push_back(Candidate{part.tpl, part.default_config});
    }
  }
  size_t idle = 0;  // templates in a row that had nothing left
  while (static_cast<int>(out.size()) < n && idle < parts_.size()) {
    PerTemplate& part = parts_[next_];
    next_ = (next_ + 1) % parts_.size();
    std::vector<Config> configs = part.strategy->Propose(1);
    if (configs.empty()) {
      ++idle;
      continue;
    }
    idle = 0;
    if (configs.front() == part.default_config) {
      continue;  // proposed first already (or measured before this job)
    }
    out.push_back(Candidate{part.tpl, std::move(configs.front())});
  }
  return out;
}

void JobSearch::Observe(const KernelTemplate* tpl, const TrialOutcome& outcome) {
  for (PerTemplate& part : parts_) {
    if (part.tpl == tpl) {
      part.strategy->Observe({outcome});
    }
  }
}

std::string JobSearch::SaveState() const {
  nlohmann::json states = nlohmann::json::object();
  nlohmann::json defaults_proposed = nlohmann::json::array();
  for (const PerTemplate& part : parts_) {
    states[std::string(part.tpl->name)] = part.strategy->SaveState();
    if (!part.default_pending) {
      defaults_proposed.push_back(std::string(part.tpl->name));
    }
  }
  return nlohmann::json{
      {"next", next_}, {"states", states}, {"defaults_proposed", defaults_proposed}}
      .dump();
}

bool JobSearch::Exhausted() const {
  for (const PerTemplate& part : parts_) {
    if (part.default_pending || !part.strategy->Exhausted()) {
      return false;
    }
  }
  return true;
}

}  // namespace tune::tuner
