// Which load failures are the worker's, not the artifact's: a failure caused by the config's own
// code is a verdict (LOAD_ERROR); one caused by what this worker or its device lacks is
// WORKER_ERROR, which the daemon measures again elsewhere (common/measurement.h, IsVerdict).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/measurement.h"

namespace tune::rpc {

/// The kind of a failed dlopen of an artifact, from dlerror's text: WORKER_ERROR when a file is
/// not there or cannot be mapped on this host (a library the artifact depends on that the worker
/// lacks, its cached copy gone, no memory to map it); LOAD_ERROR otherwise (not a valid object,
/// a symbol of its own left undefined).
ErrorKind DlopenFailureKind(std::string_view dl_error);

/// The kind of a failed GPU module load (cuModuleLoadDataEx / hipModuleLoadData), from its
/// message, which names the driver's error: WORKER_ERROR for what the driver lacks (a PTX ISA
/// version it is too old for, no JIT compiler) or the device has no room for now (out of
/// memory); LOAD_ERROR otherwise (the module's own code is bad).
ErrorKind ModuleLoadFailureKind(std::string_view message);

/// The kind of a kernel's non-zero return status: UNSUPPORTED for TUNE_CPU_ERROR_AMX_DENIED
/// (Linux refused this worker's process AMX's tile data), RUNTIME_CRASH otherwise.
ErrorKind KernelStatusKind(int32_t rc);
/// Its message: "kernel returned -20 (TUNE_CPU_ERROR_AMX_DENIED: ...)", "kernel returned 3".
std::string KernelStatusMessage(int32_t rc);

}  // namespace tune::rpc
