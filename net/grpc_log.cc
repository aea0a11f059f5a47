#include "net/grpc_log.h"

#include <mutex>

#include "common/logging.h"
#include "common/strings.h"
#include "grpc/support/log.h"

namespace tune::net {

LogRateLimiter::Verdict LogRateLimiter::Admit(std::string_view where,
                                              std::chrono::steady_clock::time_point now) {
  auto it = places_.find(where);
  if (it == places_.end()) {
    places_.emplace(std::string(where), Place{now, 0});
    return {true, 0};
  }
  Place& place = it->second;
  if (now - place.last_written < window_) {
    ++place.left_out;
    return {false, 0};
  }
  Verdict verdict{true, place.left_out};
  place = Place{now, 0};
  return verdict;
}

namespace {

std::mutex g_mu;
LogRateLimiter* g_limiter = nullptr;  // set once by RouteGrpcLogs, never freed

void WriteGrpcLine(gpr_log_func_args* args) {
  const std::string where = StrCat(args->file == nullptr ? "?" : args->file, ":", args->line);
  LogRateLimiter::Verdict verdict;
  {
    std::lock_guard lock(g_mu);
    verdict = g_limiter->Admit(where, std::chrono::steady_clock::now());
  }
  if (!verdict.write) {
    return;
  }
  const spdlog::level::level_enum level =
      args->severity == GPR_LOG_SEVERITY_ERROR  ? spdlog::level::warn
      : args->severity == GPR_LOG_SEVERITY_INFO ? spdlog::level::debug
                                                : spdlog::level::trace;
  if (verdict.left_out > 0) {
    Logger("grpc")->log(level, "{} ({}; {} more from there left out)", args->message, where,
                        verdict.left_out);
  } else {
    Logger("grpc")->log(level, "{} ({})", args->message, where);
  }
}

}  // namespace

void RouteGrpcLogs(std::chrono::seconds window) {
  {
    std::lock_guard lock(g_mu);
    if (g_limiter == nullptr) {
      g_limiter = new LogRateLimiter(window);
    }
  }
  gpr_set_log_function(WriteGrpcLine);
}

}  // namespace tune::net
