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

std::vector<std::vector<float>> BuilderFeatureSource::Rows(const KernelTemplate& tpl,
                                                           const Workload& workload,
                                                           const Target& target,
                                                           const ConfigSpace& space,
                                                           const std::vector<Config>& configs) {
  if (configs.empty()) {
    return {};
  }
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
  const size_t width = TemplateFeaturesWithoutIr(workload, space, configs.front()).size();
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

}  // namespace tune::tuner
