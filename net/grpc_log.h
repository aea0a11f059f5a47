// gRPC core's own log lines (a failed TLS handshake, a malformed HTTP/2 frame) into tune's
// logging: the spdlog logger "grpc", in the process's --log-format, and rate-limited, so that a
// peer that fails every handshake, several times a second, cannot flood the log.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace tune::net {

/// Routes gRPC core's log lines of severity error (and info, at --log-level debug) to the
/// logger "grpc": the first line from one place of gRPC's source is written, then at most one per
/// `window`, which says how many like it were left out. Call once, before serving.
void RouteGrpcLogs(std::chrono::seconds window = std::chrono::seconds(10));

/// RouteGrpcLogs' rate limit, alone (for tests): decides for each line from `where` at `now`
/// whether it is written, and how many lines from there were left out since the last one
/// written.
class LogRateLimiter {
 public:
  explicit LogRateLimiter(std::chrono::steady_clock::duration window) : window_(window) {}
  struct Verdict {
    bool write = false;
    int64_t left_out = 0;  // since the last line written from `where`, when `write`
  };
  Verdict Admit(std::string_view where, std::chrono::steady_clock::time_point now);

 private:
  struct Place {
    std::chrono::steady_clock::time_point last_written;
    int64_t left_out = 0;
  };
  std::chrono::steady_clock::duration window_;
  std::map<std::string, Place, std::less<>> places_;
};

}  // namespace tune::net
