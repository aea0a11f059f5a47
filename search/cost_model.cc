#include "search/cost_model.h"

#include <algorithm>

#include "common/status.h"

namespace tune {

std::vector<float> RankingLabels(std::span<const RankingSample> samples) {
  auto timed = [](const RankingSample& s) {
    return (s.error == ErrorKind::kNone || s.error == ErrorKind::kTimeout) && s.secs > 0;
  };
  std::map<uint32_t, double> fastest;
  for (const RankingSample& s : samples) {
    TUNE_CHECK(IsVerdict(s.error))
        << "a cost model learns from verdicts only, not from " << ErrorKindName(s.error);
    if (timed(s)) {
      auto [it, fresh] = fastest.emplace(s.group, s.secs);
      it->second = std::min(it->second, s.secs);
    }
  }
  std::vector<float> labels;
  labels.reserve(samples.size());
  for (const RankingSample& s : samples) {
    labels.push_back(timed(s) ? static_cast<float>(fastest.at(s.group) / s.secs) : 0.0f);
  }
  return labels;
}

void FeatureMatrix::Append(std::span<const float> row) {
  TUNE_CHECK(row.size() == cols_) << "feature row of " << row.size() << " values, expected "
                                  << cols_;
  values_.insert(values_.end(), row.begin(), row.end());
}

}  // namespace tune
