// CostModel: a gradient-boosted tree model (XGBoost's C API) that ranks configs by predicted
// speed. It is fitted on measured samples grouped by workload (a pairwise ranking objective
// compares samples of one group only, so workloads of different sizes can share one model) and
// predicts a score per feature row: higher means faster. Only the order of scores means
// anything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
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

class CostModel {
 public:
  struct Options {
    int rounds = 48;    // boosting rounds per fit
    int max_depth = 6;  // of each tree
    double eta = 0.3;   // learning rate
    uint64_t seed = 0;  // XGBoost's seed (subsampling is off, so fits repeat exactly)
  };

  CostModel() : CostModel(Options()) {}
  explicit CostModel(Options options);
  ~CostModel();
  CostModel(CostModel&& other) noexcept;
  CostModel& operator=(CostModel&& other) noexcept;
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;

  /// Fits a fresh model: `labels[i]` is row i's relevance (RankingLabels), `groups[i]` the id
  /// of its workload. Rows are compared only within their group.
  /// InvalidArgument when the sizes disagree or there are no rows; Internal with XGBoost's
  /// message when it fails.
  /// `group_weights` weighs the pairs of a group (by id; groups not named weigh 1).
  absl::Status Fit(const FeatureMatrix& x, const std::vector<float>& labels,
                   const std::vector<uint32_t>& groups,
                   const std::map<uint32_t, float>& group_weights = {});

  /// One score per row of `x` (FailedPrecondition before the first Fit).
  absl::StatusOr<std::vector<float>> Predict(const FeatureMatrix& x) const;

  bool trained() const { return booster_ != nullptr; }

 private:
  void Free();

  Options options_;
  void* booster_ = nullptr;  // BoosterHandle
  size_t cols_ = 0;
};

}  // namespace tune
