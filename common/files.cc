#include "common/files.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "common/status.h"
#include "common/strings.h"
#include "fmt/format.h"

namespace tune {
namespace {

namespace fs = std::filesystem;

// Writes all of `bytes` to `fd`, retrying short writes and EINTR; false with errno set on error.
bool WriteAll(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

// The rest of `fd`'s bytes; Unavailable naming `path` on a read error. Closes `fd`.
absl::StatusOr<std::string> ReadAndClose(int fd, const std::string& path) {
  std::string bytes;
  char buffer[1 << 16];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      std::string why = std::strerror(errno);
      close(fd);
      return absl::UnavailableError(StrCat("cannot read ", path, ": ", why));
    }
    if (n == 0) {
      break;
    }
    bytes.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return bytes;
}

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::string why = std::strerror(errno);
    return errno == ENOENT ? absl::NotFoundError(StrCat("cannot read ", path, ": ", why))
                           : absl::UnavailableError(StrCat("cannot read ", path, ": ", why));
  }
  return ReadAndClose(fd, path);
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view bytes, mode_t mode) {
  static std::atomic<uint64_t> counter{0};
  const std::string temp = StrCat(path, ".tmp.", getpid(), ".", counter.fetch_add(1));
  int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    return absl::UnavailableError(StrCat("cannot write ", path, ": ", std::strerror(errno)));
  }
  bool written = WriteAll(fd, bytes);
  int write_errno = errno;
  if (close(fd) != 0 && written) {
    written = false;
    write_errno = errno;
  }
  if (!written || rename(temp.c_str(), path.c_str()) != 0) {
    std::string why = std::strerror(written ? errno : write_errno);
    unlink(temp.c_str());
    return absl::UnavailableError(StrCat("cannot write ", path, ": ", why));
  }
  return absl::OkStatus();
}

absl::StatusOr<TempDir> TempDir::Create(std::string_view prefix) {
  const char* tmp = getenv("TMPDIR");
  std::string base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  std::string pattern = (fs::path(base) / StrCat(prefix, "XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::UnavailableError(
        StrCat("cannot create a temporary directory under ", base, ": ", std::strerror(errno)));
  }
  return TempDir(std::move(pattern));
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    Remove();
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

TempDir::~TempDir() { Remove(); }

void TempDir::Remove() {
  if (path_.empty() || getenv("TUNE_KEEP_TEMP_DIRS") != nullptr) {
    return;
  }
  std::error_code ignored;
  fs::remove_all(path_, ignored);
  path_.clear();
}

std::string TempDir::File(std::string_view name) const { return (fs::path(path_) / name).string(); }

namespace {

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) {
    return ".";
  }
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

bool OnReadOnlyFileSystem(const std::string& path) {
  struct statvfs fs{};
  if (statvfs(path.c_str(), &fs) != 0 && statvfs(DirectoryOf(path).c_str(), &fs) != 0) {
    return false;
  }
  return (fs.f_flag & ST_RDONLY) != 0;
}

bool PathWritable(const std::string& path) {
  if (OnReadOnlyFileSystem(path)) {
    return false;
  }
  const bool exists = access(path.c_str(), F_OK) == 0;
  return (!exists || access(path.c_str(), W_OK) == 0) &&
         access(DirectoryOf(path).c_str(), W_OK) == 0;
}

namespace {

// The user's name, if it has one here.
std::optional<std::string> NameOfUser(uid_t uid) {
  struct passwd entry{};
  struct passwd* found = nullptr;
  char buffer[1024];
  if (getpwuid_r(uid, &entry, buffer, sizeof(buffer), &found) == 0 && found != nullptr) {
    return std::string(found->pw_name);
  }
  return std::nullopt;
}

// "uid 1000 (alice)", or "uid 1000" when the user has no name here.
std::string UserName(uid_t uid) {
  std::optional<std::string> name = NameOfUser(uid);
  return name ? StrCat("uid ", uid, " (", *name, ")") : StrCat("uid ", uid);
}

// "gid 1000 (alice)", or "gid 1000" when the group has no name here.
std::string GroupName(gid_t gid) {
  struct group entry{};
  struct group* found = nullptr;
  char buffer[1024];
  if (getgrgid_r(gid, &entry, buffer, sizeof(buffer), &found) == 0 && found != nullptr) {
    return StrCat("gid ", gid, " (", found->gr_name, ")");
  }
  return StrCat("gid ", gid);
}

// The name chown wants for `uid`: the user's name, else the number.
std::string ChownName(uid_t uid) { return NameOfUser(uid).value_or(StrCat(uid)); }

std::string Described(const struct stat& st) {
  return StrCat("owned by ", UserName(st.st_uid), ", group ", GroupName(st.st_gid), ", mode ",
                fmt::format("{:04o}", st.st_mode & 07777));
}

// Whether the group write bit lets someone other than this process's user in.
bool ForeignGroupWrites(const struct stat& st, bool own_group_may_write) {
  return (st.st_mode & S_IWGRP) != 0 && (!own_group_may_write || st.st_gid != getegid());
}

// The directory holding `path` must not let anyone else rename a file over it.
absl::Status CheckDirectoryOf(const std::string& path, std::string_view what,
                              const TrustRule& rule) {
  const std::string dir = DirectoryOf(path);
  struct stat st{};
  if (stat(dir.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(
        StrCat(what, " ", path, ": cannot check its directory ", dir, ": ", std::strerror(errno)));
  }
  const bool foreign_owner = st.st_uid != geteuid() && st.st_uid != 0;
  const bool shared =
      (st.st_mode & S_ISVTX) == 0 &&
      ((st.st_mode & S_IWOTH) != 0 || ForeignGroupWrites(st, rule.own_group_may_write));
  if (!foreign_owner && !shared) {
    return absl::OkStatus();
  }
  std::vector<std::string> fixes;
  if (foreign_owner) {
    fixes.push_back(StrCat("chown ", ChownName(geteuid()), " ", dir));
  }
  if (shared) {
    fixes.push_back(StrCat("chmod go-w ", dir));
  }
  return absl::FailedPreconditionError(StrCat(
      what, " ", path, ": its directory ", dir, " is ", Described(st),
      foreign_owner ? "; its owner" : "; others", " could replace ", path,
      " by another file; fix: `", Join(fixes, " && "), "` or move it to a directory of your own"));
}

}  // namespace

absl::Status CheckTrustedStat(const struct stat& st, const std::string& path, std::string_view what,
                              const TrustRule& rule) {
  const uid_t me = geteuid();
  const bool foreign_owner = st.st_uid != me && !(rule.root_may_own && st.st_uid == 0);
  const bool others_write = (st.st_mode & S_IWOTH) != 0;
  const bool group_writes = ForeignGroupWrites(st, rule.own_group_may_write);
  if (!foreign_owner && !others_write && !group_writes) {
    return absl::OkStatus();
  }
  std::vector<std::string> problems;
  if (foreign_owner) {
    problems.push_back(StrCat("not owned by this process's user, ", UserName(me),
                              rule.root_may_own ? ", nor by root" : ""));
  }
  if (others_write) {
    problems.push_back("writable by every user");
  }
  if (group_writes) {
    problems.push_back(rule.own_group_may_write
                           ? StrCat("writable by its group, which is not this process's group ",
                                    GroupName(getegid()))
                           : "writable by its group");
  }
  const char* recursive = S_ISDIR(st.st_mode) ? "-R " : "";
  std::vector<std::string> fixes;
  if (foreign_owner) {
    fixes.push_back(StrCat("chown ", recursive, ChownName(me), " ", path));
  }
  if (others_write || group_writes) {
    fixes.push_back(
        StrCat("chmod ", recursive, group_writes ? "g" : "", others_write ? "o" : "", "-w ", path));
  }
  return absl::FailedPreconditionError(StrCat(
      what, " ", path, ": ", Described(st), ": ", Join(problems, ", "),
      "; another local user could have chosen what it holds; fix: `", Join(fixes, " && "), "`"));
}

absl::Status CheckTrustedPath(const std::string& path, std::string_view what,
                              const TrustRule& rule) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) {
    const int error = errno;
    std::string why = std::strerror(error);
    return error == ENOENT ? absl::NotFoundError(StrCat(what, " ", path, ": ", why))
                           : absl::FailedPreconditionError(StrCat(what, " ", path, ": ", why));
  }
  RETURN_IF_ERROR(CheckTrustedStat(st, path, what, rule));
  return rule.check_directory ? CheckDirectoryOf(path, what, rule) : absl::OkStatus();
}

absl::StatusOr<std::string> ReadTrustedFile(const std::string& path, std::string_view what,
                                            const TrustRule& rule) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    std::string why = std::strerror(error);
    return error == ENOENT ? absl::NotFoundError(StrCat(what, " ", path, ": ", why))
                           : absl::UnavailableError(StrCat(what, " ", path, ": ", why));
  }
  struct stat st{};
  absl::Status trusted =
      fstat(fd, &st) != 0
          ? absl::UnavailableError(StrCat(what, " ", path, ": ", std::strerror(errno)))
          : CheckTrustedStat(st, path, what, rule);
  if (trusted.ok() && rule.check_directory) {
    trusted = CheckDirectoryOf(path, what, rule);
  }
  if (!trusted.ok()) {
    close(fd);
    return trusted;
  }
  return ReadAndClose(fd, path);
}

}  // namespace tune
