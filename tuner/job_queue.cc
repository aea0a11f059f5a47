#include "tuner/job_queue.h"

#include <algorithm>

#include "common/status.h"

namespace tune::tuner {

void JobQueue::Add(std::shared_ptr<JobRuntime> job) {
  const int64_t id = job->row.id;
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
  std::vector<std::pair<JobRuntime*, std::string>> keyed;
  for (JobRuntime* job : order) {
    std::string client = ClientKey(job->row.spec.client);
    load[client] += job->Outstanding();
    keyed.emplace_back(job, std::move(client));
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    if (a.first->row.spec.priority != b.first->row.spec.priority) {
      return a.first->row.spec.priority > b.first->row.spec.priority;
    }
    return load.find(a.second)->second < load.find(b.second)->second;  // ties keep id order
  });
  for (size_t i = 0; i < keyed.size(); ++i) {
    order[i] = keyed[i].first;
  }
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
