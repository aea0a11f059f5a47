#include "common/files.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/strings.h"

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

}  // namespace

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::string why = std::strerror(errno);
    return errno == ENOENT ? absl::NotFoundError(StrCat("cannot read ", path, ": ", why))
                           : absl::UnavailableError(StrCat("cannot read ", path, ": ", why));
  }
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

}  // namespace tune
