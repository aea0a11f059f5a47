#include "common/logging.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>

#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/stdout_color_sinks.h"

namespace tune {
namespace {

constexpr char kTextPattern[] = "%Y-%m-%dT%H:%M:%S.%e %^%L%$ [%n] %v";

std::mutex g_mu;
spdlog::level::level_enum g_level = spdlog::level::info;
bool g_json = false;

// "2026-01-02T03:04:05.678Z".
std::string UtcTime(spdlog::log_clock::time_point time) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch());
  const std::time_t secs = static_cast<std::time_t>(ms.count() / 1000);
  std::tm utc{};
  gmtime_r(&secs, &utc);
  char text[32];
  const size_t n = std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03}Z", std::string_view(text, n), ms.count() % 1000);
}

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const spdlog::string_view_t level = spdlog::level::to_string_view(msg.level);
    nlohmann::ordered_json line = {
        {"time", UtcTime(msg.time)},
        {"level", std::string_view(level.data(), level.size())},
        {"logger", std::string_view(msg.logger_name.data(), msg.logger_name.size())},
        {"message", std::string_view(msg.payload.data(), msg.payload.size())},
        {"pid", static_cast<int64_t>(getpid())},
    };
    const std::string text =
        line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    dest.append(text.data(), text.data() + text.size());
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

void ApplyFormat(spdlog::logger& logger, bool json) {
  if (json) {
    logger.set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger.set_formatter(std::make_unique<spdlog::pattern_formatter>(kTextPattern));
  }
}

}  // namespace

std::unique_ptr<spdlog::formatter> JsonLogFormatter() { return std::make_unique<JsonFormatter>(); }

std::shared_ptr<spdlog::logger> Logger(std::string_view component) {
  std::lock_guard lock(g_mu);
  std::string name(component);
  if (auto existing = spdlog::get(name)) {
    return existing;
  }
  auto logger = spdlog::stderr_color_mt(name);
  logger->set_level(g_level);
  ApplyFormat(*logger, g_json);
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

absl::Status SetLogFormat(std::string_view format) {
  if (format != "text" && format != "json") {
    return absl::InvalidArgumentError(
        StrCat("--log-format: '", format, "' is not recognised; accepted: text, json"));
  }
  std::lock_guard lock(g_mu);
  g_json = format == "json";
  spdlog::apply_all(
      [](const std::shared_ptr<spdlog::logger>& logger) { ApplyFormat(*logger, g_json); });
  return absl::OkStatus();
}

}  // namespace tune
