// Whole-file reads, atomic whole-file writes, self-removing temporary directories, and the check
// that a file this process is about to trust could not have been planted by another local user.
#pragma once

#include <sys/stat.h>
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

/// Who besides this process's user may have written a file it trusts (runs, loads, or keeps its
/// state in). The user is the effective uid, whoever that is: root gets no exemption.
struct TrustRule {
  /// Files owned by root pass too (system paths: /usr/local/bin, /opt).
  bool root_may_own = false;
  /// A file writable by its group passes when the group is this process's effective group
  /// (a Kubernetes fsGroup volume is group-writable for the pod's group).
  bool own_group_may_write = true;
  /// The directory holding the file is checked too: owned by this user or root, and writable
  /// by others (or a foreign group) only with the sticky bit, so nobody can rename another
  /// file over it.
  bool check_directory = false;
};

/// For code this process runs or loads that the user installs (codegen plugins, extern kernel
/// manifests and their libraries): root-owned system paths pass, and the directory is checked.
inline constexpr TrustRule kCodeFileRule{
    .root_may_own = true, .own_group_may_write = true, .check_directory = true};

/// OK when the file (or directory) at `path`, symbolic links followed, could only have been
/// written by this process's user: owned by the effective uid (or root, per `rule`), not
/// writable by others, and not writable by its group unless `rule` allows the process's own
/// group. NotFound when it does not exist; otherwise FailedPrecondition of the form
/// "<what> <path>: owned by <user> (uid N), group <group> (gid N), mode 0NNN: <problem>; fix:
/// `chown ... && chmod ...`".
absl::Status CheckTrustedPath(const std::string& path, std::string_view what,
                              const TrustRule& rule = {});
/// The same check of a file already opened (fstat of its descriptor), named `path` in errors:
/// what was checked is what will be read.
absl::Status CheckTrustedStat(const struct stat& st, const std::string& path, std::string_view what,
                              const TrustRule& rule = {});

/// ReadFile of a file that passes CheckTrustedStat, checked on the opened descriptor so that the
/// bytes are those of the file checked (and its directory by path, when `rule` asks). NotFound
/// when missing, FailedPrecondition when not trusted, Unavailable when unreadable.
absl::StatusOr<std::string> ReadTrustedFile(const std::string& path, std::string_view what,
                                            const TrustRule& rule = {});

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
