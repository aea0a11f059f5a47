#include "rpc_server/artifact_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "common/files.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune::rpc {
namespace {

// Creates `dir` and its missing parents.
absl::Status MakeDirs(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') {
      continue;
    }
    std::string prefix = dir.substr(0, pos);
    if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return absl::InvalidArgumentError(StrCat("artifact cache directory ", dir, ": cannot create ",
                                               prefix, ": ", std::strerror(errno)));
    }
  }
  return absl::OkStatus();
}

std::string_view Suffix(CodeFormat format) {
  switch (format) {
    case CodeFormat::kSharedObject:
      return ".so";
    case CodeFormat::kPtx:
      return ".ptx";
    case CodeFormat::kHsaco:
      return ".hsaco";
  }
  return ".bin";
}

}  // namespace

std::string DefaultArtifactCacheDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
  return StrCat(base, "/tune-artifacts-", getuid());
}

absl::StatusOr<std::unique_ptr<ArtifactCache>> ArtifactCache::Open(std::string dir) {
  if (dir.empty()) {
    return absl::InvalidArgumentError("artifact cache directory: empty path");
  }
  while (dir.size() > 1 && dir.back() == '/') {
    dir.pop_back();
  }
  if (absl::Status s = MakeDirs(dir); !s.ok()) {
    return s;
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return absl::InvalidArgumentError(
        StrCat("artifact cache directory ", dir, ": not writable: ", std::strerror(errno)));
  }
  return std::unique_ptr<ArtifactCache>(new ArtifactCache(std::move(dir)));
}

std::string ArtifactCache::PathOf(std::string_view hash, CodeFormat format) const {
  return StrCat(dir_, "/", hash, Suffix(format));
}

std::optional<std::string> ArtifactCache::Find(std::string_view hash, CodeFormat format) const {
  if (!IsArtifactHash(hash)) {
    return std::nullopt;
  }
  std::string path = PathOf(hash, format);
  if (access(path.c_str(), R_OK) != 0) {
    return std::nullopt;
  }
  return path;
}

absl::StatusOr<std::string> ArtifactCache::Store(std::string_view hash, CodeFormat format,
                                                 std::string_view code) {
  if (!IsArtifactHash(hash)) {
    return absl::InvalidArgumentError(
        StrCat("artifact.hash '", hash.substr(0, 140),
               "' is not valid; expected 64 lowercase hexadecimal digits (SHA-256)"));
  }
  if (std::string actual = ArtifactHash(format, code); actual != hash) {
    return absl::DataLossError(
        StrCat("the code received for artifact ", hash, " hashes to ", actual, "; not stored"));
  }
  std::string path = PathOf(hash, format);
  if (absl::StatusOr<std::string> existing = ReadFile(path); existing.ok() && *existing == code) {
    return path;
  }
  // Atomic, so that workers sharing the directory never load half a file.
  RETURN_IF_ERROR(WriteFileAtomically(path, code, 0700));
  return path;
}

}  // namespace tune::rpc
