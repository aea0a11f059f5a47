// CPU lists as Linux writes them ("0-3,6"): parsing, printing, and pinning a process to one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tune {

/// The CPUs of a list like "0-3,6" (ranges and single CPUs, comma-separated), ascending and
/// distinct. Each must be one this process may run on (sched_getaffinity). A malformed list,
/// an empty one, or a CPU not allowed is InvalidArgument naming the problem, the accepted form
/// and the CPUs allowed.
absl::StatusOr<std::vector<int>> ParseCpuList(std::string_view text);

/// "0-3,6" for {0, 1, 2, 3, 6}.
std::string FormatCpuList(const std::vector<int>& cpus);

/// The CPUs this process may run on, ascending.
std::vector<int> AllowedCpus();

/// Restricts the calling process (its future threads included) to `cpus` (non-empty).
absl::Status PinToCpus(const std::vector<int>& cpus);

}  // namespace tune
