// Helpers shared by the fuzzers of this folder: the input as text, a scratch directory, and
// quiet logs. Invariants are checked with TUNE_CHECK (common/status.h), which aborts: libFuzzer
// reports an abort as a crash and keeps the input.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/files.h"
#include "common/logging.h"
#include "common/status.h"

namespace tune::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

/// Whether a Status message (an absl::string_view) starts with `prefix`.
inline bool StartsWith(absl::string_view text, std::string_view prefix) {
  return std::string_view(text.data(), text.size()).starts_with(prefix);
}

/// A directory for the files one fuzzer process writes (manifests, a tuning log), removed when
/// the process exits normally. Under $TMPDIR when it is set, else /dev/shm when writable (a
/// tuning log syncs every commit: memory makes that free), else /tmp.
inline const std::string& ScratchDir() {
  static const TempDir* dir = [] {
    if (std::getenv("TMPDIR") == nullptr && access("/dev/shm", W_OK) == 0) {
      setenv("TMPDIR", "/dev/shm", /*overwrite=*/0);
    }
    absl::StatusOr<TempDir> made = TempDir::Create("tune-fuzz-");
    TUNE_CHECK(made.ok()) << made.status();
    static TempDir kept = *std::move(made);
    return &kept;
  }();
  return dir->path();
}

/// Silences the libraries' loggers: a fuzzer prints only libFuzzer's lines and what fails.
inline void QuietLogs() { (void)SetLogLevel("off"); }

}  // namespace tune::fuzz
