#include "tests/tuner/test_worker.h"

#include <gtest/gtest.h>

#include "common/target.h"

namespace tune::tuner::testing {

std::string HostDeviceKey() { return Target::Parse("llvm -mcpu=native")->Resolved().DeviceKey(); }

TestWorker::~TestWorker() {
  if (scheduler_ != nullptr && !id_.empty()) {
    scheduler_->RemoveWorker(id_, "the test worker went away");
  }
}

bool TestWorker::Send(v1::DaemonMessage message) {
  std::lock_guard lock(mu_);
  if (closed_) {
    return false;
  }
  if (message.has_request()) {
    requests_.push_back(message.request());
  } else if (message.has_cancel()) {
    cancels_.push_back(message.cancel().trial_id());
  } else if (message.has_artifact_code()) {
    code_replies_.push_back(message.artifact_code());
  }
  cv_.notify_all();
  return true;
}

void TestWorker::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

void TestWorker::Register(Scheduler& scheduler, const std::string& name, int threads, int capacity,
                          const std::vector<std::string>& preloaded, int cores) {
  scheduler_ = &scheduler;
  v1::Register reg;
  reg.set_name(name);
  reg.set_device_key(HostDeviceKey());
  reg.mutable_capabilities()->set_threads(threads);
  reg.mutable_capabilities()->set_capacity(capacity);
  reg.mutable_capabilities()->set_cores(cores);
  for (const std::string& lib : preloaded) {
    v1::PreloadedLibrary* entry = reg.mutable_capabilities()->add_preloaded_libraries();
    entry->set_path("/opt/" + lib);
    entry->set_basename(lib);
  }
  Register(scheduler, reg);
}

void TestWorker::Register(Scheduler& scheduler, const v1::Register& reg) {
  scheduler_ = &scheduler;
  // The scheduler holds the channel by shared_ptr; the test owns this object for longer.
  absl::StatusOr<std::string> id =
      scheduler.AddWorker(reg, "test", std::shared_ptr<WorkerChannel>(this, [](WorkerChannel*) {}));
  ASSERT_TRUE(id.ok()) << id.status();
  id_ = *id;
}

std::optional<v1::MeasureRequest> TestWorker::NextRequest(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  if (!cv_.wait_for(lock, timeout, [this] { return !requests_.empty(); })) {
    return std::nullopt;
  }
  v1::MeasureRequest request = std::move(requests_.front());
  requests_.pop_front();
  return request;
}

bool TestWorker::NoRequestWaiting() {
  std::lock_guard lock(mu_);
  return requests_.empty();
}

std::vector<uint64_t> TestWorker::Cancels() {
  std::lock_guard lock(mu_);
  return cancels_;
}

v1::ArtifactCodeReply TestWorker::Fetch(const std::string& hash) {
  v1::FetchArtifact fetch;
  fetch.set_hash(hash);
  scheduler_->OnFetch(id_, fetch);  // answers before it returns
  std::lock_guard lock(mu_);
  EXPECT_EQ(code_replies_.size(), 1u);
  v1::ArtifactCodeReply reply =
      code_replies_.empty() ? v1::ArtifactCodeReply() : code_replies_.front();
  code_replies_.clear();
  return reply;
}

bool TestWorker::closed() {
  std::lock_guard lock(mu_);
  return closed_;
}

void TestWorker::Answer(const v1::MeasureRequest& request, double secs) {
  v1::MeasureResult result;
  result.set_trial_id(request.trial_id());
  result.mutable_measurement()->set_error_kind(v1::ERROR_KIND_NONE);
  result.mutable_measurement()->add_round_secs(secs);
  result.mutable_measurement()->set_number(1);
  result.mutable_measurement()->set_device_fingerprint("test worker");
  scheduler_->OnResult(id_, result);
}

void TestWorker::AnswerFailure(const v1::MeasureRequest& request, v1::ErrorKind kind,
                               const std::string& message) {
  v1::MeasureResult result;
  result.set_trial_id(request.trial_id());
  result.mutable_measurement()->set_error_kind(kind);
  result.mutable_measurement()->set_message(message);
  result.mutable_measurement()->set_device_fingerprint("test worker");
  scheduler_->OnResult(id_, result);
}

void TestWorker::Fail(const v1::MeasureRequest& request, const std::string& why) {
  v1::MeasureResult result;
  result.set_trial_id(request.trial_id());
  result.set_worker_error(why);
  scheduler_->OnResult(id_, result);
}

void TestWorker::Beat(const std::vector<uint64_t>& in_flight) {
  v1::Heartbeat beat;
  for (uint64_t id : in_flight) {
    beat.add_in_flight_trial_ids(id);
  }
  scheduler_->OnHeartbeat(id_, beat);
}

void TestWorker::Disconnect(const std::string& reason) {
  scheduler_->RemoveWorker(id_, reason);
  id_.clear();
}

}  // namespace tune::tuner::testing
