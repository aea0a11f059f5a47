#include "rpc_server/worker_faults.h"

#include <span>

#include "common/cpu_amx.h"
#include "common/strings.h"

namespace tune::rpc {
namespace {

// dlerror texts of glibc's loader that say a file is missing or cannot be mapped here.
constexpr std::string_view kDlopenWorkerFaults[] = {
    "cannot open shared object file",
    "failed to map segment from shared object",
    "cannot allocate memory",
};

// Driver error names that say what the driver or the device lacks, not what the module is.
constexpr std::string_view kModuleWorkerFaults[] = {
    "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
    "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
    "CUDA_ERROR_OUT_OF_MEMORY",
    "hipErrorOutOfMemory",
};

bool Mentions(std::string_view text, std::span<const std::string_view> needles) {
  for (std::string_view needle : needles) {
    if (text.find(needle) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

ErrorKind DlopenFailureKind(std::string_view dl_error) {
  return Mentions(dl_error, kDlopenWorkerFaults) ? ErrorKind::kWorkerError : ErrorKind::kLoadError;
}

ErrorKind ModuleLoadFailureKind(std::string_view message) {
  return Mentions(message, kModuleWorkerFaults) ? ErrorKind::kWorkerError : ErrorKind::kLoadError;
}

ErrorKind KernelStatusKind(int32_t rc) {
  return rc == kAmxDeniedStatus ? ErrorKind::kUnsupported : ErrorKind::kRuntimeCrash;
}

std::string KernelStatusMessage(int32_t rc) {
  if (rc == kAmxDeniedStatus) {
    return StrCat("kernel returned ", rc,
                  " (TUNE_CPU_ERROR_AMX_DENIED: Linux refused this worker's measurement process "
                  "AMX's tile data, arch_prctl(ARCH_REQ_XCOMP_PERM); the worker cannot run AMX "
                  "kernels)");
  }
  return StrCat("kernel returned ", rc);
}

}  // namespace tune::rpc
