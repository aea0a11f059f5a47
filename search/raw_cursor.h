// RawCursor: walks the raw points of a ConfigSpace in index order, the order of ConfigAt.
#pragma once

#include <cstdint>
#include <vector>

#include "search/config_space.h"

namespace tune {

/// Visits the points of `space` from a starting index upward (last knob fastest), updating one
/// config in place instead of rebuilding it for every index. Keeps a pointer to `space`, which
/// must outlive the cursor.
class RawCursor {
 public:
  /// Starts at `index` (at most space.RawSize(), checked; RawSize() means done()).
  RawCursor(const ConfigSpace& space, uint64_t index);

  /// True when every index below RawSize() has been visited.
  bool done() const { return index_ >= size_; }
  uint64_t index() const { return index_; }
  /// The point at index(); only meaningful while !done().
  const Config& config() const { return config_; }
  /// Moves to the next index.
  void Next();

 private:
  const ConfigSpace* space_;
  uint64_t size_;
  uint64_t index_;
  std::vector<size_t> digits_;  // per knob, the position of its value in Knob::values
  Config config_;
};

}  // namespace tune
