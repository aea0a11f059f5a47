#include "search/raw_cursor.h"

#include "common/status.h"

namespace tune {

RawCursor::RawCursor(const ConfigSpace& space, uint64_t index)
    : space_(&space), size_(space.RawSize()), index_(index) {
  TUNE_CHECK(index <= size_) << "cursor index " << index << " is beyond the space of " << size_
                             << " points";
  const std::vector<Knob>& knobs = space.knobs();
  digits_.assign(knobs.size(), 0);
  if (done()) {
    return;
  }
  for (size_t k = knobs.size(); k-- > 0;) {
    uint64_t radix = knobs[k].values.size();
    digits_[k] = index % radix;
    index /= radix;
  }
  for (size_t k = 0; k < knobs.size(); ++k) {
    config_.emplace(knobs[k].name, knobs[k].values[digits_[k]]);
  }
}

void RawCursor::Next() {
  if (done()) {
    return;
  }
  ++index_;
  if (done()) {
    return;
  }
  const std::vector<Knob>& knobs = space_->knobs();
  for (size_t k = knobs.size(); k-- > 0;) {
    const Knob& knob = knobs[k];
    if (++digits_[k] < knob.values.size()) {
      config_.find(knob.name)->second = knob.values[digits_[k]];
      return;
    }
    digits_[k] = 0;
    config_.find(knob.name)->second = knob.values[0];
  }
}

}  // namespace tune
