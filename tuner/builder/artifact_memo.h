// ArtifactMemo: a builder process's memory of the code it compiled, keyed by what determines
// that code (the target, the template and the lowered IR), so that configs that lower to the
// same IR (knobs a shape makes irrelevant, tiles clipped to the same extent) are compiled once.
// Bounded by bytes; the least recently used entries go first. Not thread-safe (one per builder).
#pragma once

#include <cstddef>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>

#include "codegen/compiler.h"

namespace tune::tuner {

class ArtifactMemo {
 public:
  explicit ArtifactMemo(size_t max_bytes = size_t{64} << 20) : max_bytes_(max_bytes) {}

  /// The key of a kernel: a digest of the target text, the template's name and version and
  /// the text of its lowered IR (which names the function).
  static std::string Key(const Target& target, const KernelTemplate& tpl,
                         const std::string& lowered_ir);

  /// The artifact compiled for `key`, if remembered (it becomes the most recently used).
  std::optional<Artifact> Find(const std::string& key);
  void Insert(const std::string& key, const Artifact& artifact);

  size_t entries() const { return entries_.size(); }

 private:
  using Entry = std::pair<std::string, Artifact>;
  size_t max_bytes_;
  size_t bytes_ = 0;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace tune::tuner
