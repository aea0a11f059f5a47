// The text of jobs, for people: why a job waits, why it ended, what its finalists are doing,
// and the answers of GetJob, ListJobs and WatchJob made from a JobView (job_view.h), outside
// the scheduler's lock. Every message a job's state carries is written here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "codegen/templates/template.h"
#include "common/target.h"
#include "tune/v1/tuner.pb.h"
#include "tuner/scheduler/job_queue.h"
#include "tuner/scheduler/job_view.h"

namespace tune::tuner {

class SearchJob;

/// How many given-up trials a job's message names; the others are counted.
inline constexpr size_t kGivenUpNamed = 3;

/// "skipped gemm.cpu.dnnl (no worker with dnnl), ...": library templates left out for want of
/// a worker.
std::string SkippedNote(const SearchJob& search, const std::set<const KernelTemplate*>& unusable);

/// Why a search job that does not run waits, from its admission `ticket`: for a worker of its
/// device key (with its threads, or one of the libraries its templates call), for the job
/// before it, or for a free worker.
std::string WaitingForTurn(const JobRuntime& job, const SearchJob& search,
                           const Admission::Ticket& ticket);

/// A task whose chunk is spent: "waiting for model job N to give it trials".
std::string AwaitingChunk(int64_t model_id);

/// Why a search job ended DONE (stored with its state): short of its budget (early stopping,
/// or its space exhausted), library templates skipped, trials given up, and what its finalists'
/// re-measurement decided; empty when none applies.
std::string EndingWhy(const JobRuntime& job, const SearchJob& search);

/// Why a model job ended short of its budget.
std::string ModelEndedShort(bool every_task_failed, int trials_done);

/// A job that gave up `in_a_row` trials in a row fails saying this (`attempts` each; `last`:
/// why the last was given up).
std::string GaveUpInARow(int in_a_row, int attempts, const std::string& last);

/// "gave up N trial(s) without a verdict, not counted in the budget: <the first few>"; empty
/// when none was given up. `named`: the first of them (up to kGivenUpNamed are named).
std::string GivenUpNote(const std::vector<std::string>& named, size_t count);

/// What a job whose budget is spent is doing about its finalists; empty otherwise.
std::string FinalsNote(const JobView& view);

/// The job as GetJob and ListJobs answer (its message: why it failed, the log's pause, why it
/// waits, its finalists, or the library templates it skipped, the trials it gave up and its
/// latest error).
v1::Job JobProtoOf(const JobView& view);
/// The job as WatchJob's events carry it.
v1::JobEvent EventOf(const JobView& view);

}  // namespace tune::tuner
