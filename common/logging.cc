#include "common/logging.h"

#include <cstdlib>
#include <mutex>
#include <string>

#include "common/strings.h"
#include "spdlog/sinks/stdout_color_sinks.h"

namespace tune {
namespace {

std::mutex g_mu;
spdlog::level::level_enum g_level = spdlog::level::info;

}  // namespace

std::shared_ptr<spdlog::logger> Logger(std::string_view component) {
  std::lock_guard lock(g_mu);
  std::string name(component);
  if (auto existing = spdlog::get(name)) {
    return existing;
  }
  auto logger = spdlog::stderr_color_mt(name);
  logger->set_level(g_level);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%L%$ [%n] %v");
  return logger;
}

absl::Status SetLogLevel(std::string_view level) {
  spdlog::level::level_enum parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(
        StrCat("log level '", level,
               "' is not recognised; accepted: trace, debug, info, warn, error, critical, off"));
  }
  std::lock_guard lock(g_mu);
  g_level = parsed;
  spdlog::set_level(parsed);
  return absl::OkStatus();
}

void InitLoggingFromEnv() {
  const char* env = std::getenv("TUNE_LOG_LEVEL");
  if (env == nullptr || *env == '\0') {
    return;
  }
  if (absl::Status s = SetLogLevel(env); !s.ok()) {
    Logger("tune")->warn("TUNE_LOG_LEVEL ignored: {}", s.message());
  }
}

absl::Status InitLogging(std::string_view flag_level) {
  InitLoggingFromEnv();
  if (flag_level.empty()) {
    return absl::OkStatus();
  }
  if (absl::Status s = SetLogLevel(flag_level); !s.ok()) {
    return absl::InvalidArgumentError(StrCat("--log-level: ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace tune
