// Content-addressed store of artifact code on the worker's disk: "<dir>/<hash><suffix>", where
// the hash is ArtifactHash(format, code) (common/artifact_hash.h).
//
// - Code is checked against its hash when it is stored and again when it is found, so a file
//   changed on disk is dropped and fetched again rather than run.
// - Files are written atomically (temporary file + rename), so several workers may share one
//   directory and a measurement child never sees a half-written file.
// - The directory has a size limit. When a Store takes it over the limit, the least recently
//   used files go first (a file's modification time is its last use: Find touches it, so the
//   order survives restarts and is shared by the workers of one directory). Code in use
//   (a CachedCode alive in this process) is never evicted.
// - A directory that another user owns, or that its group or others may write, is refused:
//   whoever can write there can make this worker run their code.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "common/artifact_hash.h"

namespace tune::rpc {

class ArtifactCache;

/// A file of the cache, kept from eviction while the object (or a copy) lives.
class CachedCode {
 public:
  const std::string& path() const { return path_; }

 private:
  friend class ArtifactCache;
  CachedCode(std::string path, std::shared_ptr<void> pin)
      : path_(std::move(path)), pin_(std::move(pin)) {}
  std::string path_;
  std::shared_ptr<void> pin_;
};

class ArtifactCache {
 public:
  /// The default size limit: 1 GiB.
  static constexpr int64_t kDefaultMaxBytes = int64_t{1} << 30;

  /// Opens (creating it with mode 0700 if needed) the cache directory and trims it to
  /// `max_bytes`. Fails with InvalidArgument, naming the directory and the reason, when it
  /// cannot be created, is not writable, belongs to another user, or is writable by its group or
  /// by others; and when max_bytes is not positive.
  static absl::StatusOr<std::unique_ptr<ArtifactCache>> Open(std::string dir,
                                                             int64_t max_bytes = kDefaultMaxBytes);

  /// The cached code of `hash` in `format`, pinned, or nullopt when the cache lacks it. A file
  /// whose bytes no longer match the hash is removed and reported as missing. Marks the file as
  /// just used.
  std::optional<CachedCode> Find(std::string_view hash, CodeFormat format);

  /// Stores `code` under `hash`, pinned, then evicts the least recently used unpinned files
  /// while the directory is over its limit.
  /// - A hash that is not 64 lowercase hex digits is InvalidArgument.
  /// - Code that does not match its hash is DataLoss (nothing is stored).
  /// - Code larger than the limit is ResourceExhausted (nothing is stored).
  /// - A write failure is Unavailable with errno's text.
  /// An existing file with identical code is reused.
  absl::StatusOr<CachedCode> Store(std::string_view hash, CodeFormat format, std::string_view code);

  const std::string& dir() const { return dir_; }
  int64_t max_bytes() const { return max_bytes_; }
  /// Bytes of artifact files in the directory, as of the last scan or store.
  int64_t bytes() const;

 private:
  ArtifactCache(std::string dir, int64_t max_bytes);
  std::string PathOf(std::string_view hash, CodeFormat format) const;
  CachedCode Pin(std::string path);
  // Scans the directory and removes the least recently used unpinned artifact files until it
  // holds at most max_bytes_.
  void Trim() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Live CachedCode count per file name; shared with the pins, which may outlive the cache.
  struct PinTable;

  const std::string dir_;
  const int64_t max_bytes_;
  const std::shared_ptr<PinTable> pins_;
  mutable std::mutex mu_;                   // serialises stores and trims
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;  // as of the last Trim, plus stores since
};

/// The default cache directory: $TMPDIR (or /tmp) + "/tune-artifacts-<uid>".
std::string DefaultArtifactCacheDir();

}  // namespace tune::rpc
