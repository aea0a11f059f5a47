// The scheduler's finalists (tuner/finalists.h): a job whose budget is spent re-measures the
// fastest configs the log holds for its workload and target, and its best library candidate
// beside them, in interleaved passes, and the best rests on those figures. The planner picks
// the finalists and admits their re-measurements as trials of the job (they build, dispatch and
// commit as any trial, but count in no budget); once all are in, the log writer decides and
// stores the decided best.
#include <algorithm>
#include <map>
#include <set>

#include "common/logging.h"
#include "common/stats.h"
#include "common/status.h"
#include "common/strings.h"
#include "tuner/scheduler/finalists.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::tuner {
namespace {

// How many of the log's fastest configs are read to find kFinalists this job can build.
constexpr int kFinalistScan = 16;

std::string KeyText(const ConfigKey& key) {
  return StrCat(key.template_name, "|", key.template_version, "|", key.config);
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

bool Scheduler::FinalizeLocked(JobRuntime& job) {
  using Stage = JobRuntime::FinalStage;
  switch (job.final_stage) {
    case Stage::kSearching:
      if (!options_.remeasure_finalists || !job.best || job.row.trials_done == 0) {
        job.final_stage = Stage::kDecided;  // nothing of its own to stand behind
        return false;
      }
      job.final_stage = Stage::kPlanning;
      planner_->Post([this, shared = jobs_.Shared(job.row.id),
                      unusable = UnusableTemplatesLocked(job)] { PlanFinals(shared, unusable); });
      return true;
    case Stage::kPlanning:
    case Stage::kDeciding:
      return true;
    case Stage::kMeasuring:
      // Every re-measurement of the pass is in (the caller saw nothing outstanding): the next
      // pass, or the verdict. One pass at a time: each finalist is measured once per pass.
      ++job.final_pass;
      if (AdmitFinalPassLocked(job)) {
        return true;
      }
      job.final_stage = Stage::kDeciding;
      PostWriteLocked([this, shared = jobs_.Shared(job.row.id)] { DecideFinals(shared); });
      return true;
    case Stage::kDecided:
      return false;
  }
  return false;
}

void Scheduler::PlanFinals(const JobPtr& job, const std::set<const KernelTemplate*>& unusable) {
  JobSpec spec;
  {
    std::lock_guard lock(mu_);
    spec = job->row.spec;
  }
  // The log's fastest configs (the decided best first) that this job's templates build, and
  // how many passes over each an earlier run of this finalization already recorded.
  absl::StatusOr<std::vector<Record>> top = log_->QueryTopK(QueryOf(spec), kFinalistScan);
  absl::StatusOr<std::vector<Record>> mine =
      top.ok() ? log_->ListRecords(RecordFilter{.job_id = job->row.id}) : top.status();
  absl::StatusOr<std::optional<Record>> library =
      mine.ok() ? BestLibraryRecord(*log_, spec, job->templates, unusable)
                : absl::StatusOr<std::optional<Record>>(mine.status());
  std::vector<std::pair<Candidate, int>> passes;  // (candidate, passes already recorded)
  if (top.ok() && mine.ok() && library.ok()) {
    std::map<std::string, int> done;
    for (const Record& r : *mine) {
      if (r.final) {
        ++done[KeyText(ConfigKey{r.template_name, r.template_version, r.config})];
      }
    }
    std::set<std::string> taken;
    // Adds `r`'s config when this job builds it and it is not a finalist already.
    auto add = [&](const Record& r) {
      const std::string key = KeyText(ConfigKey{r.template_name, r.template_version, r.config});
      auto tpl =
          std::find_if(job->templates.begin(), job->templates.end(), [&](const KernelTemplate* t) {
            return t->name == r.template_name && t->version == r.template_version;
          });
      absl::StatusOr<Config> config = ParseConfig(r.config);
      if (tpl == job->templates.end() || unusable.contains(*tpl) || !config.ok() ||
          !taken.insert(key).second) {
        return;
      }
      passes.emplace_back(Candidate{*tpl, *config}, done[key]);
    };
    for (const Record& r : *top) {
      if (passes.size() == kFinalists) {
        break;
      }
      add(r);
    }
    // The library's best is re-measured next to tune's finalists even when it is not among
    // the fastest, so that the two are compared on figures measured side by side.
    if (*library) {
      add(**library);
    }
  } else {
    Logger("daemon")->error("job {}: cannot pick its finalists: {}", job->row.id,
                            !top.ok() ? top.status() : library.status());
  }

  std::lock_guard lock(mu_);
  if (IsTerminal(job->row.state)) {
    PruneLocked(*job);
    return;
  }
  if (!top.ok() || !mine.ok() || !library.ok() || passes.size() < 2) {
    // The job ends on its search's best: the log could not be read, or there is nothing to
    // choose between.
    job->final_stage = JobRuntime::FinalStage::kDecided;
    PumpLocked();
    return;
  }
  Logger("daemon")->info("job {}: re-measuring {} finalist(s) in {} interleaved passes",
                         job->row.id, passes.size(), kFinalPasses);
  job->finalists = std::move(passes);
  job->final_pass = 0;
  job->final_stage = JobRuntime::FinalStage::kMeasuring;
  while (job->final_pass < kFinalPasses && !AdmitFinalPassLocked(*job)) {
    ++job->final_pass;  // recorded before a restart
  }
  PumpLocked();  // decides at once when every pass was recorded already
}

bool Scheduler::AdmitFinalPassLocked(JobRuntime& job) {
  if (job.final_pass >= kFinalPasses) {
    return false;
  }
  bool admitted = false;
  for (const auto& [candidate, recorded] : job.finalists) {
    if (job.final_pass < recorded) {
      continue;
    }
    if (Trial* trial = trials_.Create(job, candidate, job.final_pass); trial != nullptr) {
      SubmitBuildLocked(job, *trial);
      admitted = true;
    }
  }
  return admitted;
}

void Scheduler::DecideFinals(const JobPtr& job) {
  JobSpec spec;
  {
    std::lock_guard lock(mu_);
    spec = job->row.spec;
  }
  std::vector<Finalist> finalists;
  std::optional<size_t> incumbent;
  bool has_decision = false;
  absl::Status status = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<Record> mine,
                     log_->ListRecords(RecordFilter{.job_id = job->row.id}));
    std::map<std::string, size_t> index;
    for (const Record& r : mine) {
      if (!r.final) {
        continue;
      }
      ConfigKey key{r.template_name, r.template_version, r.config};
      auto [it, added] = index.emplace(KeyText(key), finalists.size());
      if (added) {
        finalists.push_back(Finalist{key, {}, 0, ""});
      }
      Finalist& f = finalists[it->second];
      if (r.measurement.ok()) {
        f.rounds.insert(f.rounds.end(), r.measurement.round_secs.begin(),
                        r.measurement.round_secs.end());
        f.record_id = r.id;
        f.record_uid = r.uid;
      }
    }
    ASSIGN_OR_RETURN(std::optional<BestDecision> decision,
                     log_->GetBestDecision(spec.workload, spec.target, spec.timing.flush_cache));
    if (decision) {
      has_decision = true;
      ASSIGN_OR_RETURN(std::optional<Record> held, log_->GetRecord(decision->record_id));
      if (held) {
        auto it = index.find(
            KeyText(ConfigKey{held->template_name, held->template_version, held->config}));
        if (it != index.end()) {
          incumbent = it->second;
        }
      }
    }
    return absl::OkStatus();
  }();
  std::optional<Verdict> verdict =
      status.ok() ? Decide(finalists, incumbent) : std::optional<Verdict>();
  // The decision changes only on a comparison with the incumbent (or when there is none): a
  // job that could not re-measure it (another template, a library no worker has) keeps its own
  // verdict for itself.
  if (verdict && (!has_decision || incumbent)) {
    const Finalist& winner = finalists[verdict->winner];
    status = log_->SetBestDecision(BestDecision{.workload = spec.workload,
                                                .target = spec.target,
                                                .flush_cache = spec.timing.flush_cache,
                                                .record_id = winner.record_id,
                                                .median_secs = verdict->median_secs,
                                                .relative_ci = verdict->relative_ci,
                                                .job_id = job->row.id});
  }
  if (!status.ok()) {
    Logger("daemon")->error("job {}: cannot decide its best from the re-measurements: {}",
                            job->row.id, status);
  }

  std::lock_guard lock(mu_);
  job->final_stage = JobRuntime::FinalStage::kDecided;
  if (verdict && status.ok()) {
    const Finalist& winner = finalists[verdict->winner];
    job->best = BestSoFar{verdict->median_secs, job->workload.Flops() / verdict->median_secs / 1e9,
                          winner.key.template_name, winner.key.config, winner.record_uid};
    job->verdict = StrCat("finalists re-measured: ", verdict->summary);
    Logger("daemon")->info("job {}: {}", job->row.id, job->verdict);
  }
  if (!IsTerminal(job->row.state)) {
    PushEventLocked(*job);
    PumpLocked();
  }
}

}  // namespace tune::tuner
