#include "tuner/scheduler/job_messages.h"

#include <algorithm>

#include "common/strings.h"
#include "tuner/api/proto_convert.h"
#include "tuner/scheduler/search_job.h"

namespace tune::tuner {
namespace {

// "dnnl or openblas": the libraries the job's templates call.
std::string LibrariesOf(const SearchJob& search) {
  std::set<std::string> libs;
  for (const KernelTemplate* tpl : search.templates()) {
    if (std::optional<TemplateLibrary> lib = search.LibraryOf(*tpl)) {
      libs.insert(lib->name);
    }
  }
  return Join(std::vector<std::string>(libs.begin(), libs.end()), " or ");
}

// "gemm.cpu.amx needs amx-tile, amx-bf16; gemm.cpu.dot needs avx512bf16": what each of the job's
// templates needs of a worker beyond its device key; empty when none needs a CPU feature.
std::string TemplateNeeds(const SearchJob& search) {
  bool features = false;
  std::vector<std::string> parts;
  for (const KernelTemplate* tpl : search.templates()) {
    features = features || !search.FeaturesOf(*tpl).empty();
    if (std::string needs = search.NeedsOf(*tpl); !needs.empty()) {
      parts.push_back(StrCat(tpl->name, " needs ", needs));
    }
  }
  return features ? Join(parts, "; ") : "";
}

void FillFromRow(const Job& row, v1::Job* out) {
  out->set_job_id(static_cast<uint64_t>(row.id));
  out->set_model_job_id(static_cast<uint64_t>(row.spec.parent));
  *out->mutable_spec() = JobSpecToProto(row.spec);
  out->set_state(JobStateToProto(row.state));
  out->set_device_key(row.spec.device_key);
  out->set_trials_done(row.trials_done);
  out->set_trials_failed(row.trials_failed);
  out->set_created_at_ms(row.created_at_ms);
  out->set_started_at_ms(row.started_at_ms);
  out->set_finished_at_ms(row.finished_at_ms);
}

// Σ weight · seconds over the tasks, or 0 when some task has none.
double WeightedTotal(const std::vector<TaskView>& tasks, std::optional<double> TaskView::* secs) {
  double total = 0;
  for (const TaskView& task : tasks) {
    if (!(task.*secs)) {
      return 0;
    }
    total += task.weight * *(task.*secs);
  }
  return total;
}

// A live job's message.
std::string LiveMessage(const JobView& view) {
  if (view.row.state == JobState::kFailed) {
    return view.row.error;
  }
  if (!view.storage_paused.empty() && !IsTerminal(view.row.state)) {
    return view.storage_paused;
  }
  if (!view.waiting.empty()) {
    return view.waiting;
  }
  if (std::string finals = FinalsNote(view); !finals.empty()) {
    return finals;
  }
  std::string message;
  for (const std::string& part :
       {view.skipped, GivenUpNote(view.given_up, view.given_up_count), view.last_error}) {
    if (!part.empty()) {
      StrAppend(&message, message.empty() ? "" : "; ", part);
    }
  }
  return message;
}

}  // namespace

std::string SkippedNote(const SearchJob& search, const std::set<const KernelTemplate*>& unusable) {
  std::vector<std::string> parts;
  for (const KernelTemplate* tpl : unusable) {
    const std::string needs = search.NeedsOf(*tpl);
    parts.push_back(
        StrCat(tpl->name, " (no worker with ", needs.empty() ? "its library" : needs, ")"));
  }
  std::sort(parts.begin(), parts.end());
  return StrCat("skipped ", Join(parts, ", "));
}

std::string WaitingForTurn(const JobRuntime& job, const SearchJob& search,
                           const Admission::Ticket& ticket) {
  const std::string& key = job.row.spec.device_key;
  if (ticket.capacity > 0 && ticket.none_usable) {
    if (std::string needs = TemplateNeeds(search); !needs.empty()) {
      return StrCat(
          "waiting for a worker with device key ", key,
          " that can run one of its templates (no connected one has what they need: ", needs, ")");
    }
    return StrCat("waiting for a worker with device key ", key, " and ", LibrariesOf(search),
                  " (every template of this job calls one; start tune-server with --libs)");
  }
  if (ticket.no_worker) {
    const int threads = search.target().threads;
    const Dtype dtype = search.workload().dtype();
    return StrCat("waiting for a worker with device key ", key,
                  threads > 1 ? StrCat(" offering at least ", threads, " threads") : "",
                  dtype != Dtype::kF32 ? StrCat(" that measures dtype=", DtypeName(dtype)) : "",
                  " (none connected)");
  }
  if (ticket.blocking != nullptr) {
    return StrCat("waiting for job ", ticket.blocking->row.id, " (priority ",
                  ticket.blocking->row.spec.priority, ") on ", key);
  }
  return StrCat("waiting for a free worker with device key ", key);
}

std::string AwaitingChunk(int64_t model_id) {
  return StrCat("waiting for model job ", model_id, " to give it trials");
}

std::string EndingWhy(const JobRuntime& job, const SearchJob& search) {
  std::string why;
  if (job.row.spec.reverify) {
    why = search.reverify_verdict(job.row.trials_done);
  } else if (job.row.trials_done < job.row.spec.trials) {
    why = search.EarlyStopped(job)
              ? StrCat("early stopping: ", search.since_improvement(),
                       " trials in a row without improvement")
              : StrCat("search space exhausted after ", job.row.trials_done, " trials");
  }
  for (const std::string& note :
       {search.skipped(), GivenUpNote(search.given_up(), search.given_up().size()),
        search.finals().verdict()}) {
    if (!note.empty()) {
      why = why.empty() ? note : StrCat(why, "; ", note);
    }
  }
  return why;
}

std::string ModelEndedShort(bool every_task_failed, int trials_done) {
  return every_task_failed ? "every task failed"
                           : StrCat("no task can take more trials after ", trials_done);
}

std::string GaveUpInARow(int in_a_row, int attempts, const std::string& last) {
  return StrCat("gave up ", in_a_row,
                " trials in a row: its workers were lost or could not measure them (", attempts,
                " attempts each); the last: ", last);
}

std::string GivenUpNote(const std::vector<std::string>& named, size_t count) {
  if (count == 0) {
    return "";
  }
  std::string note =
      StrCat("gave up ", count, " trial(s) without a verdict, not counted in the budget: ");
  for (size_t i = 0; i < named.size() && i < kGivenUpNamed; ++i) {
    StrAppend(&note, i == 0 ? "" : "; ", named[i]);
  }
  if (count > kGivenUpNamed) {
    StrAppend(&note, "; and ", count - kGivenUpNamed, " more");
  }
  return note;
}

std::string FinalsNote(const JobView& view) {
  using Stage = FinalsProgress::Stage;
  if (IsTerminal(view.row.state)) {
    return "";
  }
  switch (view.finals.stage) {
    case Stage::kPlanning:
      return "picking its finalists";
    case Stage::kMeasuring:
      if (!view.finals.screened) {
        return StrCat("screening its ", view.finals.finalists, " fastest configs: pass 1 of ",
                      kFinalPasses);
      }
      return StrCat("re-measuring its ", view.finals.finalists, " finalists: pass ",
                    std::min(view.finals.pass + 1, kFinalPasses), " of ", kFinalPasses);
    case Stage::kDeciding:
      return "deciding its best from the re-measurements";
    case Stage::kSearching:
    case Stage::kDecided:
      return "";
  }
  return "";
}

v1::Job JobProtoOf(const JobView& view) {
  v1::Job out;
  FillFromRow(view.row, &out);
  out.set_trials_in_flight(view.trials_in_flight);
  if (view.best) {
    view.best->ToProto(out.mutable_best());
  }
  if (view.row.IsModel()) {
    for (const TaskView& task : view.tasks) {
      v1::TaskProgress* t = out.add_tasks();
      t->set_job_id(static_cast<uint64_t>(task.job_id));
      t->set_workload(task.workload);
      t->set_weight(task.weight);
      t->set_state(JobStateToProto(task.state));
      t->set_trials_allocated(task.trials_allocated);
      t->set_trials_done(task.trials_done);
      if (task.best) {
        task.best->ToProto(t->mutable_best());
      }
      t->set_default_secs(task.default_secs.value_or(0));
    }
    out.set_estimated_total_secs(WeightedTotal(view.tasks, &TaskView::best_secs));
    out.set_default_total_secs(WeightedTotal(view.tasks, &TaskView::default_secs));
  }
  out.set_message(view.live ? LiveMessage(view) : view.row.error);
  return out;
}

v1::JobEvent EventOf(const JobView& view) {
  const v1::Job job = JobProtoOf(view);
  v1::JobEvent event;
  event.set_job_id(job.job_id());
  event.set_state(job.state());
  event.set_trials_done(job.trials_done());
  event.set_trials_failed(job.trials_failed());
  event.set_trials_total(job.spec().trials());
  if (job.has_best()) {
    event.set_best_gflops(job.best().gflops());
    event.set_best_secs(job.best().secs());
    event.set_best_template(job.best().template_name());
    event.set_best_config(job.best().config());
  }
  *event.mutable_tasks() = job.tasks();
  event.set_estimated_total_secs(job.estimated_total_secs());
  event.set_default_total_secs(job.default_total_secs());
  event.set_event_time_ms(view.taken_at_ms);
  if (view.live) {
    event.set_eta_seconds(view.eta_seconds);
    event.set_last_error(view.last_error);
    event.set_message(view.waiting.empty() ? FinalsNote(view) : view.waiting);
  }
  return event;
}

}  // namespace tune::tuner
