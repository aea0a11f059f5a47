// Logging setup: one spdlog logger per component, level from a flag or TUNE_LOG_LEVEL.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "spdlog/spdlog.h"

namespace tune {

/// Returns the logger of one component ("daemon", "worker", "codegen", ...), creating it on first
/// use. Loggers write to stderr.
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

}  // namespace tune
