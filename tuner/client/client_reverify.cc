// `tune-client reverify`: re-measures the log's best configs on workers of the device's newest
// fingerprint (tuner/scheduler/reverify.h) and, with --wait, prints each workload's verdict.
#include <cstdio>
#include <string>
#include <vector>

#include "common/strings.h"
#include "common/workload_list.h"
#include "tuner/api/client_format.h"
#include "tuner/client/client_commands.h"

namespace tune::tuner {
namespace {

// "confirmed", "changed" or "" from a reverify job's message.
std::string VerdictOf(const std::string& message) {
  for (std::string_view verdict : {"confirmed", "changed"}) {
    if (message.find(StrCat("reverify: ", verdict)) != std::string::npos) {
      return std::string(verdict);
    }
  }
  return "";
}

}  // namespace

int Reverify(TunerClient& client, const Globals& g, ReverifyFlags& f) {
  v1::ReverifyRequest& request = f.request;
  const int selections = !request.workload().empty() + !f.workloads_file.empty() +
                         !f.model.empty() + (request.all() ? 1 : 0);
  if (selections != 1) {
    fmt::print(stderr,
               "tune-client: reverify needs exactly one of --workload, --workloads-file, --model "
               "or --all\n");
    return kExitUsage;
  }
  if (!f.workloads_file.empty() || !f.model.empty()) {
    absl::StatusOr<std::vector<WeightedWorkload>> list =
        f.model.empty() ? ReadWorkloadList(f.workloads_file) : BuiltinModel(f.model);
    if (!list.ok()) {
      fmt::print(stderr, "tune-client: {}\n", list.status().message());
      return kExitUsage;
    }
    for (const WeightedWorkload& w : *list) {
      v1::WorkloadTask* task = request.add_tasks();
      task->set_workload(w.workload.ToString());
      task->set_weight(w.weight);
    }
  }
  absl::StatusOr<v1::Job> job = client.Reverify(request);
  if (!job.ok()) {
    return Report(job.status(), g);
  }
  if (!f.wait) {
    g.json ? PrintJson(JobJson(*job)) : fmt::print("{}\n", job->job_id());
    return kExitOk;
  }
  if (!g.json) {
    fmt::print("{}\n", job->job_id());
    std::fflush(stdout);
  }
  absl::StatusOr<v1::Job> done = FollowToEnd(client, g, job->job_id(), f.wait_timeout_s);
  if (!done.ok()) {
    return Report(done.status(), g);
  }
  // Each workload's verdict: the job's own, or each task's.
  std::vector<v1::Job> verdicts;
  if (done->tasks_size() == 0) {
    verdicts.push_back(*done);
  }
  for (const v1::TaskProgress& task : done->tasks()) {
    absl::StatusOr<v1::Job> ended = client.GetJob(task.job_id());
    if (!ended.ok()) {
      return Report(ended.status(), g);
    }
    verdicts.push_back(*std::move(ended));
  }
  int confirmed = 0, changed = 0;
  nlohmann::json out = {{"job", JobJson(*done)}, {"workloads", nlohmann::json::array()}};
  for (const v1::Job& v : verdicts) {
    const std::string verdict = VerdictOf(v.message());
    confirmed += verdict == "confirmed";
    changed += verdict == "changed";
    out["workloads"].push_back({{"workload", v.spec().workload()},
                                {"job_id", v.job_id()},
                                {"verdict", verdict.empty() ? "none" : verdict},
                                {"message", v.message()}});
    if (!g.json) {
      fmt::print("{}: {}\n", v.spec().workload(), v.message());
    }
  }
  if (g.json) {
    PrintJson(out);
  } else {
    fmt::print("{} confirmed, {} changed, {} without a verdict, of {} workloads\n", confirmed,
               changed, verdicts.size() - confirmed - changed, verdicts.size());
  }
  return FinalExit(*done);
}

}  // namespace tune::tuner
