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

std::vector<JobRuntime*> JobQueue::ActiveInDispatchOrder() const {
  std::vector<JobRuntime*> order;
  for (const auto& [id, job] : jobs_) {
    if (!IsTerminal(job->row.state)) {
      order.push_back(job.get());
    }
  }
  std::stable_sort(order.begin(), order.end(), [](const JobRuntime* a, const JobRuntime* b) {
    return a->row.spec.priority > b->row.spec.priority;  // ties keep id order (FIFO)
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
