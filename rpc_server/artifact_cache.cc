#include "rpc_server/artifact_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <vector>

#include "common/files.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune::rpc {

struct ArtifactCache::PinTable {
  std::mutex mu;
  std::map<std::string, int> count ABSL_GUARDED_BY(mu);  // file path -> live pins

  bool Pinned(const std::string& path) {
    std::lock_guard lock(mu);
    return count.contains(path);
  }
};

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

// Refuses a directory whose contents someone else could choose: owned by another user, or
// writable by its group or by everyone (CheckTrustedPath, with no exception for the group: a
// worker runs the code in its cache).
absl::Status CheckPrivate(const std::string& dir) {
  struct stat st{};
  if (stat(dir.c_str(), &st) != 0) {
    return absl::InvalidArgumentError(
        StrCat("artifact cache directory ", dir, ": ", std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        StrCat("artifact cache directory ", dir, ": not a directory"));
  }
  absl::Status trusted =
      CheckTrustedStat(st, dir, "artifact cache directory", {.own_group_may_write = false});
  if (!trusted.ok()) {
    return absl::InvalidArgumentError(StrCat(trusted.message(), ", or choose another --cache-dir"));
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

// "<64 hex><suffix>" for a suffix of Suffix(): the files the cache owns (not temporary files,
// not anything else someone put in the directory).
bool IsArtifactFileName(std::string_view name) {
  if (name.size() < 64 || !IsArtifactHash(name.substr(0, 64))) {
    return false;
  }
  std::string_view suffix = name.substr(64);
  return suffix == ".so" || suffix == ".ptx" || suffix == ".hsaco";
}

struct CacheFile {
  std::string path;
  int64_t bytes;
  struct timespec used;  // mtime
};

std::vector<CacheFile> ListArtifactFiles(const std::string& dir) {
  std::vector<CacheFile> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!IsArtifactFileName(entry.path().filename().string())) {
      continue;
    }
    struct stat st{};
    if (lstat(entry.path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      continue;
    }
    files.push_back({entry.path().string(), static_cast<int64_t>(st.st_size), st.st_mtim});
  }
  return files;
}

}  // namespace

std::string DefaultArtifactCacheDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
  return StrCat(base, "/tune-artifacts-", getuid());
}

ArtifactCache::ArtifactCache(std::string dir, int64_t max_bytes)
    : dir_(std::move(dir)), max_bytes_(max_bytes), pins_(std::make_shared<PinTable>()) {}

absl::StatusOr<std::unique_ptr<ArtifactCache>> ArtifactCache::Open(std::string dir,
                                                                   int64_t max_bytes) {
  if (dir.empty()) {
    return absl::InvalidArgumentError("artifact cache directory: empty path");
  }
  if (max_bytes <= 0) {
    return absl::InvalidArgumentError(
        StrCat("artifact cache size limit: ", max_bytes, " bytes; expected a positive size"));
  }
  while (dir.size() > 1 && dir.back() == '/') {
    dir.pop_back();
  }
  RETURN_IF_ERROR(MakeDirs(dir));
  RETURN_IF_ERROR(CheckPrivate(dir));
  if (access(dir.c_str(), W_OK | X_OK) != 0) {
    return absl::InvalidArgumentError(
        StrCat("artifact cache directory ", dir, ": not writable: ", std::strerror(errno)));
  }
  std::unique_ptr<ArtifactCache> cache(new ArtifactCache(std::move(dir), max_bytes));
  {
    std::lock_guard lock(cache->mu_);
    cache->Trim();
  }
  return cache;
}

std::string ArtifactCache::PathOf(std::string_view hash, CodeFormat format) const {
  return StrCat(dir_, "/", hash, Suffix(format));
}

int64_t ArtifactCache::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

CachedCode ArtifactCache::Pin(std::string path) {
  {
    std::lock_guard lock(pins_->mu);
    ++pins_->count[path];
  }
  std::shared_ptr<PinTable> table = pins_;
  std::shared_ptr<void> pin(nullptr, [table, path](void*) {
    std::lock_guard lock(table->mu);
    if (auto it = table->count.find(path); it != table->count.end() && --it->second == 0) {
      table->count.erase(it);
    }
  });
  return CachedCode(std::move(path), std::move(pin));
}

std::optional<CachedCode> ArtifactCache::Find(std::string_view hash, CodeFormat format) {
  if (!IsArtifactHash(hash)) {
    return std::nullopt;
  }
  std::string path = PathOf(hash, format);
  // Pinned first, so that no Trim removes it between the check and the caller's use.
  CachedCode pinned = Pin(path);
  absl::StatusOr<std::string> code = ReadFile(path);
  if (!code.ok()) {
    return std::nullopt;
  }
  if (ArtifactHash(format, *code) != hash) {
    Logger("worker")->warn("artifact cache: {} does not match its hash any more; removed", path);
    std::lock_guard lock(mu_);
    if (unlink(path.c_str()) == 0) {
      bytes_ -= static_cast<int64_t>(code->size());
    }
    return std::nullopt;
  }
  utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // just used; best effort
  return pinned;
}

absl::StatusOr<CachedCode> ArtifactCache::Store(std::string_view hash, CodeFormat format,
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
  if (static_cast<int64_t>(code.size()) > max_bytes_) {
    return absl::ResourceExhaustedError(StrCat("artifact ", hash, " has ", code.size(),
                                               " bytes, more than the cache's limit of ",
                                               max_bytes_, " bytes (tune-server --cache-max-mb)"));
  }
  std::string path = PathOf(hash, format);
  CachedCode pinned = Pin(path);
  std::lock_guard lock(mu_);
  if (absl::StatusOr<std::string> existing = ReadFile(path); existing.ok() && *existing == code) {
    utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
    return pinned;
  }
  // Atomic, so that workers sharing the directory never load half a file.
  RETURN_IF_ERROR(WriteFileAtomically(path, code, 0700));
  bytes_ += static_cast<int64_t>(code.size());
  if (bytes_ > max_bytes_) {
    Trim();
  }
  return pinned;
}

void ArtifactCache::Trim() {
  std::vector<CacheFile> files = ListArtifactFiles(dir_);
  int64_t total = 0;
  for (const CacheFile& f : files) {
    total += f.bytes;
  }
  if (total > max_bytes_) {
    std::sort(files.begin(), files.end(), [](const CacheFile& a, const CacheFile& b) {
      return a.used.tv_sec != b.used.tv_sec ? a.used.tv_sec < b.used.tv_sec
                                            : a.used.tv_nsec < b.used.tv_nsec;
    });
    for (const CacheFile& f : files) {
      if (total <= max_bytes_) {
        break;
      }
      if (pins_->Pinned(f.path)) {
        continue;
      }
      if (unlink(f.path.c_str()) == 0 || errno == ENOENT) {
        total -= f.bytes;
        Logger("worker")->debug("artifact cache: evicted {} ({} bytes)", f.path, f.bytes);
      }
    }
  }
  bytes_ = total;
}

}  // namespace tune::rpc
