// The scheduler doing what a job's driver decided (job_driver.h): the step's action (proposals,
// finalists planned on the planner and decided on the log writer, a task's budget stored), then
// where the job stands; and what ties a model job to its tasks.
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::tuner {

void Scheduler::ApplyStepLocked(JobRuntime& job, JobStep step) {
  switch (step.action) {
    case JobStep::Action::kNone:
      break;
    case JobStep::Action::kPropose:
      ProposeLocked(job, step.n, std::move(step.unusable));
      break;
    case JobStep::Action::kPlanFinalists:
      planner_->Post([this, shared = jobs_.Shared(job.row.id),
                      unusable = std::move(step.unusable)] { PlanFinals(shared, unusable); });
      break;
    case JobStep::Action::kMeasureFinalists:
      AdmitFinalistsLocked(job, step.finalists);
      break;
    case JobStep::Action::kDecide:
      PostWriteLocked([this, shared = jobs_.Shared(job.row.id)] { DecideFinals(shared); });
      break;
    case JobStep::Action::kAllocate:
      PostWriteLocked([this, id = step.task, trials = step.n] {
        if (absl::Status s = log_->SetJobTrials(id, trials); !s.ok()) {
          Logger("daemon")->error("job {}: cannot store its budget: {}", id, s);
        }
      });
      break;
  }
  switch (step.standing) {
    case JobStep::Standing::kUnchanged:
      break;
    case JobStep::Standing::kRunning:
      job.waiting.clear();
      if (job.row.state != JobState::kRunning) {
        SetActiveStateLocked(job, JobState::kRunning);
      }
      break;
    case JobStep::Standing::kWaiting:
      SetWaitingLocked(job, std::move(step.why));
      break;
    case JobStep::Standing::kEnded:
      FinishLocked(job, step.end_state, step.why);
      break;
  }
}

void Scheduler::PlanFinals(const JobPtr& job, const std::set<const KernelTemplate*>& unusable) {
  JobSpec spec;
  bool screened = false;
  SearchJob& search = *job->driver->AsSearch();
  {
    std::lock_guard lock(mu_);
    spec = job->row.spec;
    screened = search.finals().screened();
  }
  absl::StatusOr<std::vector<PlannedFinalist>> picked =
      FinalistPhase::Pick(*log_, job->row.id, spec, search.templates(), unusable, screened);
  if (!picked.ok()) {
    Logger("daemon")->error("job {}: cannot pick its finalists: {}", job->row.id, picked.status());
  }

  std::lock_guard lock(mu_);
  if (IsTerminal(job->row.state)) {
    PruneLocked(*job);
    return;
  }
  std::optional<std::vector<PlannedFinalist>> planned;
  if (picked.ok()) {
    planned = *std::move(picked);
  }
  if (planned && !screened && planned->size() >= 2) {
    Logger("daemon")->info("job {}: screening its {} fastest configs (the first of {} passes)",
                           job->row.id, planned->size(), kFinalPasses);
  } else if (planned && screened && !planned->empty()) {
    Logger("daemon")->info("job {}: re-measuring {} finalist(s) in {} more interleaved passes",
                           job->row.id, planned->size(), kFinalPasses - 1);
  }
  AdmitFinalistsLocked(*job, search.finals().Planned(std::move(planned)));
  PumpLocked();  // decides at once when every pass was recorded already
}

void Scheduler::AdmitFinalistsLocked(JobRuntime& job, const std::vector<Candidate>& finalists) {
  job.finals_queue.insert(job.finals_queue.end(), finalists.begin(), finalists.end());
  AdmitQueuedFinalistLocked(job);
}

void Scheduler::AdmitQueuedFinalistLocked(JobRuntime& job) {
  if (job.finals_queue.empty()) {
    return;
  }
  // The queue is the current pass's: the phase moves on only once the job has nothing
  // outstanding, the queue included.
  const int pass = job.driver->AsSearch()->finals().Progress().pass;
  // A search job in its finals has no other trial building or ready: one there is the finalist
  // admitted before, still on its way to a worker.
  while (!job.finals_queue.empty() && job.building == 0 && job.ready.empty()) {
    Candidate candidate = std::move(job.finals_queue.front());
    job.finals_queue.pop_front();
    if (Trial* trial = trials_.Create(job, candidate, pass); trial != nullptr) {
      trial->measured_on = job.finalist_workers[StrCat(trial->tpl->name, " ", trial->config_text)];
      SubmitBuildLocked(job, *trial);
    }
  }
}

void Scheduler::DecideFinals(const JobPtr& job) {
  JobSpec spec;
  {
    std::lock_guard lock(mu_);
    spec = job->row.spec;
  }
  std::optional<FinalistPhase::Decision> decision = FinalistPhase::Decide(*log_, job->row.id, spec);

  std::lock_guard lock(mu_);
  SearchJob& search = *job->driver->AsSearch();
  search.FinalsDecided(decision);
  if (decision) {
    Logger("daemon")->info("job {}: {}", job->row.id, search.finals().verdict());
  }
  if (!IsTerminal(job->row.state)) {
    PushEventLocked(*job);
    PumpLocked();
  }
}

JobRuntime* Scheduler::ModelOfLocked(const JobRuntime& job) const {
  const SearchJob* search = job.driver->AsSearch();
  if (search == nullptr || search->model_id() == 0) {
    return nullptr;
  }
  JobRuntime* model = jobs_.Find(search->model_id());
  return model != nullptr && model->driver->AsModel() != nullptr ? model : nullptr;
}

bool Scheduler::AwaitsChunkLocked(const JobRuntime& job) const {
  const JobRuntime* model = ModelOfLocked(job);
  return model != nullptr && !IsTerminal(model->row.state) &&
         model->driver->AsModel()->AwaitsChunk(job.row.id);
}

void Scheduler::OnTaskTrialLocked(JobRuntime& task, const Trial& trial, const TrialOutcome& outcome,
                                  ErrorKind kind) {
  SearchJob& search = *task.driver->AsSearch();
  search.NoteDefault(trial, outcome);
  JobRuntime* model = ModelOfLocked(task);
  if (model == nullptr) {
    return;
  }
  ModelJob& allocation = *model->driver->AsModel();
  allocation.TaskTrialCounted(*model, task, outcome, kind);
  const TemplateTrial lent{search.workload().ToString(), trial.config_text, outcome.error,
                           outcome.secs};
  for (int64_t id : allocation.task_ids()) {
    JobRuntime* sibling = jobs_.Find(id);
    if (sibling == nullptr || sibling == &task || IsTerminal(sibling->row.state) ||
        !sibling->row.spec.transfer || !sibling->driver->AsSearch()->Searches(trial.tpl)) {
      continue;
    }
    planner_->Post([job = jobs_.Shared(id), tpl = trial.tpl, lent] {
      job->driver->AsSearch()->Lend(tpl, lent);
    });
  }
}

void Scheduler::CancelModelTasksLocked(JobRuntime& model, std::string_view why) {
  for (int64_t id : model.driver->AsModel()->task_ids()) {
    if (JobRuntime* task = jobs_.Find(id); task != nullptr && !IsTerminal(task->row.state)) {
      FinishLocked(*task, JobState::kCancelled, why);
    }
  }
}

}  // namespace tune::tuner
