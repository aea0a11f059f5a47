// QuarantineSet: the quarantine entries that hold (db/quarantine.h), as the dispatcher asks of
// them: is this code quarantined for workers of this device key and fingerprint? Loaded from
// the log when the scheduler starts, then kept in step with it (entries made as trials are
// committed, entries lifted). Not thread-safe: guarded by the scheduler's lock.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "db/quarantine.h"

namespace tune::tuner {

class QuarantineSet {
 public:
  /// Adds an entry that holds, or replaces the one with its id; a lifted entry is removed.
  void Put(const QuarantineEntry& entry);
  /// Forgets the entry `id` (lifted).
  void Remove(int64_t id);
  /// The entry that holds `artifact_hash` on `device_key` for workers of `fingerprint`, or null.
  const QuarantineEntry* Find(std::string_view artifact_hash, std::string_view device_key,
                              std::string_view fingerprint) const;
  size_t size() const;

 private:
  std::map<std::string, std::vector<QuarantineEntry>, std::less<>> by_hash_;
};

}  // namespace tune::tuner
