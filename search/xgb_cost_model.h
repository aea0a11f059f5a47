// XgbCostModel: the CostModel of the "xgb" and "auto" searches, gradient-boosted trees (XGBoost's
// C API) under a pairwise ranking objective over groups of one workload each, so that workloads
// of different sizes share one model. Subsampling is off, so a fit on the same rows with the same
// seed gives the same model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "search/cost_model.h"

namespace tune {

class XgbCostModel final : public CostModel {
 public:
  struct Options {
    int rounds = 48;    // boosting rounds per fit
    int max_depth = 6;  // of each tree
    double eta = 0.3;   // learning rate
    uint64_t seed = 0;  // XGBoost's seed (subsampling is off, so fits repeat exactly)
  };

  XgbCostModel() : XgbCostModel(Options()) {}
  explicit XgbCostModel(Options options);
  ~XgbCostModel() override;
  XgbCostModel(const XgbCostModel&) = delete;
  XgbCostModel& operator=(const XgbCostModel&) = delete;

  /// Internal with XGBoost's message when it fails; see CostModel::Fit for the rest.
  absl::Status Fit(const FeatureMatrix& x, const std::vector<float>& labels,
                   const std::vector<uint32_t>& groups,
                   const std::map<uint32_t, float>& group_weights = {}) override;

  absl::StatusOr<std::vector<float>> Predict(const FeatureMatrix& x) const override;

 private:
  void Free();

  const Options options_;
  void* booster_ = nullptr;  // BoosterHandle
  size_t cols_ = 0;
};

/// An XgbCostModel with the default options and XGBoost's seed `seed` (a CostModelFactory).
std::unique_ptr<CostModel> MakeXgbCostModel(uint64_t seed);

}  // namespace tune
