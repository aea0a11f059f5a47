// Test-only schedule templates that produce deliberately broken (or unusual) kernels and builds,
// so that the fault tests can check what a real daemon and real workers do with them. Only the
// test programs have them: tune-fault-daemon (fault_daemon_main.cc: tune-daemon with these in
// its catalog) and the tests that build a catalog with them. A job gets one only by naming it
// in spec.templates (KernelTemplate::offered is false).
//
//   fault.crash        the op's first real template, plus a store 4 TiB before the output buffer
//                      (SIGSEGV on the first call)
//   fault.hang         the op's first real template, followed by a loop of 2^50 dependent loads
//                      and stores (never finishes in practice)
//   fault.wrong        the op's first real template, then 1 added to the output's first element
//                      (a WRONG_ANSWER)
//   fault.slow         the op's first real template after usleep(kFaultSlowMicros): correct,
//                      but each call lasts longer than a short heartbeat deadline
//   fault.extern_call  gemm only: the whole kernel is one call to tune_test_microkernel, a
//                      reference GEMM in a library the worker must have preloaded
//                      (libtune_test_microkernel.so, named in the artifact)
//   fault.build_crash  building any config aborts the process that builds it
//   fault.build_hang   building any config never finishes
//
// All keep the wrapped template's config space, so a job can run several trials of them.
#pragma once

#include <string_view>
#include <vector>

#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"
#include "common/workload.h"

namespace tune::tuner {

inline constexpr std::string_view kFaultCrashTemplate = "fault.crash";
inline constexpr std::string_view kFaultHangTemplate = "fault.hang";
inline constexpr std::string_view kFaultWrongTemplate = "fault.wrong";
inline constexpr std::string_view kFaultSlowTemplate = "fault.slow";
inline constexpr std::string_view kFaultExternCallTemplate = "fault.extern_call";
inline constexpr std::string_view kFaultBuildCrashTemplate = "fault.build_crash";
inline constexpr std::string_view kFaultBuildHangTemplate = "fault.build_hang";

/// How long each call of a fault.slow kernel sleeps.
inline constexpr int kFaultSlowMicros = 1500000;
/// The library fault.extern_call kernels call into, and its symbol.
inline constexpr std::string_view kFaultExternLibrary = "libtune_test_microkernel.so";
inline constexpr std::string_view kFaultExternSymbol = "tune_test_microkernel";

/// Every fault template, for GEMM and conv2d (they live for the program).
std::vector<const KernelTemplate*> FaultTemplates();

/// The fault template called `name` for `op`, or nullptr when `name` is not one.
const KernelTemplate* FindFaultTemplate(std::string_view name, OpKind op);

/// The names of the fault templates.
std::vector<std::string_view> FaultTemplateNames();

}  // namespace tune::tuner
