#include "tuner/scheduler/event_hub.h"

namespace tune::tuner {

void JobEvents::Push(v1::JobEvent event) {
  std::lock_guard lock(mu_);
  if (closed_) {
    return;
  }
  events_.emplace_back(next_seq_++, std::move(event));
  if (events_.size() > kKept) {
    events_.pop_front();
  }
  cv_.notify_all();
}

void JobEvents::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

uint64_t JobEvents::LatestSeq() const {
  std::lock_guard lock(mu_);
  return next_seq_ - 1;
}

JobEvents::Batch JobEvents::WaitAfter(uint64_t after, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout,
               [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return closed_ || next_seq_ - 1 > after; });
  Batch batch;
  batch.last_seq = after;
  for (const auto& [seq, event] : events_) {
    if (seq > after) {
      batch.events.push_back(event);
      batch.last_seq = seq;
    }
  }
  batch.closed = closed_;
  return batch;
}

std::shared_ptr<JobEvents> EventHub::For(int64_t job_id) {
  std::lock_guard lock(mu_);
  std::shared_ptr<JobEvents>& stream = streams_[job_id];
  if (!stream) {
    stream = std::make_shared<JobEvents>();
  }
  return stream;
}

std::shared_ptr<JobEvents> EventHub::Find(int64_t job_id) const {
  std::lock_guard lock(mu_);
  auto it = streams_.find(job_id);
  return it == streams_.end() ? nullptr : it->second;
}

void EventHub::Drop(int64_t job_id) {
  std::shared_ptr<JobEvents> stream;
  {
    std::lock_guard lock(mu_);
    auto it = streams_.find(job_id);
    if (it == streams_.end()) {
      return;
    }
    stream = std::move(it->second);
    streams_.erase(it);
  }
  stream->Close();
}

void EventHub::CloseAll() {
  std::map<int64_t, std::shared_ptr<JobEvents>> streams;
  {
    std::lock_guard lock(mu_);
    streams.swap(streams_);
  }
  for (auto& [id, stream] : streams) {
    stream->Close();
  }
}

}  // namespace tune::tuner
