#include "tuner/scheduler/job_queue.h"

#include <algorithm>

#include "common/status.h"

namespace tune::tuner {

void JobQueue::Add(std::shared_ptr<JobRuntime> job) {
  const int64_t id = job->row.id;
  job->client_key = ClientKey(job->row.spec.client);
  TUNE_CHECK(jobs_.emplace(id, std::move(job)).second) << "job " << id << " added twice";
}

JobRuntime* JobQueue::Find(int64_t id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

std::shared_ptr<JobRuntime> JobQueue::Shared(int64_t id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second;
}

void JobQueue::Remove(int64_t id) { jobs_.erase(id); }

std::string ClientKey(std::string_view client) {
  if (size_t at = client.find('@'); at != std::string_view::npos) {
    return std::string(client.substr(0, at));
  }
  // "ipv4:127.0.0.1:54321", "ipv6:[::1]:54321": the host part.
  if (size_t colon = client.rfind(':'); colon != std::string_view::npos && colon > 5) {
    return std::string(client.substr(0, colon));
  }
  return std::string(client);
}

std::vector<JobRuntime*> JobQueue::ActiveInDispatchOrder() const {
  std::vector<JobRuntime*> order;
  for (const auto& [id, job] : jobs_) {
    if (!IsTerminal(job->row.state)) {
      order.push_back(job.get());
    }
  }
  std::map<std::string, int, std::less<>> load;  // trials outstanding per client
  for (const JobRuntime* job : order) {
    load[job->client_key] += job->Outstanding();
  }
  std::stable_sort(order.begin(), order.end(), [&](const JobRuntime* a, const JobRuntime* b) {
    if (a->row.spec.priority != b->row.spec.priority) {
      return a->row.spec.priority > b->row.spec.priority;
    }
    return load.find(a->client_key)->second < load.find(b->client_key)->second;  // ties: FIFO
  });
  return order;
}

std::vector<JobRuntime*> JobQueue::All() const {
  std::vector<JobRuntime*> all;
  for (const auto& [id, job] : jobs_) {
    all.push_back(job.get());
  }
  return all;
}

}  // namespace tune::tuner
