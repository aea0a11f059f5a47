#include "tuner/scheduler/finalist_phase.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/logging.h"
#include "common/stats.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune::tuner {
namespace {

// How many of the log's fastest configs are read to find the kScreened this job can build.
constexpr int kFinalistScan = 32;

std::string KeyText(const ConfigKey& key) {
  return StrCat(key.template_name, "|", key.template_version, "|", key.config);
}

ConfigKey KeyOf(const Record& r) { return {r.template_name, r.template_version, r.config}; }

// The template of `templates` that measured `r`, or nullptr.
const KernelTemplate* TemplateOf(const std::vector<const KernelTemplate*>& templates,
                                 const Record& r) {
  auto tpl = std::find_if(templates.begin(), templates.end(), [&](const KernelTemplate* t) {
    return t->name == r.template_name && t->version == r.template_version;
  });
  return tpl == templates.end() ? nullptr : *tpl;
}

// The decided best of the job's workload and target: whether there is one, and the key of its
// config ("" when its record is gone).
struct Incumbent {
  bool decided = false;
  std::string key;
};

absl::StatusOr<Incumbent> IncumbentOf(TuningLog& log, const JobSpec& spec) {
  ASSIGN_OR_RETURN(std::optional<BestDecision> decision,
                   log.GetBestDecision(spec.workload, spec.target, spec.timing.flush_cache));
  Incumbent incumbent{decision.has_value(), ""};
  if (decision) {
    ASSIGN_OR_RETURN(std::optional<Record> held, log.GetRecord(decision->record_id));
    if (held) {
      incumbent.key = KeyText(KeyOf(*held));
    }
  }
  return incumbent;
}

BestQuery QueryOf(const JobSpec& spec) {
  return BestQuery{
      .workload = spec.workload, .target = spec.target, .flush_cache = spec.timing.flush_cache};
}

// The fastest record of a library template (one that calls a vendor library: cuBLAS, cuDNN,
// OpenBLAS, oneDNN, ...) among `templates` that is not `unusable`, for the job's workload and
// target; nullopt when the log holds none.
absl::StatusOr<std::optional<Record>> BestLibraryRecord(
    TuningLog& log, const JobSpec& spec, const std::vector<const KernelTemplate*>& templates,
    const std::set<const KernelTemplate*>& unusable) {
  std::optional<Record> best;
  for (const KernelTemplate* t : templates) {
    if (t->library.empty() || unusable.contains(t)) {
      continue;
    }
    BestQuery query = QueryOf(spec);
    query.template_name = std::string(t->name);
    query.template_version = t->version;
    ASSIGN_OR_RETURN(std::optional<Record> record, log.QueryBest(query));
    if (record &&
        (!best || Median(record->measurement.round_secs) < Median(best->measurement.round_secs))) {
      best = std::move(record);
    }
  }
  return best;
}

}  // namespace

FinalistPhase::Step FinalistPhase::Next(bool stands_behind) {
  switch (stage_) {
    case Stage::kSearching:
      if (!enabled_ || !stands_behind) {
        stage_ = Stage::kDecided;  // nothing of its own to stand behind
        return Step::kNone;
      }
      stage_ = Stage::kPlanning;
      return Step::kPlan;
    case Stage::kPlanning:
    case Stage::kDeciding:
      return Step::kUnderWay;
    case Stage::kMeasuring:
      // Every re-measurement of the pass is in (the job has nothing outstanding): after the
      // screen, the finalists; then the next pass, or the verdict. One pass at a time: each
      // config is measured once per pass.
      if (!screened_) {
        screened_ = true;
        stage_ = Stage::kPlanning;
        return Step::kPlan;
      }
      ++pass_;
      if (pass_ < kFinalPasses && !PassCandidates().empty()) {
        return Step::kMeasure;
      }
      stage_ = Stage::kDeciding;
      return Step::kDecide;
    case Stage::kDecided:
      return Step::kNone;
  }
  return Step::kNone;
}

std::vector<Candidate> FinalistPhase::Planned(
    std::optional<std::vector<PlannedFinalist>> finalists) {
  if (!finalists || finalists->size() < (screened_ ? 1u : 2u)) {
    // The job ends on its search's best: the log could not be read, there is nothing to choose
    // between, or the screen left no finalist (every re-measurement failed).
    stage_ = Stage::kDecided;
    return {};
  }
  finalists_ = std::move(*finalists);
  stage_ = Stage::kMeasuring;
  if (!screened_) {
    pass_ = 0;
    return PassCandidates();  // none: a restart found the screen recorded; Next moves on
  }
  pass_ = 1;
  std::vector<Candidate> first = PassCandidates();
  while (first.empty() && ++pass_ < kFinalPasses) {
    first = PassCandidates();  // the passes before were recorded before a restart
  }
  return first;  // none: every pass was recorded already, and the next Next decides
}

void FinalistPhase::Decided(std::string verdict) {
  stage_ = Stage::kDecided;
  if (!verdict.empty()) {
    verdict_ = std::move(verdict);
  }
}

std::vector<Candidate> FinalistPhase::PassCandidates() const {
  std::vector<Candidate> pass;
  if (pass_ >= kFinalPasses) {
    return pass;
  }
  for (const auto& [candidate, recorded] : finalists_) {
    if (pass_ >= recorded) {
      pass.push_back(candidate);
    }
  }
  if (pass_ % 2 == 0 && screened_) {
    std::reverse(pass.begin(), pass.end());  // a drift within a pass touches each alike
  }
  return pass;
}

absl::StatusOr<std::vector<PlannedFinalist>> FinalistPhase::Pick(
    TuningLog& log, int64_t job_id, const JobSpec& spec,
    const std::vector<const KernelTemplate*>& templates,
    const std::set<const KernelTemplate*>& unusable, bool screened) {
  ASSIGN_OR_RETURN(std::vector<Record> mine, log.ListRecords(RecordFilter{.job_id = job_id}));
  // The job's re-measurements so far: how many of each config, and the first (the screen's).
  std::map<std::string, int> done;
  std::map<std::string, const Record*> screen;
  for (const Record& r : mine) {
    if (!r.final) {
      continue;
    }
    const std::string key = KeyText(KeyOf(r));
    if (done[key]++ == 0 && r.measurement.ok()) {
      screen.emplace(key, &r);
    }
  }
  std::vector<PlannedFinalist> passes;
  std::set<std::string> taken;
  // Adds `r`'s config when this job builds it and it is not planned already; true when added.
  auto add = [&](const Record& r) {
    const std::string key = KeyText(KeyOf(r));
    const KernelTemplate* tpl = TemplateOf(templates, r);
    absl::StatusOr<Config> config = ParseConfig(r.config);
    if (tpl == nullptr || unusable.contains(tpl) || !config.ok() || !taken.insert(key).second) {
      return false;
    }
    passes.emplace_back(Candidate{tpl, *config}, done[key]);
    return true;
  };

  if (!screened) {
    // The screen: the log's kScreened fastest by their search readings, and the library's best
    // beside them even when it is not among the fastest.
    ASSIGN_OR_RETURN(std::vector<Record> top, log.QueryTopK(QueryOf(spec), kFinalistScan));
    ASSIGN_OR_RETURN(std::optional<Record> library,
                     BestLibraryRecord(log, spec, templates, unusable));
    for (const Record& r : top) {
      if (passes.size() >= kScreened) {
        break;
      }
      add(r);
    }
    if (library) {
      add(*library);
    }
    return passes;
  }

  // The finalists, by the screen's figures: the kFinalists fastest, then any within
  // kFinalistWindow of the last of them, up to kMaxFinalists; the incumbent and the library's
  // fastest whatever their figures, so that they are compared side by side. A library's other
  // configs (cuBLASLt's algorithms, each a config) compete as tune's do: kept all, they made
  // passes of a dozen configs, long enough for a GPU to slow within one.
  ASSIGN_OR_RETURN(Incumbent incumbent, IncumbentOf(log, spec));
  std::vector<std::pair<double, const Record*>> by_figure;
  for (const auto& [key, r] : screen) {
    by_figure.emplace_back(r->measurement.MedianSecs(), r);
  }
  std::sort(by_figure.begin(), by_figure.end());
  size_t chosen = 0;
  double cutoff = 0;
  bool library_kept = false;
  for (const auto& [median, r] : by_figure) {
    const KernelTemplate* tpl = TemplateOf(templates, *r);
    const bool library = tpl != nullptr && !tpl->library.empty();
    const bool kept = KeyText(KeyOf(*r)) == incumbent.key || (library && !library_kept);
    const bool fast = chosen < kFinalists || (chosen < kMaxFinalists && median <= cutoff);
    if (!(kept || fast) || !add(*r)) {
      continue;
    }
    library_kept = library_kept || library;
    if (!kept && ++chosen == kFinalists) {
      cutoff = median * (1 + kFinalistWindow);
    }
  }
  return passes;
}

std::optional<FinalistPhase::Decision> FinalistPhase::Decide(TuningLog& log, int64_t job_id,
                                                             const JobSpec& spec) {
  std::vector<Finalist> finalists;
  std::optional<size_t> incumbent;
  bool has_decision = false;
  absl::Status status = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<Record> mine, log.ListRecords(RecordFilter{.job_id = job_id}));
    // The finalists: configs re-measured after the screen (in more than one pass).
    std::map<std::string, int> passes;
    for (const Record& r : mine) {
      if (r.final) {
        ++passes[KeyText(KeyOf(r))];
      }
    }
    // Their figures: the passes after the screen. The screen measured many configs one after
    // another in the order of their search readings, so a machine drifting within it favoured
    // some; the finalists' passes alternate their order (PassCandidates).
    std::map<std::string, size_t> index;
    std::set<std::string> screened;
    for (const Record& r : mine) {
      const ConfigKey key = KeyOf(r);
      if (!r.final || passes[KeyText(key)] < 2 || screened.insert(KeyText(key)).second) {
        continue;
      }
      auto [it, added] = index.emplace(KeyText(key), finalists.size());
      if (added) {
        finalists.push_back(Finalist{key, {}, 0, "", {}});
      }
      Finalist& f = finalists[it->second];
      if (r.measurement.ok()) {
        f.rounds.insert(f.rounds.end(), r.measurement.round_secs.begin(),
                        r.measurement.round_secs.end());
        f.pass_medians.push_back(r.measurement.MedianSecs());
        f.record_id = r.id;
        f.record_uid = r.uid;
      }
    }
    ASSIGN_OR_RETURN(Incumbent held, IncumbentOf(log, spec));
    has_decision = held.decided;
    if (auto it = index.find(held.key); !held.key.empty() && it != index.end()) {
      incumbent = it->second;
    }
    return absl::OkStatus();
  }();
  std::optional<Verdict> verdict =
      status.ok() ? tuner::Decide(finalists, incumbent) : std::optional<Verdict>();
  // The decision changes only on a comparison with the incumbent (or when there is none): a
  // job that could not re-measure it (another template, a library no worker has) keeps its own
  // verdict for itself.
  if (verdict && (!has_decision || incumbent)) {
    const Finalist& winner = finalists[verdict->winner];
    status = log.SetBestDecision(BestDecision{.workload = spec.workload,
                                              .target = spec.target,
                                              .flush_cache = spec.timing.flush_cache,
                                              .record_id = winner.record_id,
                                              .median_secs = verdict->median_secs,
                                              .relative_ci = verdict->relative_ci,
                                              .job_id = job_id});
  }
  if (!status.ok()) {
    Logger("daemon")->error("job {}: cannot decide its best from the re-measurements: {}", job_id,
                            status);
    return std::nullopt;
  }
  if (!verdict) {
    return std::nullopt;
  }
  return Decision{*verdict, finalists[verdict->winner]};
}

}  // namespace tune::tuner
