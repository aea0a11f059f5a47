#include "tuner/scheduler/quarantine_set.h"

#include <algorithm>

namespace tune::tuner {

void QuarantineSet::Put(const QuarantineEntry& entry) {
  Remove(entry.id);
  if (entry.active()) {
    by_hash_[entry.artifact_hash].push_back(entry);
  }
}

void QuarantineSet::Remove(int64_t id) {
  for (auto it = by_hash_.begin(); it != by_hash_.end(); ++it) {
    std::vector<QuarantineEntry>& entries = it->second;
    auto found = std::find_if(entries.begin(), entries.end(),
                              [id](const QuarantineEntry& e) { return e.id == id; });
    if (found != entries.end()) {
      entries.erase(found);
      if (entries.empty()) {
        by_hash_.erase(it);
      }
      return;
    }
  }
}

const QuarantineEntry* QuarantineSet::Find(std::string_view artifact_hash,
                                           std::string_view device_key,
                                           std::string_view fingerprint) const {
  auto it = by_hash_.find(artifact_hash);
  if (it == by_hash_.end()) {
    return nullptr;
  }
  for (const QuarantineEntry& e : it->second) {
    if (e.device_key == device_key && e.fingerprint == fingerprint) {
      return &e;
    }
  }
  return nullptr;
}

size_t QuarantineSet::size() const {
  size_t n = 0;
  for (const auto& [hash, entries] : by_hash_) {
    n += entries.size();
  }
  return n;
}

}  // namespace tune::tuner
