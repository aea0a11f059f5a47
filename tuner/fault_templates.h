// Test-only schedule templates that produce deliberately broken kernels, so that the fault
// tests can check that a crashing or hanging kernel is recorded (RUNTIME_CRASH / TIMEOUT) while
// the worker survives and the job completes. They are reachable only when the daemon runs with
// the hidden flag --enable-fault-templates AND a job names them in spec.templates; nothing else
// ever selects them.
//
//   fault.crash  the op's first real template, plus a store 4 TiB before the output buffer
//                (SIGSEGV on the first call)
//   fault.hang   the op's first real template, followed by a loop of 2^50 dependent loads and
//                stores (never finishes in practice)
//
// Both keep the wrapped template's config space, so a job can run several trials of them.
#pragma once

#include <string_view>
#include <vector>

#include "codegen/templates/template.h"
#include "common/workload.h"

namespace tune::tuner {

inline constexpr std::string_view kFaultCrashTemplate = "fault.crash";
inline constexpr std::string_view kFaultHangTemplate = "fault.hang";

/// The fault template called `name` for `op`, or nullptr when `name` is not one.
const KernelTemplate* FindFaultTemplate(std::string_view name, OpKind op);

/// The names of the fault templates.
std::vector<std::string_view> FaultTemplateNames();

}  // namespace tune::tuner
