#include "tuner/artifact_store.h"

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

}  // namespace

absl::StatusOr<std::unique_ptr<ArtifactStore>> ArtifactStore::Open(std::string dir,
                                                                   uint64_t max_bytes,
                                                                   std::string environment) {
  TUNE_CHECK(max_bytes > 0) << "an artifact store needs a positive bound";
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    return absl::UnavailableError(
        StrCat("artifact store ", dir, ": cannot create it: ", error.message()));
  }
  chmod(dir.c_str(), 0700);
  if (!PathWritable(StrCat(dir, "/probe"))) {
    return absl::UnavailableError(StrCat("artifact store ", dir, ": not writable"));
  }
  uint64_t bytes = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir, error)) {
    if (entry.is_regular_file(error)) {
      bytes += entry.file_size(error);
    }
  }
  return std::unique_ptr<ArtifactStore>(
      new ArtifactStore(std::move(dir), max_bytes, std::move(environment), bytes));
}

ArtifactStore::ArtifactStore(std::string dir, uint64_t max_bytes, std::string environment,
                             uint64_t bytes)
    : dir_(std::move(dir)),
      max_bytes_(max_bytes),
      environment_(std::move(environment)),
      bytes_(bytes) {}

std::string ArtifactStore::BuildEnvironment(const std::vector<std::string>& extern_kernel_manifests,
                                            const std::vector<std::string>& codegen_plugins,
                                            bool allow_fault_templates) {
  std::string environment = StrCat("tune ", kTuneVersion, "\nllvm ", kLlvmVersion,
                                   "\nfault templates ", allow_fault_templates ? 1 : 0, "\n");
  for (const std::string& manifest : extern_kernel_manifests) {
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
  for (const std::string& plugin : codegen_plugins) {
    environment += StrCat("plugin ", FileStamp(plugin), "\n");
  }
  return environment;
}

std::string ArtifactStore::Key(const v1::BuildChildTask& task) const {
  v1::BuildChildTask keyed = task;
  keyed.set_task_id(0);
  std::string bytes;
  keyed.SerializeToString(&bytes);  // deterministic for one binary: tune's version is keyed too
  return Sha256Hex(StrCat(environment_, "\n", bytes));
}

std::string ArtifactStore::PathOf(const std::string& key) const {
  return StrCat(dir_, "/", key.substr(0, 2), "/", key);
}

std::optional<v1::BuildChildResult> ArtifactStore::Find(const std::string& key) {
  const std::string path = PathOf(key);
  absl::StatusOr<std::string> bytes = ReadFile(path);
  v1::BuildChildResult result;
  if (bytes.ok() && result.ParseFromString(*bytes) && Intact(result)) {
    utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // most recently used
    std::lock_guard lock(mu_);
    ++counts_.hits;
    return result;
  }
  std::lock_guard lock(mu_);
  ++counts_.misses;
  if (bytes.ok()) {
    Logger("daemon")->warn("artifact store: {} is damaged; removed", path);
    if (unlink(path.c_str()) == 0) {
      bytes_ -= std::min<uint64_t>(bytes_, bytes->size());
    }
  }
  return std::nullopt;
}

void ArtifactStore::Insert(const std::string& key, const v1::BuildChildResult& result) {
  v1::BuildChildResult stored;
  *stored.mutable_artifact() = result.artifact();
  *stored.mutable_code() = result.code();
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
    if (entry.is_regular_file(error)) {
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
