// ArtifactStore: the daemon's built artifacts on disk, so that a config built once is not built
// again: not by a resumed job, a finalist's re-measurement, another job of the same workload and
// target, or the next daemon on the same log. An entry is keyed by everything that decides the
// code: the build task (workload, target, template name and version, config, function name) and
// the build environment (tune and LLVM versions, and each extern micro-kernel manifest and codegen
// plugin the builders install, by path, size and modification time). Each entry is one file
// (`<dir>/<key[0:2]>/<key>`, a BuildChildResult) written atomically; a read checks the code
// against the artifact's hash, and a file that fails is removed and read as a miss. Bounded by
// bytes: past the bound the least recently used files (by modification time, touched on every
// hit) go until a tenth of the bound is free. Thread-safe.
//
// Only this user may have written what the builders reuse: the store's directory and every
// entry must be owned by the daemon's user and writable by nobody else (its group may write
// when it is the daemon's own group, as on a Kubernetes fsGroup volume); an entry that is not
// is removed unused. Keys are also keyed by the store's secret (`<dir>/secret`, 256 random
// bits, mode 0600, made with the store), so an entry's name cannot be known before the store
// exists, nor be carried from one daemon's store to another's: nobody can plant an entry in
// advance for a build the daemon will ask for. (The alternative, a list of content hashes in a
// file of the daemon's own, would need its own writes kept in step with inserts and eviction;
// a secret in the key needs none.)
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "codegen/templates/catalog.h"
#include "tune/v1/builder.pb.h"

namespace tune::tuner {

class ArtifactStore {
 public:
  /// Opens (creating it, mode 0700, and its secret) the store in `dir`, bounded by `max_bytes`
  /// (> 0), for builds in the environment `environment` (BuildEnvironment). FailedPrecondition
  /// naming the file, its owner and mode and the command that fixes it when the directory or
  /// its secret could have been written by another user (CheckTrustedPath); Unavailable naming
  /// the directory when it cannot be created, made private (chmod 700) or written.
  static absl::StatusOr<std::unique_ptr<ArtifactStore>> Open(std::string dir, uint64_t max_bytes,
                                                             std::string environment);

  /// The build environment's part of every key: tune's and LLVM's versions, the program's own
  /// templates by name and version, and each manifest and plugin (with the library a manifest
  /// names) by path, size and modification time, so that rebuilding one of them invalidates
  /// what it built.
  static std::string BuildEnvironment(const CatalogSources& sources);

  /// The key of a build task: 64 hex digits, from the store's secret, the environment and the
  /// task.
  std::string Key(const v1::BuildChildTask& task) const;

  /// The stored artifact and code for `key`, if present, intact, owned by this user and writable
  /// by nobody else (CheckTrustedPath); a file that fails is removed.
  std::optional<v1::BuildChildResult> Find(const std::string& key);
  /// Stores a successful build (no error, an artifact, its code and its features). A write that
  /// fails is logged once and otherwise ignored: the store only saves work.
  void Insert(const std::string& key, const v1::BuildChildResult& result);

  const std::string& dir() const { return dir_; }
  /// Bytes of the entries, as this process counts them.
  uint64_t bytes() const;

  struct Counts {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t inserted = 0;
    uint64_t evicted = 0;
  };
  Counts counts() const;

 private:
  ArtifactStore(std::string dir, uint64_t max_bytes, std::string environment, std::string secret,
                uint64_t bytes);
  std::string PathOf(const std::string& key) const;
  /// Removes the least recently used entries until the store holds at most 90% of its bound.
  void EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string dir_;
  const uint64_t max_bytes_;
  const std::string environment_;
  const std::string secret_;
  mutable std::mutex mu_;
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  Counts counts_ ABSL_GUARDED_BY(mu_);
  bool warned_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tune::tuner
