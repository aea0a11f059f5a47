// Logging setup: one spdlog logger per component, level from a flag or TUNE_LOG_LEVEL, lines as
// text for people or as JSON objects for log collectors (--log-format).
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "spdlog/spdlog.h"

namespace tune {

/// Returns the logger of one component ("daemon", "worker", "codegen", ...), creating it on first
/// use. Loggers write to stderr, in the format last set (SetLogFormat; text by default).
std::shared_ptr<spdlog::logger> Logger(std::string_view component);

/// Sets the level of every logger, existing and future. Accepted: trace, debug, info, warn,
/// error, critical, off. Anything else is InvalidArgument.
absl::Status SetLogLevel(std::string_view level);

/// Applies TUNE_LOG_LEVEL from the environment if it is set (an invalid value is ignored with a
/// warning).
void InitLoggingFromEnv();

/// The start-up of every binary: TUNE_LOG_LEVEL first, then `flag_level` (the --log-level flag)
/// when it is not empty, so the flag wins. A bad flag value is InvalidArgument naming
/// --log-level and the accepted levels.
absl::Status InitLogging(std::string_view flag_level);

/// Sets the line format of every logger, existing and future: "text" (time, level, component,
/// message) or "json" (JsonLogFormatter). Anything else is InvalidArgument naming --log-format
/// and the accepted values.
absl::Status SetLogFormat(std::string_view format);

/// The json format: one JSON object per line, {"time":"2026-01-02T03:04:05.678Z","level":
/// "info","logger":"daemon","message":"...","pid":1234}, the time in UTC; any message (quotes,
/// newlines, control characters) is escaped as JSON requires, and invalid UTF-8 becomes U+FFFD.
std::unique_ptr<spdlog::formatter> JsonLogFormatter();

}  // namespace tune
