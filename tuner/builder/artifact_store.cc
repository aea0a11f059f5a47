#include "tuner/builder/artifact_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "common/artifact_hash.h"
#include "common/files.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/token.h"
#include "common/version.h"

namespace tune::tuner {
namespace fs = std::filesystem;
namespace {

// "path size mtime_ns" of a file, or "path missing".
std::string FileStamp(const std::string& path) {
  struct stat st{};
  if (stat(path.c_str(), &st) != 0) {
    return StrCat(path, " missing");
  }
  return StrCat(path, " ", st.st_size, " ",
                static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
}

// The format of a stored artifact, as ArtifactHash names it.
std::optional<CodeFormat> FormatOf(const v1::ArtifactCode& code) {
  switch (code.code_case()) {
    case v1::ArtifactCode::kSharedObject:
      return CodeFormat::kSharedObject;
    case v1::ArtifactCode::kPtx:
      return CodeFormat::kPtx;
    case v1::ArtifactCode::kCodeObject:
      return CodeFormat::kHsaco;
    case v1::ArtifactCode::CODE_NOT_SET:
      break;
  }
  return std::nullopt;
}

std::string_view CodeBytes(const v1::ArtifactCode& code) {
  switch (code.code_case()) {
    case v1::ArtifactCode::kSharedObject:
      return code.shared_object();
    case v1::ArtifactCode::kPtx:
      return code.ptx();
    case v1::ArtifactCode::kCodeObject:
      return code.code_object();
    case v1::ArtifactCode::CODE_NOT_SET:
      break;
  }
  return {};
}

// Whether a stored result is whole: an artifact whose hash its code matches.
bool Intact(const v1::BuildChildResult& result) {
  const std::optional<CodeFormat> format = FormatOf(result.code());
  return result.error().empty() && result.has_artifact() && format.has_value() &&
         result.artifact().hash() == result.code().hash() &&
         ArtifactHash(*format, CodeBytes(result.code())) == result.artifact().hash();
}

constexpr std::string_view kSecretFile = "secret";
constexpr size_t kSecretHexDigits = 64;

bool IsSecret(std::string_view text) {
  return text.size() == kSecretHexDigits && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The store's secret, made (0600, 256 random bits) when the store has none.
absl::StatusOr<std::string> SecretOf(const std::string& dir) {
  const std::string path = StrCat(dir, "/", kSecretFile);
  absl::StatusOr<std::string> secret = ReadTrustedFile(path, "artifact store secret");
  if (absl::IsNotFound(secret.status())) {
    const std::string fresh = RandomHex(kSecretHexDigits / 2);
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      const bool written =
          write(fd, fresh.data(), fresh.size()) == static_cast<ssize_t>(fresh.size());
      const bool closed = close(fd) == 0;
      if (!written || !closed) {
        unlink(path.c_str());
        return absl::UnavailableError(
            StrCat("artifact store ", dir, ": cannot write its secret ", path));
      }
    } else if (errno != EEXIST) {
      return absl::UnavailableError(StrCat("artifact store ", dir, ": cannot create its secret ",
                                           path, ": ", std::strerror(errno)));
    }
    // Ours, or one that another daemon on this store made first: read what is there.
    secret = ReadTrustedFile(path, "artifact store secret");
  }
  if (!secret.ok()) {
    return secret.status();
  }
  if (!IsSecret(*secret)) {
    return absl::FailedPreconditionError(
        StrCat("artifact store secret ", path, ": not ", kSecretHexDigits,
               " lowercase hex digits; remove it (a fresh one is made, and the entries are "
               "built again)"));
  }
  return *secret;
}

// An entry's file: in a subdirectory of the store (the secret and anything else at the top are
// not entries).
bool IsEntry(const fs::directory_entry& entry, const std::string& dir, std::error_code& error) {
  return entry.is_regular_file(error) && entry.path().parent_path() != fs::path(dir);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ArtifactStore>> ArtifactStore::Open(std::string dir,
                                                                   uint64_t max_bytes,
                                                                   std::string environment) {
  TUNE_CHECK(max_bytes > 0) << "an artifact store needs a positive bound";
  while (dir.size() > 1 && dir.back() == '/') {
    dir.pop_back();
  }
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    return absl::UnavailableError(
        StrCat("artifact store ", dir, ": cannot create it: ", error.message()));
  }
  // The builders trust what the store holds: it must be this user's alone (its group may
  // write where the group is this process's own, as on a Kubernetes fsGroup volume).
  RETURN_IF_ERROR(CheckTrustedPath(dir, "artifact store"));
  struct stat st{};
  if (stat(dir.c_str(), &st) != 0) {
    return absl::UnavailableError(StrCat("artifact store ", dir, ": ", std::strerror(errno)));
  }
  if ((st.st_mode & 07777) != 0700 && chmod(dir.c_str(), 0700) != 0) {
    return absl::UnavailableError(StrCat(
        "artifact store ", dir, ": cannot make it private (chmod 700): ", std::strerror(errno)));
  }
  if (!PathWritable(StrCat(dir, "/probe"))) {
    return absl::UnavailableError(StrCat("artifact store ", dir, ": not writable"));
  }
  ASSIGN_OR_RETURN(std::string secret, SecretOf(dir));
  uint64_t bytes = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir, error)) {
    if (IsEntry(entry, dir, error)) {
      bytes += entry.file_size(error);
    }
  }
  return std::unique_ptr<ArtifactStore>(new ArtifactStore(
      std::move(dir), max_bytes, std::move(environment), std::move(secret), bytes));
}

ArtifactStore::ArtifactStore(std::string dir, uint64_t max_bytes, std::string environment,
                             std::string secret, uint64_t bytes)
    : dir_(std::move(dir)),
      max_bytes_(max_bytes),
      environment_(std::move(environment)),
      secret_(std::move(secret)),
      bytes_(bytes) {}

std::string ArtifactStore::BuildEnvironment(const CatalogSources& sources) {
  std::string environment = StrCat("tune ", kTuneVersion, "\nllvm ", kLlvmVersion, "\n");
  for (const KernelTemplate* tpl : sources.extra_templates) {
    environment +=
        StrCat("template ", tpl->name, " ", OpKindName(tpl->op), " ", tpl->version, "\n");
  }
  for (const std::string& manifest : sources.extern_kernel_manifests) {
    environment += StrCat("manifest ", FileStamp(manifest), "\n");
    // The library beside the manifest changes the code the builders link against; stamp every
    // file of the manifest's directory that is a shared object.
    std::error_code error;
    for (const fs::directory_entry& entry :
         fs::directory_iterator(fs::path(manifest).parent_path(), error)) {
      if (entry.path().extension() == ".so") {
        environment += StrCat("library ", FileStamp(entry.path().string()), "\n");
      }
    }
  }
  for (const std::string& plugin : sources.codegen_plugins) {
    environment += StrCat("plugin ", FileStamp(plugin), "\n");
  }
  return environment;
}

std::string ArtifactStore::Key(const v1::BuildChildTask& task) const {
  v1::BuildChildTask keyed = task;
  keyed.set_task_id(0);
  std::string bytes;
  keyed.SerializeToString(&bytes);  // deterministic for one binary: tune's version is keyed too
  return Sha256Hex(StrCat(secret_, "\n", environment_, "\n", bytes));
}

std::string ArtifactStore::PathOf(const std::string& key) const {
  return StrCat(dir_, "/", key.substr(0, 2), "/", key);
}

std::optional<v1::BuildChildResult> ArtifactStore::Find(const std::string& key) {
  const std::string path = PathOf(key);
  absl::StatusOr<std::string> bytes = ReadTrustedFile(path, "artifact store entry");
  v1::BuildChildResult result;
  if (bytes.ok() && result.ParseFromString(*bytes) && Intact(result)) {
    utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // most recently used
    std::lock_guard lock(mu_);
    ++counts_.hits;
    return result;
  }
  std::lock_guard lock(mu_);
  ++counts_.misses;
  if (bytes.ok() || absl::IsFailedPrecondition(bytes.status())) {
    if (bytes.ok()) {
      Logger("daemon")->warn("artifact store: {} is damaged; removed", path);
    } else {
      Logger("daemon")->warn("{}; not used, removed", bytes.status().message());
    }
    struct stat st{};
    if (lstat(path.c_str(), &st) == 0 && unlink(path.c_str()) == 0) {
      bytes_ -= std::min<uint64_t>(bytes_, static_cast<uint64_t>(st.st_size));
    }
  }
  return std::nullopt;
}

void ArtifactStore::Insert(const std::string& key, const v1::BuildChildResult& result) {
  v1::BuildChildResult stored;
  *stored.mutable_artifact() = result.artifact();
  *stored.mutable_code() = result.code();
  *stored.mutable_features() = result.features();  // the cost model's row, read off the kernel
  if (!Intact(stored)) {
    return;
  }
  std::string bytes;
  stored.SerializeToString(&bytes);
  const std::string path = PathOf(key);
  std::error_code error;
  fs::create_directories(fs::path(path).parent_path(), error);
  absl::Status written = WriteFileAtomically(path, bytes, 0600);
  std::lock_guard lock(mu_);
  if (!written.ok()) {
    if (!warned_) {
      warned_ = true;
      Logger("daemon")->warn("artifact store: {} (builds go on without it)", written.message());
    }
    return;
  }
  ++counts_.inserted;
  bytes_ += bytes.size();
  if (bytes_ > max_bytes_) {
    EvictLocked();
  }
}

void ArtifactStore::EvictLocked() {
  struct Entry {
    fs::file_time_type used;
    uint64_t size;
    fs::path path;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir_, error)) {
    if (IsEntry(entry, dir_, error)) {
      const uint64_t size = entry.file_size(error);
      entries.push_back(Entry{entry.last_write_time(error), size, entry.path()});
      total += size;
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.used < b.used; });
  const uint64_t goal = max_bytes_ / 10 * 9;
  for (const Entry& entry : entries) {
    if (total <= goal) {
      break;
    }
    if (fs::remove(entry.path, error)) {
      total -= entry.size;
      ++counts_.evicted;
    }
  }
  bytes_ = total;
}

uint64_t ArtifactStore::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

ArtifactStore::Counts ArtifactStore::counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

}  // namespace tune::tuner
