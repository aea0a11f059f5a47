#include "common/cpu_amx.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/strings.h"

namespace tune {

bool KernelSupportsAmx() {
#if defined(__x86_64__)
  uint64_t supported = 0;
  if (syscall(kSysArchPrctl, kArchGetXcompSupp, &supported) != 0) {
    return false;  // a kernel before 5.16: no dynamic state components at all
  }
  return (supported >> kXfeatureXtiledata) & 1;
#else
  return false;
#endif
}

absl::Status RequestAmx() {
#if defined(__x86_64__)
  if (syscall(kSysArchPrctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(
      StrCat("Linux refused AMX's tile data to this process (arch_prctl(ARCH_REQ_XCOMP_PERM, "
             "XFEATURE_XTILEDATA)): ",
             std::strerror(errno)));
#else
  return absl::FailedPreconditionError("AMX exists on x86-64 only");
#endif
}

}  // namespace tune
