// Wall-clock time as the tuning log and the wire record it: Unix milliseconds.
#pragma once

#include <cstdint>

namespace tune {

/// The current Unix time in milliseconds (system clock; it may jump). Never fails. Use
/// std::chrono::steady_clock for durations and deadlines, this only for timestamps.
int64_t UnixNowMs();

}  // namespace tune
