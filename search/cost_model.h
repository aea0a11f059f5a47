// CostModel: what a model-based search learns from measured configs, an interface shaped like
// TVM MetaSchedule's CostModel (Update / Predict): fitted on feature rows and ranking labels, it
// scores unmeasured configs. XgbCostModel (xgb_cost_model.h) is the one implementation; the
// model strategies choose theirs in model_strategy.cc's table. The rows and labels both sides
// share are here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/measurement.h"

namespace tune {

/// Rows of float features, row-major, all of one width.
class FeatureMatrix {
 public:
  explicit FeatureMatrix(size_t cols) : cols_(cols) {}
  /// Appends a row; its size must be cols() (checked).
  void Append(std::span<const float> row);
  size_t rows() const { return cols_ == 0 ? 0 : values_.size() / cols_; }
  size_t cols() const { return cols_; }
  const float* data() const { return values_.data(); }
  std::span<const float> row(size_t i) const { return {values_.data() + i * cols_, cols_}; }

 private:
  size_t cols_;
  std::vector<float> values_;
};

/// A measured config as a cost model learns from it.
struct RankingSample {
  ErrorKind error = ErrorKind::kNone;  // a verdict (IsVerdict; checked)
  double secs = 0;                     // LearnedSecs: the median, or a TIMEOUT's deadline
  uint32_t group = 0;                  // its workload
};

/// The labels CostModel::Fit takes, one per sample (higher = faster): the fastest time in the
/// sample's group over its own time, for a success and for a TIMEOUT alike (a TIMEOUT's time is
/// its deadline: it ranks as at least that slow, below every success of its group, and above
/// the failures); 0 for every other failure, which computed nothing or nothing right.
std::vector<float> RankingLabels(std::span<const RankingSample> samples);

/// A model that ranks configs by predicted speed from their feature rows: fitted on measured
/// samples grouped by workload (samples are compared within their group only, so workloads of
/// different sizes can share one model), it predicts a score per row, higher meaning faster.
/// Only the order of scores means anything. Its state is not saved: a resumed search fits it
/// again on the tuning log's records. Not thread-safe.
class CostModel {
 public:
  virtual ~CostModel() = default;

  /// Fits a fresh model, replacing the last: `labels[i]` is row i's relevance (RankingLabels),
  /// `groups[i]` the id of its workload. Rows are compared only within their group.
  /// `group_weights` weighs the pairs of a group (by id; groups not named weigh 1).
  /// InvalidArgument when the sizes disagree or there are no rows; Internal when the model's
  /// library fails (with its message). A failed fit leaves the last model in place.
  virtual absl::Status Fit(const FeatureMatrix& x, const std::vector<float>& labels,
                           const std::vector<uint32_t>& groups,
                           const std::map<uint32_t, float>& group_weights = {}) = 0;

  /// One score per row of `x`: FailedPrecondition before the first Fit, InvalidArgument when
  /// the rows are not as wide as those of the fit.
  virtual absl::StatusOr<std::vector<float>> Predict(const FeatureMatrix& x) const = 0;
};

/// Makes the cost model of one search; fits with the same `seed` on the same rows repeat
/// exactly.
using CostModelFactory = std::unique_ptr<CostModel> (*)(uint64_t seed);

}  // namespace tune
