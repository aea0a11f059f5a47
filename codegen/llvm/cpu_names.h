// The x86-64 CPU names LLVM knows (-mcpu), for checking a submitted target before any job waits
// on it. Defined in cpu_backend.cc, which sets up LLVM's x86 target for both.
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace tune {

/// OK when LLVM knows `cpu` as an x86-64 CPU name (-mcpu), "native" included; otherwise
/// InvalidArgument "-mcpu=<cpu> is not ...; accepted form: ..." for the caller to prefix with
/// its field (a value with characters no CPU name has, a path say, is not repeated).
absl::Status CheckX86CpuName(std::string_view cpu);

}  // namespace tune
