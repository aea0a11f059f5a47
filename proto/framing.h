// Length-prefixed protobuf messages on pipes: a 4-byte little-endian length, then the
// serialized message. Used between tune-server and its measurement child, and by any process
// that talks protobuf to a child of its own over pipes.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "google/protobuf/message_lite.h"

namespace tune {

/// Largest frame either side accepts (a sanity bound, far above any real message).
inline constexpr uint32_t kMaxFrameBytes = 64u << 20;

/// Writes one frame, retrying short writes and EINTR. Fails (Unavailable) when the reader is
/// gone (EPIPE) or on any other write error; SIGPIPE must be ignored or blocked by the caller.
absl::Status WriteFrame(int fd, const google::protobuf::MessageLite& message);

/// How ReadFrame ended.
enum class ReadOutcome : uint8_t {
  kOk,        // one message was read and parsed
  kEof,       // the writer closed the pipe before a whole frame arrived (or at a boundary)
  kDeadline,  // the deadline passed first
  kWoken,     // `wake_fd` became readable first (a cancellation)
  kError,     // a read error, an oversized frame or a message that does not parse
};

/// Reads one frame into `message`. Waits without limit when `deadline` is empty, and watches
/// `wake_fd` (if >= 0) for readability. On kError, `*error` says why.
ReadOutcome ReadFrame(int fd, google::protobuf::MessageLite* message,
                      std::optional<std::chrono::steady_clock::time_point> deadline, int wake_fd,
                      std::string* error);

}  // namespace tune
