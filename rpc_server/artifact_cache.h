// Content-addressed store of artifact bytes on the worker's disk: "<dir>/<hash>.so", written
// atomically (temporary file + rename), so that several workers may share one directory and a
// measurement child never sees a half-written file.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tune::rpc {

class ArtifactCache {
 public:
  /// Opens (creating it with mode 0700 if needed) the cache directory. Fails (InvalidArgument,
  /// naming the directory and errno's text) when it cannot be created or is not writable.
  static absl::StatusOr<std::unique_ptr<ArtifactCache>> Open(std::string dir);

  /// Stores `bytes` under `hash` and returns the file's path. An existing file with identical
  /// bytes is reused; one with different bytes is replaced. A hash that is not 8..128 lowercase
  /// hex digits is InvalidArgument; a write failure is Internal with errno's text.
  absl::StatusOr<std::string> Store(std::string_view hash, std::string_view bytes);

  const std::string& dir() const { return dir_; }

 private:
  explicit ArtifactCache(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

/// The default cache directory: $TMPDIR (or /tmp) + "/tune-artifacts-<uid>".
std::string DefaultArtifactCacheDir();

/// True for 8..128 characters of [0-9a-f].
bool IsValidArtifactHash(std::string_view hash);

}  // namespace tune::rpc
