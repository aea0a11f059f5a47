#include "tuner/daemon/worker_link_service.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "tuner/api/grpc_status.h"

namespace tune::tuner {
namespace {

using Stream = grpc::ServerReaderWriter<v1::DaemonMessage, v1::WorkerMessage>;

// A worker's stream as a WorkerChannel: Send queues, a writer thread writes.
class StreamChannel final : public WorkerChannel {
 public:
  StreamChannel(grpc::ServerContext* context, Stream* stream)
      : context_(context), stream_(stream) {}

  bool Send(v1::DaemonMessage message) override {
    std::lock_guard lock(mu_);
    if (closed_) {
      return false;
    }
    outbox_.push_back(std::move(message));
    cv_.notify_all();
    return true;
  }

  void Close() override {
    std::lock_guard lock(mu_);
    closed_ = true;
    cv_.notify_all();
    // Cancelling ends the handler's Read; only while the handler runs.
    if (!handler_done_) {
      context_->TryCancel();
    }
  }

  /// Stops the writer without cancelling the call (so the handler can return its own status).
  void StopWriter() {
    std::lock_guard lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

  /// The handler is about to return: the context must not be touched any more.
  void MarkHandlerDone() {
    std::lock_guard lock(mu_);
    closed_ = true;
    handler_done_ = true;
  }

  void WriterLoop() {
    while (true) {
      v1::DaemonMessage message;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock,
                 [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return closed_ || !outbox_.empty(); });
        if (closed_) {
          return;
        }
        message = std::move(outbox_.front());
        outbox_.pop_front();
      }
      if (!stream_->Write(message)) {
        Close();
        return;
      }
    }
  }

 private:
  grpc::ServerContext* const context_;
  Stream* const stream_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<v1::DaemonMessage> outbox_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool handler_done_ ABSL_GUARDED_BY(mu_) = false;
};

// Joins the writer on every way out of the handler.
class WriterThread {
 public:
  explicit WriterThread(std::shared_ptr<StreamChannel> channel) : channel_(std::move(channel)) {
    thread_ = std::thread([c = channel_] { c->WriterLoop(); });
  }
  ~WriterThread() {
    channel_->StopWriter();
    thread_.join();
    channel_->MarkHandlerDone();
  }

 private:
  std::shared_ptr<StreamChannel> channel_;
  std::thread thread_;
};

// The longest worker name or device key accepted.
constexpr size_t kMaxRegisteredText = 128;

// A worker's name and device key reach the daemon's log, its listings and the records: printable
// ASCII only, so that no newline or control character forges a line of the log or a column of a
// table. Refused, not rewritten: a worker is told why and its owner fixes --name.
absl::Status CheckRegisteredText(std::string_view field, std::string_view text) {
  const std::string accepted =
      StrCat("; accepted form: 1 to ", kMaxRegisteredText,
             " printable ASCII characters without spaces, e.g. 'gpu-host-3' (tune-server --name)");
  if (text.empty() || text.size() > kMaxRegisteredText) {
    return absl::InvalidArgumentError(
        StrCat("register.", field, ": has ", text.size(), " characters", accepted));
  }
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c <= 0x20 || c >= 0x7f) {
      return absl::InvalidArgumentError(StrCat("register.", field, ": byte ", i, " is ",
                                               fmt::format("0x{:02x}", c),
                                               ", not a printable character", accepted));
    }
  }
  return absl::OkStatus();
}

grpc::Status Serve(Scheduler& scheduler, grpc::ServerContext* context, Stream* stream) {
  auto log = Logger("daemon");
  v1::WorkerMessage message;
  if (!stream->Read(&message)) {
    return grpc::Status(grpc::StatusCode::CANCELLED, "the stream ended before Register");
  }
  if (!message.has_register_()) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "register: the first message of a WorkerLink stream must be Register");
  }
  for (const auto& [field, text] : {std::pair{"name", message.register_().name()},
                                    {"device_key", message.register_().device_key()}}) {
    if (absl::Status s = CheckRegisteredText(field, text); !s.ok()) {
      log->warn("registration from {} refused: {}", context->peer(), s.message());
      return ToGrpcStatus(s);
    }
  }
  auto channel = std::make_shared<StreamChannel>(context, stream);
  WriterThread writer(channel);
  absl::StatusOr<std::string> id =
      scheduler.AddWorker(message.register_(), context->peer(), channel);
  if (!id.ok()) {
    log->warn("registration from {} refused: {}", context->peer(), id.status());
    return ToGrpcStatus(id.status());
  }
  while (stream->Read(&message)) {
    switch (message.kind_case()) {
      case v1::WorkerMessage::kResult:
        scheduler.OnResult(*id, message.result());
        break;
      case v1::WorkerMessage::kHeartbeat:
        scheduler.OnHeartbeat(*id, message.heartbeat());
        break;
      case v1::WorkerMessage::kFetch:
        scheduler.OnFetch(*id, message.fetch());
        break;
      case v1::WorkerMessage::kRegister:
        log->warn("worker {} sent Register twice; ignored", *id);
        break;
      case v1::WorkerMessage::KIND_NOT_SET:
        log->warn("worker {} sent an empty message; ignored", *id);
        break;
    }
  }
  scheduler.RemoveWorker(*id, context->IsCancelled() ? "stream cancelled" : "stream ended");
  return grpc::Status::OK;
}

}  // namespace

grpc::Status WorkerLinkService::Connect(grpc::ServerContext* context, Stream* stream) {
  try {
    absl::StatusOr<Caller> caller = authorizer_->Check(AuthorizationOf(*context), Role::kWorker);
    if (!caller.ok()) {
      Logger("daemon")->warn("worker from {} denied: {}", context->peer(),
                             caller.status().message());
      return ToGrpcStatus(caller.status());
    }
    return Serve(*scheduler_, context, stream);
  } catch (const std::exception& e) {
    Logger("daemon")->error("WorkerLink handler failed: {}", e.what());
    return grpc::Status(grpc::StatusCode::INTERNAL, StrCat("daemon error: ", e.what()));
  }
}

}  // namespace tune::tuner
