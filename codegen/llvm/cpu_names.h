// The x86-64 CPU names LLVM knows (-mcpu), for checking a submitted target before any job waits
// on it, and their features. Defined in cpu_backend.cc, which sets up LLVM's x86 target for both.
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace tune {

/// OK when LLVM knows `cpu` as an x86-64 CPU name (-mcpu), "native" included; otherwise
/// InvalidArgument "-mcpu=<cpu> is not ...; accepted form: ..." for the caller to prefix with
/// its field (a value with characters no CPU name has, a path say, is not repeated).
absl::Status CheckX86CpuName(std::string_view cpu);

/// Whether LLVM's x86-64 CPU `cpu` (a name CheckX86CpuName accepts, not "native") has the
/// subtarget feature `feature` ("avx512fp16", "amx-bf16", ...). False for unknown names.
bool X86CpuHasFeature(std::string_view cpu, std::string_view feature);

}  // namespace tune
