#include "proto/framing.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/strings.h"

namespace tune {
namespace {

using Clock = std::chrono::steady_clock;

// Waits until `fd` is readable. Returns kOk when it is (or has hung up: the read then sees EOF).
ReadOutcome WaitReadable(int fd, std::optional<Clock::time_point> deadline, int wake_fd,
                         std::string* error) {
  while (true) {
    int timeout_ms = -1;
    if (deadline) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline - Clock::now());
      if (left.count() <= 0) {
        return ReadOutcome::kDeadline;
      }
      timeout_ms = static_cast<int>(std::min<int64_t>(left.count(), 1 << 30));
    }
    pollfd fds[2] = {{fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
    int n = poll(fds, wake_fd >= 0 ? 2 : 1, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      *error = StrCat("poll: ", std::strerror(errno));
      return ReadOutcome::kError;
    }
    if (n == 0) {
      continue;  // re-checks the deadline
    }
    if (wake_fd >= 0 && (fds[1].revents & POLLIN)) {
      return ReadOutcome::kWoken;
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      return ReadOutcome::kOk;
    }
  }
}

// Reads exactly `size` bytes. kEof when the pipe closes first.
ReadOutcome ReadFull(int fd, char* data, size_t size, std::optional<Clock::time_point> deadline,
                     int wake_fd, std::string* error) {
  size_t done = 0;
  while (done < size) {
    ReadOutcome waited = WaitReadable(fd, deadline, wake_fd, error);
    if (waited != ReadOutcome::kOk) {
      return waited;
    }
    ssize_t n = read(fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) {
        continue;
      }
      *error = StrCat("read: ", std::strerror(errno));
      return ReadOutcome::kError;
    }
    if (n == 0) {
      return ReadOutcome::kEof;
    }
    done += static_cast<size_t>(n);
  }
  return ReadOutcome::kOk;
}

}  // namespace

absl::Status WriteFrame(int fd, const google::protobuf::MessageLite& message) {
  size_t size = message.ByteSizeLong();
  if (size > kMaxFrameBytes) {
    return absl::InvalidArgumentError(
        StrCat("message of ", size, " bytes exceeds the frame limit"));
  }
  // One buffer, one write: small frames reach the reader atomically.
  std::string buffer(4, '\0');
  for (int i = 0; i < 4; ++i) {
    buffer[i] = static_cast<char>((size >> (8 * i)) & 0xff);
  }
  if (!message.AppendToString(&buffer)) {
    return absl::InternalError("cannot serialize message");
  }
  size_t done = 0;
  while (done < buffer.size()) {
    ssize_t n = write(fd, buffer.data() + done, buffer.size() - done);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) {
        continue;
      }
      return absl::UnavailableError(StrCat("write: ", std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

ReadOutcome ReadFrame(int fd, google::protobuf::MessageLite* message,
                      std::optional<Clock::time_point> deadline, int wake_fd, std::string* error) {
  unsigned char header[4];
  ReadOutcome outcome =
      ReadFull(fd, reinterpret_cast<char*>(header), sizeof(header), deadline, wake_fd, error);
  if (outcome != ReadOutcome::kOk) {
    return outcome;
  }
  uint32_t size =
      header[0] | (header[1] << 8) | (header[2] << 16) | (static_cast<uint32_t>(header[3]) << 24);
  if (size > kMaxFrameBytes) {
    *error = StrCat("frame of ", size, " bytes exceeds the limit");
    return ReadOutcome::kError;
  }
  std::string body(size, '\0');
  outcome = ReadFull(fd, body.data(), size, deadline, wake_fd, error);
  if (outcome != ReadOutcome::kOk) {
    return outcome;
  }
  if (!message->ParseFromString(body)) {
    *error = "malformed message";
    return ReadOutcome::kError;
  }
  return ReadOutcome::kOk;
}

}  // namespace tune
