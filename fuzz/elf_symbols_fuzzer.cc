// ElfDefinesSymbol (common/extern_kernels.h) on any file: the ELF reader behind every manifest's
// library check, which reads section and symbol tables at offsets the file states. Invariant:
// it never reads outside the file (ASan, and a SIGSEGV past the mapping) nor misaligned
// (UBSan); any file gives true, false or InvalidArgument naming the path.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/extern_kernels.h"
#include "common/status.h"
#include "fuzz/fuzz_util.h"

namespace {

int fd = -1;
std::string path;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // An in-memory file, rewritten for every input.
  fd = memfd_create("tune-fuzz-elf", MFD_CLOEXEC);
  TUNE_CHECK(fd >= 0) << "memfd_create failed";
  path = "/proc/self/fd/" + std::to_string(fd);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  TUNE_CHECK(ftruncate(fd, 0) == 0);
  size_t done = 0;
  while (done < size) {
    ssize_t n = pwrite(fd, data + done, size - done, static_cast<off_t>(done));
    TUNE_CHECK(n > 0) << "cannot write the input";
    done += static_cast<size_t>(n);
  }
  for (const char* symbol : {"example_sgemm_ukernel", "", "a"}) {
    absl::StatusOr<bool> defined = tune::ElfDefinesSymbol(path, symbol);
    if (!defined.ok()) {
      TUNE_CHECK(absl::IsInvalidArgument(defined.status())) << defined.status();
      TUNE_CHECK(tune::fuzz::StartsWith(defined.status().message(), path)) << defined.status();
    }
  }
  return 0;
}
