#include "tuner/scheduler/job_view.h"

#include "common/clock.h"
#include "common/status.h"
#include "tuner/scheduler/search_job.h"

namespace tune::tuner {

std::optional<BestSoFar> BestOf(const Record& record) {
  double secs = record.measurement.MedianSecs();
  absl::StatusOr<Workload> workload = Workload::Parse(record.workload);
  if (!record.measurement.ok() || secs <= 0 || !workload.ok()) {
    return std::nullopt;
  }
  return BestSoFar{secs, workload->Flops() / secs / 1e9, record.template_name, record.config,
                   record.uid};
}

absl::StatusOr<JobView> ViewFromLog(TuningLog& log, const Job& row, const Catalog& catalog) {
  JobView view;
  view.row = row;
  view.taken_at_ms = UnixNowMs();
  if (row.IsModel()) {
    int done = 0, failed = 0;
    for (const JobTask& spec : row.spec.tasks) {
      ASSIGN_OR_RETURN(Job task, log.GetJob(spec.job_id));
      ASSIGN_OR_RETURN(JobView task_view, ViewFromLog(log, task, catalog));
      TaskView& t = view.tasks.emplace_back();
      t.job_id = spec.job_id;
      t.workload = spec.workload;
      t.weight = spec.weight;
      t.state = task.state;
      t.trials_allocated = task.spec.trials;
      t.trials_done = task.trials_done;
      t.best = task_view.best;
      t.best_secs = task_view.best ? std::optional(task_view.best->secs) : std::nullopt;
      ASSIGN_OR_RETURN(t.default_secs, DefaultSecsFromLog(log, task, catalog));
      done += task.trials_done;
      failed += task.trials_failed;
    }
    view.row.trials_done = done;
    view.row.trials_failed = failed;
  }
  // A job whose finalists' re-measurement decided the best reports that figure.
  std::optional<BestDecision> decision;
  if (row.state == JobState::kDone && row.best_record_id) {
    ASSIGN_OR_RETURN(decision, log.GetBestDecision(row.spec.workload, row.spec.target,
                                                   row.spec.timing.flush_cache));
    if (decision && decision->job_id != row.id) {
      decision.reset();
    }
  }
  if (row.best_record_id) {
    ASSIGN_OR_RETURN(std::optional<Record> record,
                     log.GetRecord(decision ? decision->record_id : *row.best_record_id));
    std::optional<BestSoFar> best = record ? BestOf(*record) : std::nullopt;
    if (best && decision) {
      best->secs = decision->median_secs;
      best->gflops = best->gflops * record->measurement.MedianSecs() / decision->median_secs;
    }
    view.best = std::move(best);
  }
  return view;
}

}  // namespace tune::tuner
