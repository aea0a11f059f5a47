#include "tuner/builder/feature_source.h"

#include "codegen/templates/template_features.h"
#include "common/logging.h"
#include "common/strings.h"

namespace tune::tuner {
namespace {

std::vector<std::vector<float>> WithoutIr(const Workload& workload, const ConfigSpace& space,
                                          const std::vector<Config>& configs) {
  std::vector<std::vector<float>> rows;
  rows.reserve(configs.size());
  for (const Config& config : configs) {
    rows.push_back(TemplateFeaturesWithoutIr(workload, space, config));
  }
  return rows;
}

// What identifies a config's row: the template at its version, the canonical workload and
// target texts and the canonical config text.
std::string RowKey(std::string_view tpl, int version, const Workload& workload,
                   const Target& target, const Config& config) {
  return StrCat(tpl, '\0', version, '\0', workload.ToString(), '\0', target.ToString(), '\0',
                ConfigToString(config));
}

}  // namespace

std::vector<std::vector<float>> InProcessFeatureSource::Rows(const KernelTemplate& tpl,
                                                             const Workload& workload,
                                                             const Target& target,
                                                             const ConfigSpace& space,
                                                             const std::vector<Config>& configs) {
  std::vector<std::vector<float>> rows;
  rows.reserve(configs.size());
  for (const Config& config : configs) {
    rows.push_back(TemplateFeatures(tpl, workload, target, space, config));
  }
  return rows;
}

BuilderFeatureSource::BuilderFeatureSource(BuilderOptions options, int timeout_ms)
    : options_(std::move(options)), timeout_ms_(timeout_ms), process_(options_) {}

void BuilderFeatureSource::Remember(const v1::BuildChildTask& task, std::vector<float> row) {
  absl::StatusOr<Workload> workload = Workload::Parse(task.workload());
  absl::StatusOr<Target> target = Target::Parse(task.target());
  absl::StatusOr<Config> config = ParseConfig(task.config());
  if (row.empty() || !workload.ok() || !target.ok() || !config.ok()) {
    return;
  }
  std::string key =
      RowKey(task.template_name(), task.template_version(), *workload, *target, *config);
  std::lock_guard stats(stats_mu_);
  if (remembered_.size() >= kMaxRemembered) {
    remembered_.clear();
  }
  remembered_.insert_or_assign(std::move(key), std::move(row));
}

std::vector<std::vector<float>> BuilderFeatureSource::Rows(const KernelTemplate& tpl,
                                                           const Workload& workload,
                                                           const Target& target,
                                                           const ConfigSpace& space,
                                                           const std::vector<Config>& configs) {
  if (configs.empty()) {
    return {};
  }
  const size_t width = TemplateFeaturesWithoutIr(workload, space, configs.front()).size();
  // The remembered rows; the other configs are asked of the builder.
  std::vector<std::vector<float>> rows(configs.size());
  std::vector<size_t> missing;
  {
    std::lock_guard stats(stats_mu_);
    for (size_t i = 0; i < configs.size(); ++i) {
      auto it = remembered_.find(RowKey(tpl.name, tpl.version, workload, target, configs[i]));
      if (it != remembered_.end() && it->second.size() == width) {
        rows[i] = it->second;
        ++remembered_rows_used_;
      } else {
        missing.push_back(i);
      }
    }
  }
  if (missing.empty()) {
    return rows;
  }
  std::vector<Config> asked;
  asked.reserve(missing.size());
  for (size_t i : missing) {
    asked.push_back(configs[i]);
  }
  std::vector<std::vector<float>> computed = Compute(tpl, workload, target, space, asked, width);
  for (size_t k = 0; k < missing.size(); ++k) {
    rows[missing[k]] = std::move(computed[k]);
  }
  return rows;
}

std::vector<std::vector<float>> BuilderFeatureSource::Compute(
    const KernelTemplate& tpl, const Workload& workload, const Target& target,
    const ConfigSpace& space, const std::vector<Config>& configs, size_t width) {
  std::lock_guard lock(mu_);
  auto fall_back = [&](std::string_view why) {
    {
      std::lock_guard stats(stats_mu_);
      ++fallbacks_;
    }
    Logger("daemon")->warn(
        "features of {} config(s) of {} for {} are described without their loop nest: {}",
        configs.size(), tpl.name, workload.ToString(), why);
    return WithoutIr(workload, space, configs);
  };
  {
    std::lock_guard stats(stats_mu_);
    if (stopped_) {
      return WithoutIr(workload, space, configs);
    }
  }
  v1::BuildChildRequest request;
  v1::FeatureChildTask& task = *request.mutable_features();
  task.set_task_id(next_task_id_++);
  task.set_workload(workload.ToString());
  task.set_target(target.ToString());
  task.set_template_name(std::string(tpl.name));
  task.set_template_version(tpl.version);
  for (const Config& config : configs) {
    task.add_configs(ConfigToString(config));
  }
  BuilderProcess::Exchange exchange = process_.Send(request, timeout_ms_);
  switch (exchange.outcome) {
    case BuilderProcess::Outcome::kOk:
      break;
    case BuilderProcess::Outcome::kNotStarted:
      return fall_back(exchange.detail);
    case BuilderProcess::Outcome::kCrashed:
      return fall_back(StrCat("the builder process crashed building their IR: ", exchange.detail));
    case BuilderProcess::Outcome::kDeadline:
      return fall_back(StrCat("building their IR took over ", timeout_ms_, " ms"));
    case BuilderProcess::Outcome::kCancelled:
      return WithoutIr(workload, space, configs);  // stopping
    case BuilderProcess::Outcome::kUnreadable:
      return fall_back(StrCat("the builder process sent an unreadable reply: ", exchange.detail));
  }
  const v1::FeatureChildResult& result = exchange.reply.features();
  if (!exchange.reply.has_features() || result.task_id() != task.task_id()) {
    process_.Kill();
    return fall_back("the builder process answered another request");
  }
  if (!result.error().empty()) {
    return fall_back(result.error());
  }
  std::vector<std::vector<float>> rows;
  rows.reserve(configs.size());
  for (const v1::FeatureRow& row : result.rows()) {
    rows.emplace_back(row.values().begin(), row.values().end());
    if (rows.back().size() != width) {
      return fall_back(StrCat("a row of ", rows.back().size(), " features, not ", width));
    }
  }
  if (rows.size() != configs.size()) {
    return fall_back(StrCat(rows.size(), " rows for ", configs.size(), " configs"));
  }
  return rows;
}

void BuilderFeatureSource::Stop() {
  {
    std::lock_guard stats(stats_mu_);
    stopped_ = true;
  }
  process_.Cancel();
  std::lock_guard lock(mu_);  // waits for the request in progress to see the cancel
  process_.Kill();
}

int BuilderFeatureSource::fallbacks() const {
  std::lock_guard stats(stats_mu_);
  return fallbacks_;
}

int BuilderFeatureSource::remembered_rows_used() const {
  std::lock_guard stats(stats_mu_);
  return remembered_rows_used_;
}

}  // namespace tune::tuner
