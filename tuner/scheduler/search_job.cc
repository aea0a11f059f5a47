#include "tuner/scheduler/search_job.h"

#include <algorithm>
#include <map>

#include "common/status.h"
#include "common/strings.h"
#include "tuner/scheduler/job_messages.h"
#include "tuner/scheduler/job_options.h"

namespace tune::tuner {
namespace {

// The most trials of other workloads a job's search learns from, per template (the newest).
constexpr int kTransferTrials = 2000;

// The time of `tpl`'s `config` among `history`, when it was measured successfully.
std::optional<double> SecsOf(const std::vector<PastTrial>& history, const KernelTemplate& tpl,
                             const std::string& config) {
  for (const PastTrial& trial : history) {
    if (trial.ok() && trial.key.template_name == tpl.name &&
        trial.key.template_version == tpl.version && trial.key.config == config) {
      return trial.secs;
    }
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<std::vector<PastTrial>> PastTrials(TuningLog& log, const Job& row,
                                                  std::vector<std::string>* given_up,
                                                  int* given_up_in_a_row) {
  ASSIGN_OR_RETURN(std::vector<Record> records,
                   log.ListRecords(RecordFilter{.workload = row.spec.workload,
                                                .device_key = row.spec.device_key}));
  std::vector<PastTrial> trials;
  for (const Record& r : records) {
    if (given_up != nullptr && r.job_id == row.id && !r.final) {
      if (IsVerdict(r.measurement.error)) {
        *given_up_in_a_row = 0;
      } else {
        given_up->push_back(StrCat(r.template_name, " ", r.config, ": ", r.measurement.message));
        ++*given_up_in_a_row;
      }
    }
    if (r.target != row.spec.target || ColdCache(r) != row.spec.timing.flush_cache || r.final ||
        !IsVerdict(r.measurement.error)) {
      continue;
    }
    const int timeout_ms = r.timing.value_or(TimingOptions()).timeout_ms;
    trials.push_back(PastTrial{ConfigKey{r.template_name, r.template_version, r.config},
                               r.measurement.error, LearnedSecs(r.measurement, timeout_ms)});
  }
  return trials;
}

absl::StatusOr<std::optional<double>> DefaultSecsFromLog(TuningLog& log, const Job& task,
                                                         const Catalog& catalog) {
  ASSIGN_OR_RETURN(Workload workload, Workload::Parse(task.spec.workload));
  ASSIGN_OR_RETURN(Target target, catalog.ParseTarget(task.spec.target));
  absl::StatusOr<std::vector<const KernelTemplate*>> templates =
      ResolveTemplates(catalog, workload, target, task.spec.templates);
  if (!templates.ok()) {
    return std::nullopt;  // the templates are gone: no default to speak of
  }
  const KernelTemplate& tpl = *templates->front();
  ASSIGN_OR_RETURN(std::vector<PastTrial> history, PastTrials(log, task));
  return SecsOf(history, tpl, ConfigToString(tpl.default_config(workload, target)));
}

std::optional<TemplateLibrary> SearchJob::LibraryOf(const KernelTemplate& tpl) const {
  auto it = libraries_.find(&tpl);
  return it == libraries_.end() ? std::nullopt : std::optional<TemplateLibrary>(it->second);
}

const std::vector<std::string>& SearchJob::FeaturesOf(const KernelTemplate& tpl) const {
  static const std::vector<std::string> kNone;
  auto it = features_.find(&tpl);
  return it == features_.end() ? kNone : it->second;
}

std::string SearchJob::NeedsOf(const KernelTemplate& tpl) const {
  std::vector<std::string> parts;
  if (std::optional<TemplateLibrary> lib = LibraryOf(tpl)) {
    parts.push_back(lib->name);
  }
  for (const std::string& feature : FeaturesOf(tpl)) {
    parts.push_back(feature);
  }
  return Join(parts, ", ");
}

absl::StatusOr<std::unique_ptr<SearchJob>> SearchJob::Load(TuningLog& log, const Job& row,
                                                           const SearchJobOptions& options) {
  ASSIGN_OR_RETURN(Workload workload, Workload::Parse(row.spec.workload));
  ASSIGN_OR_RETURN(Target target, options.catalog.ParseTarget(row.spec.target));
  ASSIGN_OR_RETURN(std::vector<const KernelTemplate*> templates,
                   ResolveTemplates(options.catalog, workload, target, row.spec.templates));
  std::optional<ReverifyPlan> reverify;
  if (row.spec.reverify) {
    ASSIGN_OR_RETURN(reverify, PlanReverify(log, row, templates));
    templates = reverify->templates;
  }
  ASSIGN_OR_RETURN(std::vector<ConfigKey> measured,
                   log.MeasuredConfigs(row.spec.workload, row.spec.target));
  std::map<const KernelTemplate*, TemplateLibrary> libraries;
  std::map<const KernelTemplate*, std::vector<std::string>> features;
  for (const KernelTemplate* tpl : templates) {
    if (std::optional<TemplateLibrary> lib = options.catalog.LibraryOf(*tpl, target)) {
      libraries.emplace(tpl, *std::move(lib));
    }
    if (tpl->worker_features) {
      if (std::vector<std::string> needed = tpl->worker_features(workload, target);
          !needed.empty()) {
        features.emplace(tpl, std::move(needed));
      }
    }
  }
  std::unique_ptr<SearchJob> job(
      new SearchJob(workload, target, templates, std::move(libraries), std::move(features),
                    options.remeasure_finalists && !reverify.has_value()));
  ASSIGN_OR_RETURN(std::vector<PastTrial> history,
                   PastTrials(log, row, &job->given_up_, &job->given_up_in_a_row_));
  std::map<std::string, std::vector<TemplateTrial>, std::less<>> transfer;
  if (row.spec.transfer) {
    for (const KernelTemplate* tpl : templates) {
      ASSIGN_OR_RETURN(
          transfer[std::string(tpl->name)],
          log.TrialsOfTemplate(std::string(tpl->name), tpl->version, row.spec.target,
                               row.spec.timing.flush_cache, row.spec.workload, kTransferTrials));
    }
  }
  ASSIGN_OR_RETURN(std::unique_ptr<JobSearch> search,
                   JobSearch::Create(workload, target, templates, row.spec.strategy, row.spec.seed,
                                     measured, row.search_state, history, transfer,
                                     options.features, reverify ? &reverify->given : nullptr));
  {
    std::lock_guard search_lock(job->search_mu_);
    job->search_ = std::move(search);
  }
  job->reverify_ = std::move(reverify);
  job->since_improvement_ = row.since_improvement;
  if (row.IsTask()) {
    job->model_id_ = row.spec.parent;
    const KernelTemplate& first = *templates.front();
    job->default_config_ = ConfigToString(first.default_config(workload, target));
    job->default_secs_ = SecsOf(history, first, job->default_config_);
  }
  if (row.best_record_id) {
    ASSIGN_OR_RETURN(std::optional<Record> best, log.GetRecord(*row.best_record_id));
    if (best) {
      job->best_ = BestOf(*best);
    }
  }
  return job;
}

bool SearchJob::Searches(const KernelTemplate* tpl) const {
  return std::find(templates_.begin(), templates_.end(), tpl) != templates_.end();
}

WorkerNeeds SearchJob::Needs(const JobRuntime& job, const Trial* trial) const {
  WorkerNeeds needs;
  needs.device_key = job.row.spec.device_key;
  needs.fingerprint = reverify_ ? reverify_->fingerprint : "";
  needs.threads = target_.threads;
  needs.dtype = workload_.dtype();
  if (trial != nullptr && trial->artifact) {
    needs.needed_libs.assign(trial->artifact->needed_libs().begin(),
                             trial->artifact->needed_libs().end());
  }
  if (trial != nullptr && trial->tpl != nullptr) {
    needs.features = FeaturesOf(*trial->tpl);
  }
  return needs;
}

std::vector<Candidate> SearchJob::Propose(int n, const std::set<const KernelTemplate*>& unusable) {
  std::lock_guard search_lock(search_mu_);
  return search_->Propose(
      n, [&unusable](const KernelTemplate* tpl) { return !unusable.contains(tpl); });
}

void SearchJob::Observe(const KernelTemplate* tpl, const TrialOutcome& outcome) {
  std::lock_guard search_lock(search_mu_);
  search_->Observe(tpl, outcome);
}

void SearchJob::GiveUp(const KernelTemplate* tpl, const Config& config) {
  std::lock_guard search_lock(search_mu_);
  search_->GiveUp(tpl, config);
}

void SearchJob::Lend(const KernelTemplate* tpl, const TemplateTrial& trial) {
  std::lock_guard search_lock(search_mu_);
  search_->Lend(tpl, trial);
}

std::string SearchJob::SaveState() {
  std::lock_guard search_lock(search_mu_);
  return search_->SaveState();
}

bool SearchJob::EarlyStopped(const JobRuntime& job) const {
  return job.row.spec.early_stopping > 0 && since_improvement_ >= job.row.spec.early_stopping;
}

bool SearchJob::WantsMore(const JobRuntime& job) const {
  return !IsTerminal(job.row.state) && !exhausted_ && !EarlyStopped(job) &&
         job.Allocated() < job.row.spec.trials;
}

void SearchJob::Proposed(int asked, int got) {
  if (got < asked) {
    // A strategy proposes fewer than asked only when its space is used up (for random search
    // over a large space: after a long run of draws found nothing new).
    exhausted_ = true;
  }
}

JobStep SearchJob::Next(const JobRuntime& job, const Admission::Ticket& ticket,
                        const std::set<const KernelTemplate*>& unusable, bool awaits_chunk) {
  // Library templates no connected worker can run are left out for now (the admission counted
  // a job all of whose templates are such as one without a worker).
  skipped_ = unusable.empty() || ticket.none_usable ? "" : SkippedNote(*this, unusable);
  if (ticket.may_propose && WantsMore(job)) {
    const int n = std::min(ticket.room, job.row.spec.trials - job.Allocated());
    if (n > 0) {
      JobStep step = JobStep::Do(JobStep::Action::kPropose);
      step.n = n;
      step.unusable = unusable;
      step.standing = JobStep::Standing::kRunning;  // what it proposed is outstanding
      return step;
    }
  }
  if (!WantsMore(job) && job.Outstanding() == 0) {
    if (awaits_chunk) {
      return JobStep::Waiting(AwaitingChunk(model_id_));
    }
    switch (finals_.Next(best_.has_value() && job.row.trials_done > 0)) {
      case FinalistPhase::Step::kNone:
        return JobStep::Ended(JobState::kDone, EndingWhy(job, *this));
      case FinalistPhase::Step::kUnderWay:
        return JobStep{};
      case FinalistPhase::Step::kPlan: {
        JobStep step = JobStep::Do(JobStep::Action::kPlanFinalists);
        step.unusable = unusable;
        return step;
      }
      case FinalistPhase::Step::kMeasure: {
        JobStep step = JobStep::Do(JobStep::Action::kMeasureFinalists);
        step.finalists = finals_.PassCandidates();
        return step;
      }
      case FinalistPhase::Step::kDecide:
        return JobStep::Do(JobStep::Action::kDecide);
    }
  }
  const bool active =
      job.in_flight + job.committing > 0 || (!ticket.no_worker && job.Outstanding() > 0);
  if (active) {
    return JobStep::Running();
  }
  return JobStep::Waiting(WaitingForTurn(job, *this, ticket));
}

void SearchJob::Counted(const Trial& trial, const TrialOutcome& outcome, bool improved,
                        const std::string& uid) {
  given_up_in_a_row_ = 0;
  since_improvement_ = improved ? 0 : since_improvement_ + 1;
  if (reverify_ && outcome.ok() && trial.tpl->name == reverify_->winner.template_name &&
      trial.config_text == reverify_->winner.config) {
    reverify_->winner_now = outcome.secs;
  }
  if (improved) {
    best_ = BestSoFar{outcome.secs, workload_.Flops() / outcome.secs / 1e9,
                      std::string(trial.tpl->name), trial.config_text, uid};
  }
}

int SearchJob::GaveUp(const Trial& trial, const std::string& why) {
  given_up_.push_back(StrCat(trial.tpl->name, " ", trial.config_text, ": ", why));
  return ++given_up_in_a_row_;
}

void SearchJob::NoteDefault(const Trial& trial, const TrialOutcome& outcome) {
  if (outcome.ok() && trial.tpl == templates_.front() && trial.config_text == default_config_) {
    default_secs_ = outcome.secs;
  }
}

void SearchJob::FinalsDecided(const std::optional<FinalistPhase::Decision>& decision) {
  if (!decision) {
    finals_.Decided("");
    return;
  }
  const double secs = decision->verdict.median_secs;
  best_ = BestSoFar{secs, workload_.Flops() / secs / 1e9, decision->winner.key.template_name,
                    decision->winner.key.config, decision->winner.record_uid};
  finals_.Decided(StrCat("finalists re-measured: ", decision->verdict.summary));
}

void SearchJob::Snapshot(const JobRuntime& /*job*/, const JobQueue& /*jobs*/, JobView& view) const {
  view.best = best_;
  view.finals = finals_.Progress();
  view.skipped = skipped_;
  view.given_up_count = given_up_.size();
  view.given_up.assign(given_up_.begin(),
                       given_up_.begin() + std::min(given_up_.size(), kGivenUpNamed));
}

}  // namespace tune::tuner
