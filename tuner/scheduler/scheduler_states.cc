// A job's state as the scheduler moves it: queued or running, waiting (saying why), ended (its
// final state written, then the job leaves memory), and the snapshots its watchers get.
#include "common/clock.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "tuner/api/proto_convert.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::tuner {

void Scheduler::SetActiveStateLocked(JobRuntime& job, JobState state) {
  if (job.row.state == state) {
    return;
  }
  job.row.state = state;
  if (state == JobState::kRunning && job.row.started_at_ms == 0) {
    job.row.started_at_ms = UnixNowMs();
  }
  Logger("daemon")->info("job {}: {}{}", job.row.id, WireStateName(state),
                         job.waiting.empty() ? "" : StrCat(" (", job.waiting, ")"));
  PushEventLocked(job);
  PostWriteLocked([this, id = job.row.id, state] {
    if (absl::Status s = log_->UpdateJobState(id, state); !s.ok()) {
      Logger("daemon")->error("job {}: cannot store state {}: {}", id, WireStateName(state), s);
    }
  });
}

void Scheduler::SetWaitingLocked(JobRuntime& job, std::string waiting) {
  if (waiting == job.waiting) {
    return;
  }
  job.waiting = std::move(waiting);
  if (job.row.state == JobState::kRunning && !job.waiting.empty()) {
    SetActiveStateLocked(job, JobState::kQueued);
  } else {
    PushEventLocked(job);
  }
}

void Scheduler::FinishLocked(JobRuntime& job, JobState state, std::string_view why,
                             std::function<void()> done) {
  const int64_t id = job.row.id;
  for (uint64_t trial_id : trials_.OfJob(id)) {
    if (Trial* trial = trials_.Find(trial_id); trial != nullptr) {
      DropTrialLocked(*trial, StrCat("job ", id, " ", WireStateName(state)));
    }
  }
  job.deferred.clear();
  job.finals_queue.clear();
  builders_->DropJob(id);
  job.row.state = state;
  job.row.finished_at_ms = UnixNowMs();
  if (state == JobState::kFailed) {
    job.row.error = std::string(why);
  }
  job.waiting = std::string(why);
  Logger("daemon")->info("job {}: {}{}", id, WireStateName(state),
                         why.empty() ? "" : StrCat(" (", why, ")"));
  // Stored with the state: why the job failed, stopped short of its budget or was cancelled.
  std::string error(why);
  const bool posted = PostWriteLocked([this, job = jobs_.Shared(id), state, error, done] {
    if (absl::Status s = log_->UpdateJobState(job->row.id, state, error); !s.ok()) {
      Logger("daemon")->error("job {}: cannot store state {}: {}", job->row.id,
                              WireStateName(state), s);
    }
    {
      std::lock_guard lock(mu_);
      job->state_written = true;
      PushEventLocked(*job);  // the final event, once the final state is on disk
      PruneLocked(*job);
      if (job->row.IsTask()) {
        PumpLocked();  // its model job may end now
      }
    }
    if (done) {
      done();
    }
  });
  if (!posted && done) {
    done();
  }
}

void Scheduler::PruneLocked(JobRuntime& job) {
  if (!IsTerminal(job.row.state) || !job.state_written || job.Outstanding() > 0 ||
      jobs_.Find(job.row.id) != &job) {
    return;
  }
  events_.Drop(job.row.id);
  jobs_.Remove(job.row.id);  // `job` lives on while a task still holds it
}

void Scheduler::PushEventLocked(JobRuntime& job) {
  job.events->Push(ViewLocked(job));
  if (JobRuntime* model = ModelOfLocked(job); model != nullptr) {
    model->events->Push(ViewLocked(*model));  // a model job's watchers see its tasks move
  }
}

JobView Scheduler::ViewLocked(const JobRuntime& job) const {
  JobView view;
  view.row = job.row;
  view.taken_at_ms = UnixNowMs();
  view.trials_in_flight = job.in_flight;
  view.live = true;
  view.eta_seconds = job.EtaSeconds();
  view.storage_paused = storage_paused_;
  view.waiting = job.waiting;
  view.last_error = job.last_error;
  job.driver->Snapshot(job, jobs_, view);
  return view;
}

}  // namespace tune::tuner
