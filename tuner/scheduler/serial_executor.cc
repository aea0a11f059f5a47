#include "tuner/scheduler/serial_executor.h"

namespace tune::tuner {

SerialExecutor::SerialExecutor() {
  thread_ = std::thread([this] { Loop(); });
}

SerialExecutor::~SerialExecutor() { Stop(); }

bool SerialExecutor::Post(std::function<void()> task) {
  std::lock_guard lock(mu_);
  if (stopping_) {
    return false;
  }
  tasks_.push_back(std::move(task));
  ++posted_;
  cv_.notify_all();
  return true;
}

void SerialExecutor::Flush() {
  std::unique_lock lock(mu_);
  const uint64_t target = posted_;
  done_cv_.wait(lock,
                [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return finished_ >= target || ended_; });
}

void SerialExecutor::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }
  if (thread_.joinable()) {
    thread_.join();
  }
}

size_t SerialExecutor::Pending() const {
  std::lock_guard lock(mu_);
  return static_cast<size_t>(posted_ - finished_);
}

void SerialExecutor::Loop() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock,
               [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) {
        ended_ = true;  // stopping, and everything posted has run
        done_cv_.notify_all();
        return;
      }
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
    std::lock_guard lock(mu_);
    ++finished_;
    done_cv_.notify_all();
  }
}

}  // namespace tune::tuner
