#include "rpc_server/artifact_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

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

}  // namespace

bool IsValidArtifactHash(std::string_view hash) {
  if (hash.size() < 8 || hash.size() > 128) {
    return false;
  }
  for (char c : hash) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

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

absl::StatusOr<std::string> ArtifactCache::Store(std::string_view hash, std::string_view bytes) {
  if (!IsValidArtifactHash(hash)) {
    return absl::InvalidArgumentError(
        StrCat("artifact.hash '", hash.substr(0, 140),
               "' is not valid; expected 8 to 128 lowercase hexadecimal digits"));
  }
  std::string path = StrCat(dir_, "/", hash, ".so");
  if (absl::StatusOr<std::string> existing = ReadFile(path); existing.ok() && *existing == bytes) {
    return path;
  }
  // Atomic, so that workers sharing the directory never load half a file.
  RETURN_IF_ERROR(WriteFileAtomically(path, bytes, 0700));
  return path;
}

}  // namespace tune::rpc
