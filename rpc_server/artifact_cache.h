// Content-addressed store of artifact code on the worker's disk: "<dir>/<hash><suffix>", where
// the hash is ArtifactHash(format, code) (common/artifact_hash.h) and the code is checked against
// it before it is stored. Files are written atomically (temporary file + rename), so several
// workers may share one directory and a measurement child never sees a half-written file.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/artifact_hash.h"

namespace tune::rpc {

class ArtifactCache {
 public:
  /// Opens (creating it with mode 0700 if needed) the cache directory. Fails (InvalidArgument,
  /// naming the directory and errno's text) when it cannot be created or is not writable.
  static absl::StatusOr<std::unique_ptr<ArtifactCache>> Open(std::string dir);

  /// The path of the cached code of `hash` in `format`, or nullopt when the cache lacks it.
  std::optional<std::string> Find(std::string_view hash, CodeFormat format) const;

  /// Stores `code` under `hash` and returns the file's path, after checking that `hash` is
  /// ArtifactHash(format, code). A hash that is not 64 lowercase hex digits is InvalidArgument;
  /// code that does not match its hash is DataLoss (nothing is stored); a write failure is
  /// Internal with errno's text. An existing file with identical code is reused.
  absl::StatusOr<std::string> Store(std::string_view hash, CodeFormat format,
                                    std::string_view code);

  const std::string& dir() const { return dir_; }

 private:
  explicit ArtifactCache(std::string dir) : dir_(std::move(dir)) {}
  std::string PathOf(std::string_view hash, CodeFormat format) const;
  std::string dir_;
};

/// The default cache directory: $TMPDIR (or /tmp) + "/tune-artifacts-<uid>".
std::string DefaultArtifactCacheDir();

}  // namespace tune::rpc
