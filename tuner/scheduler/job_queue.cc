#include "tuner/scheduler/job_queue.h"

#include <algorithm>

#include "common/status.h"
#include "common/strings.h"

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

Admission::Ticket Admission::Ask(const JobRuntime& job, int capacity, bool none_usable) {
  const std::string& key = job.row.spec.device_key;
  Ticket ticket;
  ticket.capacity = capacity;
  ticket.none_usable = none_usable;
  ticket.no_worker = capacity == 0 || none_usable;
  if (auto first = blocker_.find(key); first != blocker_.end()) {
    if (first->second->row.spec.priority > job.row.spec.priority) {
      ticket.blocking = first->second;
    } else if (auto own = client_blocker_.find(StrCat(key, "|", job.client_key));
               own != client_blocker_.end()) {
      ticket.blocking = own->second;
    }
  }
  ticket.may_propose = !ticket.no_worker && ticket.blocking == nullptr && !storage_paused_;
  ticket.room = capacity - pipelined_[key] - job.Pipelined();
  return ticket;
}

void Admission::Passed(const JobRuntime& job, const Ticket& ticket, bool wants_more) {
  const std::string& key = job.row.spec.device_key;
  pipelined_[key] += job.Pipelined();  // with what it just proposed: later jobs wait behind it
  if (wants_more && ticket.blocking == nullptr) {
    blocker_.emplace(key, &job);
    client_blocker_.emplace(StrCat(key, "|", job.client_key), &job);
  }
}

}  // namespace tune::tuner
