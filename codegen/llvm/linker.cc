// LinkSharedObject: relocatable objects -> shared library, with ld.lld.
#include <optional>

#include "codegen/llvm/codegen_gpu.h"
#include "codegen/llvm/cpu_backend.h"
#include "common/files.h"
#include "common/status.h"
#include "common/strings.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#ifndef TUNE_LLVM_TOOLS_DIR
#define TUNE_LLVM_TOOLS_DIR "/usr/lib/llvm-19/bin"
#endif

namespace tune {
namespace {

// Library folders searched for -l libraries (Debian/Ubuntu multiarch first).
constexpr const char* kLibraryDirs[] = {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
                                        "/usr/lib64", "/usr/lib"};

absl::StatusOr<std::string> FindLinker() {
  std::string next_to_llvm = StrCat(TUNE_LLVM_TOOLS_DIR, "/ld.lld");
  if (llvm::sys::fs::can_execute(next_to_llvm)) {
    return next_to_llvm;
  }
  for (const char* name : {"ld.lld-19", "ld.lld"}) {
    if (llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(name)) {
      return *path;
    }
  }
  return absl::FailedPreconditionError(
      StrCat("linker not found: neither ", next_to_llvm, " nor ld.lld-19 / ld.lld on PATH"));
}

// True when the object has an undefined reference to the OpenMP runtime (GOMP_*, omp_*).
absl::StatusOr<bool> UsesOpenMp(const std::string& path) {
  llvm::Expected<llvm::object::OwningBinary<llvm::object::ObjectFile>> object =
      llvm::object::ObjectFile::createObjectFile(path);
  if (!object) {
    return absl::InvalidArgumentError(
        StrCat("object file ", path, ": ", llvm::toString(object.takeError())));
  }
  for (const llvm::object::SymbolRef& symbol : object->getBinary()->symbols()) {
    llvm::Expected<uint32_t> flags = symbol.getFlags();
    llvm::Expected<llvm::StringRef> name = symbol.getName();
    if (!flags || !name) {
      llvm::consumeError(flags.takeError());
      llvm::consumeError(name.takeError());
      continue;
    }
    if ((*flags & llvm::object::SymbolRef::SF_Undefined) != 0 &&
        (name->starts_with("GOMP_") || name->starts_with("omp_"))) {
      return true;
    }
  }
  return false;
}

absl::Status RunLinker(const std::string& linker, const std::vector<std::string>& args,
                       const std::string& out_path) {
  llvm::SmallString<128> log_path;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("tune-lld", "log", log_path)) {
    return absl::InternalError(StrCat("cannot create a temporary file: ", ec.message()));
  }
  std::vector<llvm::StringRef> arg_refs(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log_path),
                                                llvm::StringRef(log_path)};
  std::string exec_error;
  int rc = llvm::sys::ExecuteAndWait(linker, arg_refs, std::nullopt, redirects, 0, 0, &exec_error);
  std::string log = ReadFile(std::string(log_path)).value_or("");
  llvm::sys::fs::remove(log_path);
  if (rc != 0) {
    return absl::InternalError(StrCat("linking ", out_path, " failed (", linker, " exit ", rc,
                                      exec_error.empty() ? "" : StrCat(", ", exec_error),
                                      "): ", log));
  }
  return absl::OkStatus();
}

}  // namespace

namespace llvm_backend {

// An HSA code object is an ELF shared object of the AMDGPU target: the kernel descriptors
// (<kernel>.kd) and the metadata note are already in the object; the link resolves its
// relocations and gives it the layout the HIP runtime loads.
absl::Status LinkHsaCodeObject(const std::string& object_path, const std::string& out_path) {
  ASSIGN_OR_RETURN(std::string linker, FindLinker());
  return RunLinker(linker, {linker, "-shared", "-o", out_path, object_path}, out_path);
}

}  // namespace llvm_backend

absl::Status LinkSharedObject(const std::vector<std::string>& object_files,
                              const std::vector<std::string>& extra_libs,
                              const std::string& out_path, std::vector<std::string>* runtime_libs) {
  if (object_files.empty()) {
    return absl::InvalidArgumentError("LinkSharedObject: no object files");
  }
  ASSIGN_OR_RETURN(std::string linker, FindLinker());
  bool openmp = false;
  for (const std::string& object : object_files) {
    ASSIGN_OR_RETURN(bool uses, UsesOpenMp(object));
    openmp = openmp || uses;
  }
  std::vector<std::string> args = {linker,        "-shared", "--eh-frame-hdr", "-z",
                                   "noexecstack", "-o",      out_path};
  args.insert(args.end(), object_files.begin(), object_files.end());
  // ld.lld has no default search path (a compiler driver would add these).
  for (const char* dir : kLibraryDirs) {
    args.push_back(StrCat("-L", dir));
  }
  if (openmp) {
    args.push_back(StrCat("-l:", kOpenMpRuntime));  // DT_NEEDED libgomp.so.1 (no -dev symlink)
    // libgomp keeps its worker threads alive between parallel regions and cannot be unloaded
    // under them: dlclose() of the last library needing it would crash the process. Marking
    // the kernel library NODELETE keeps it, and so libgomp, loaded until the process exits.
    args.insert(args.begin() + 1, {"-z", "nodelete"});
  }
  for (const std::string& lib : extra_libs) {
    if (lib.empty()) {
      continue;
    }
    args.push_back(lib.find('/') != std::string::npos || lib[0] == '-' ? lib : StrCat("-l", lib));
  }

  RETURN_IF_ERROR(RunLinker(linker, args, out_path));
  if (runtime_libs != nullptr) {
    runtime_libs->clear();
    if (openmp) {
      runtime_libs->push_back(kOpenMpRuntime);
    }
  }
  return absl::OkStatus();
}

}  // namespace tune
