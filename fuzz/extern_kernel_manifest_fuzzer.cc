// LoadExternKernel (common/extern_kernels.h): a micro-kernel manifest, beside a real micro-kernel
// library (the worked example's, examples/ukernel, as libtune_example_ukernel.so in the scratch
// directory). Invariants: a rejection is InvalidArgument naming the manifest; an accepted
// manifest has a -libs= name, a block in [1, 64], a known ISA and an absolute library path that
// exports the symbol, LoadExternKernels loads it alike, and its name parses in -libs=.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "common/extern_kernels.h"
#include "common/status.h"
#include "common/target.h"
#include "fuzz/fuzz_util.h"

namespace {

std::string manifest_path;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tune::fuzz::QuietLogs();
  const std::string& dir = tune::fuzz::ScratchDir();
  const std::string library = dir + "/libtune_example_ukernel.so";
  TUNE_CHECK(symlink(TUNE_FUZZ_UKERNEL_LIBRARY, library.c_str()) == 0)
      << "cannot link " << TUNE_FUZZ_UKERNEL_LIBRARY << " as " << library;
  manifest_path = dir + "/ukernel.json";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  {
    std::ofstream out(manifest_path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    TUNE_CHECK(out.good()) << "cannot write " << manifest_path;
  }
  absl::StatusOr<tune::ExternKernel> kernel = tune::LoadExternKernel(manifest_path);
  if (!kernel.ok()) {
    TUNE_CHECK(absl::IsInvalidArgument(kernel.status())) << kernel.status();
    TUNE_CHECK(kernel.status().message().find(manifest_path) != std::string_view::npos)
        << kernel.status();
    return 0;
  }
  TUNE_CHECK(!kernel->name.empty() &&
             kernel->name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") ==
                 std::string::npos)
      << kernel->name;
  TUNE_CHECK(kernel->mr >= 1 && kernel->mr <= 64 && kernel->nr >= 1 && kernel->nr <= 64);
  TUNE_CHECK(kernel->isa == "avx2" || kernel->isa == "avx512f") << kernel->isa;
  TUNE_CHECK(kernel->library_path.starts_with("/")) << kernel->library_path;
  absl::StatusOr<bool> exported = tune::ElfDefinesSymbol(kernel->library_path, kernel->symbol);
  TUNE_CHECK(exported.ok() && *exported) << kernel->library_path << " " << kernel->symbol;

  absl::StatusOr<std::vector<tune::ExternKernel>> loaded = tune::LoadExternKernels({manifest_path});
  TUNE_CHECK(loaded.ok() && loaded->size() == 1 && loaded->front().symbol == kernel->symbol)
      << kernel->name;
  absl::StatusOr<tune::Target> target =
      tune::Target::Parse("llvm -mcpu=skylake-avx512 -threads=1 -libs=" + kernel->name);
  TUNE_CHECK(target.ok() && target->HasLib(kernel->name)) << target.status();
  return 0;
}
