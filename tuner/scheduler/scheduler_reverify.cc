// Scheduler::Reverify: a reverify job (reverify.h) for the workloads a client names, checked
// before anything is written: the log holds records of them to re-measure, and a worker of the
// target's device key is connected to re-measure them.
#include <algorithm>

#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::tuner {
namespace {

constexpr int kDefaultReverifyTrials = 3;  // the winner and two runners-up
constexpr int kMaxReverifyTrials = 64;

absl::Status Invalid(std::string_view field, const std::string& why) {
  return absl::InvalidArgumentError(StrCat(field, ": ", why));
}

}  // namespace

absl::StatusOr<v1::Job> Scheduler::Reverify(const v1::ReverifyRequest& request,
                                            std::string_view client) {
  const int selections =
      !request.workload().empty() + (request.tasks_size() > 0) + (request.all() ? 1 : 0);
  if (selections != 1) {
    return Invalid("workload",
                   StrCat("name exactly one of a workload, tasks (a model's workloads) or all; ",
                          selections == 0 ? "none was given" : "several were given"));
  }
  const int per_workload = request.trials() == 0 ? kDefaultReverifyTrials : request.trials();
  if (per_workload < 1 || per_workload > kMaxReverifyTrials) {
    return Invalid("trials", StrCat(request.trials(), " is out of range; expected 1 to ",
                                    kMaxReverifyTrials, " re-measurements per workload (0: ",
                                    kDefaultReverifyTrials, ", the winner and two runners-up)"));
  }
  // The target as a job has it (native resolved), checked by a one-workload spec.
  v1::JobSpec probe;
  probe.set_workload(request.all()                ? "gemm:M=1,N=1,K=1"
                     : request.workload().empty() ? request.tasks(0).workload()
                                                  : request.workload());
  probe.set_target(request.target());
  probe.set_trials(1);
  ASSIGN_OR_RETURN(ValidatedJob checked,
                   ValidateJobSpec(probe, ValidationOptions{options_.catalog}));
  const std::string& target = checked.spec.target;

  std::vector<v1::WorkloadTask> wanted;
  if (request.all()) {
    ASSIGN_OR_RETURN(std::vector<std::string> measured, log_->WorkloadsMeasuredOn(target));
    for (std::string& workload : measured) {
      v1::WorkloadTask task;
      task.set_workload(std::move(workload));
      task.set_weight(1);
      wanted.push_back(std::move(task));
    }
  } else if (!request.workload().empty()) {
    v1::WorkloadTask task;
    task.set_workload(request.workload());
    task.set_weight(1);
    wanted.push_back(std::move(task));
  } else {
    wanted.assign(request.tasks().begin(), request.tasks().end());
  }
  // Only workloads with a successful record on the target: nothing else can be re-measured.
  std::vector<v1::WorkloadTask> tasks;
  std::vector<std::string> without;
  for (v1::WorkloadTask& task : wanted) {
    ASSIGN_OR_RETURN(std::string canonical, CanonicalWorkload(task.workload(), "workload"));
    ASSIGN_OR_RETURN(std::optional<Record> best,
                     log_->QueryBest({.workload = canonical, .target = target}));
    if (best.has_value()) {
      task.set_workload(canonical);
      tasks.push_back(std::move(task));
    } else {
      without.push_back(canonical);
    }
  }
  if (tasks.empty()) {
    return absl::FailedPreconditionError(StrCat(
        "nothing to reverify: the log has no successful record on '", target, "' of ",
        wanted.empty() ? std::string("any workload")
        : wanted.size() == 1
            ? without.front()
            : StrCat("any of the ", wanted.size(), " workloads (", without.front(), ", ...)")));
  }
  {
    std::lock_guard lock(mu_);
    const std::vector<WorkerEntry*> workers = workers_.All();
    if (std::none_of(workers.begin(), workers.end(), [&](const WorkerEntry* w) {
          return w->reg.device_key() == checked.spec.device_key;
        })) {
      return absl::FailedPreconditionError(StrCat(
          "no worker of device key ", checked.spec.device_key,
          " is connected: reverify re-measures on the workers of its newest fingerprint; start "
          "one (tune-server --daemon ADDRESS) and call again"));
    }
  }

  v1::JobSpec spec;
  if (tasks.size() == 1) {
    spec.set_workload(tasks.front().workload());
  } else {
    for (v1::WorkloadTask& task : tasks) {
      *spec.add_tasks() = std::move(task);
    }
  }
  spec.set_target(request.target());
  spec.set_trials(per_workload * static_cast<int>(std::max<size_t>(tasks.size(), 1)));
  spec.set_strategy("seeds");
  spec.set_no_transfer(true);
  spec.set_priority(request.priority());
  spec.set_name(request.name().empty() ? "reverify" : request.name());
  ASSIGN_OR_RETURN(ValidatedJob valid, ValidateJobSpec(spec, ValidationOptions{options_.catalog}));
  valid.spec.reverify = true;
  if (!without.empty()) {
    Logger("daemon")->info("reverify: {} of its workloads have no record on '{}' and are left out",
                           without.size(), target);
  }
  return SubmitValidated(std::move(valid), client);
}

absl::StatusOr<std::vector<SeenFingerprint>> Scheduler::ListFingerprints() {
  return log_->ListFingerprints();
}

}  // namespace tune::tuner
