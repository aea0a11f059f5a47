// Whole-file reads, atomic whole-file writes and self-removing temporary directories.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tune {

/// The bytes of the file at `path`. NotFound when it does not exist, Unavailable when it cannot
/// be opened or read (the message names the path and the system's reason).
absl::StatusOr<std::string> ReadFile(const std::string& path);

/// Writes `bytes` to a fresh temporary file beside `path` (created with `mode`, less the umask)
/// and renames it over `path`, so a reader sees the old file or the whole new one, never part
/// of it, and several writers may race (the last rename wins). The data is not fsynced: this
/// guards against readers and a crashing writer, not against power loss. On failure the
/// temporary file is removed, `path` is left as it was, and the Status (Unavailable) names the
/// path and the system's reason.
absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes,
                                 mode_t mode = 0644);

/// Whether this process may write the file at `path` (or create it, when it does not exist):
/// its file system is mounted read-write and the file and its directory allow writing.
bool PathWritable(const std::string& path);

/// Whether the file system holding `path` (or its directory, when it does not exist) is mounted
/// read-only.
bool OnReadOnlyFileSystem(const std::string& path);

/// A fresh directory under $TMPDIR (else /tmp), removed with its contents when the object goes
/// away (unless TUNE_KEEP_TEMP_DIRS is set, for debugging). Move-only.
class TempDir {
 public:
  /// Creates `<tmp>/<prefix>XXXXXX`; Unavailable naming the parent directory on failure.
  static absl::StatusOr<TempDir> Create(std::string_view prefix = "tune-");

  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  const std::string& path() const { return path_; }
  /// `path()/name`.
  std::string File(std::string_view name) const;

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  void Remove();
  std::string path_;  // empty once moved from
};

}  // namespace tune
