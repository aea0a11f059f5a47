#include "tuner/scheduler/reverify.h"

#include <algorithm>

#include "common/status.h"
#include "common/strings.h"
#include "search/config_space.h"

namespace tune::tuner {
namespace {

// Up to `k` best records of the job's workload and target under `fingerprint`, the decided best
// first, each of a template of `templates` at its current version.
absl::StatusOr<std::vector<Record>> BestUnder(TuningLog& log, const Job& row,
                                              const std::vector<const KernelTemplate*>& templates,
                                              const std::string& fingerprint, int k) {
  BestQuery query{.workload = row.spec.workload,
                  .target = row.spec.target,
                  .flush_cache = row.spec.timing.flush_cache,
                  .fingerprint = fingerprint};
  // Records of other templates or versions are skipped: ask for more than k.
  ASSIGN_OR_RETURN(std::vector<Record> top, log.QueryTopK(query, 4 * k + 8));
  std::erase_if(top, [&](const Record& r) {
    return std::none_of(templates.begin(), templates.end(), [&](const KernelTemplate* tpl) {
      return tpl->name == r.template_name && tpl->version == r.template_version;
    });
  });
  if (static_cast<int>(top.size()) > k) {
    top.resize(k);
  }
  return top;
}

std::string Ms(double secs) { return fmt::format("{:.4g} ms", secs * 1e3); }

// A winner re-measured within this fraction of the fastest re-measurement stands: repeated
// single-thread medians of one config spread by 1-3% (bench/RESULTS.md, "The same pick on two
// workers"), so a smaller gap says nothing about which is faster.
constexpr double kReverifyNoise = 0.02;

}  // namespace

absl::StatusOr<ReverifyPlan> PlanReverify(TuningLog& log, const Job& row,
                                          const std::vector<const KernelTemplate*>& templates) {
  // A task of a model job gets its budget in chunks: its share is the model's per workload.
  int k = row.spec.trials;
  if (row.IsTask()) {
    ASSIGN_OR_RETURN(Job model, log.GetJob(row.spec.parent));
    k = model.spec.trials / std::max<int>(static_cast<int>(model.spec.tasks.size()), 1);
  }
  k = std::max(k, 1);
  ASSIGN_OR_RETURN(std::vector<SeenFingerprint> seen, log.ListFingerprints(row.spec.device_key));
  ReverifyPlan plan;
  std::vector<Record> configs;
  // The fingerprint whose records best answers with: the newest that has any.
  for (size_t i = 0; i < seen.size() && configs.empty(); ++i) {
    const SeenFingerprint& from = seen[i];
    ASSIGN_OR_RETURN(configs, BestUnder(log, row, templates, from.text, k));
    plan.previous = from.text;
  }
  if (configs.empty()) {
    return absl::FailedPreconditionError(
        StrCat("nothing to reverify: the log has no successful record of ", row.spec.workload,
               " on '", row.spec.target, "' from a template of the job"));
  }
  plan.fingerprint = seen.front().text;
  plan.winner = configs.front();
  for (const KernelTemplate* tpl : templates) {
    for (const Record& r : configs) {
      if (r.template_name != tpl->name) {
        continue;
      }
      ASSIGN_OR_RETURN(Config config, ParseConfig(r.config));
      std::vector<Config>& list = plan.given[tpl];
      if (list.empty()) {
        plan.templates.push_back(tpl);
      }
      list.push_back(std::move(config));
      ++plan.count;
    }
  }
  return plan;
}

std::string ReverifyVerdict(const ReverifyPlan& plan, const std::optional<BestSoFar>& now,
                            int measured) {
  const Record& was = plan.winner;
  const std::string winner = StrCat(was.template_name, " ", was.config);
  if (!now && plan.previous == plan.fingerprint) {
    return StrCat("reverify: confirmed ", winner, " (", Ms(was.measurement.MedianSecs()),
                  "): already measured under the newest fingerprint");
  }
  if (!now) {
    return "reverify: nothing re-measured";
  }
  if (now->template_name == was.template_name && now->config == was.config) {
    return StrCat("reverify: confirmed ", winner, " (", Ms(now->secs), ", was ",
                  Ms(was.measurement.MedianSecs()), "; ", measured, " of ", plan.count,
                  " configs re-measured)");
  }
  if (plan.winner_now && *plan.winner_now <= now->secs * (1 + kReverifyNoise)) {
    return StrCat("reverify: confirmed ", winner, " (", Ms(*plan.winner_now), ", was ",
                  Ms(was.measurement.MedianSecs()), "; the fastest, ", now->template_name, " ",
                  now->config, ", ran within ", kReverifyNoise * 100, "%: the noise; ", measured,
                  " of ", plan.count, " configs re-measured)");
  }
  const std::string winner_now = plan.winner_now
                                     ? fmt::format(", now {} ({:+.1f}%)", Ms(*plan.winner_now),
                                                   (*plan.winner_now / now->secs - 1) * 100)
                                     : ", not re-measured";
  return StrCat("reverify: changed to ", now->template_name, " ", now->config, " (", Ms(now->secs),
                "); the winner before was ", winner, " (", Ms(was.measurement.MedianSecs()),
                winner_now, "; ", measured, " of ", plan.count, " configs re-measured)");
}

}  // namespace tune::tuner
