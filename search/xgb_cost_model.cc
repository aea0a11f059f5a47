#include "search/xgb_cost_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

absl::Status XgbError(std::string_view what) {
  return absl::InternalError(StrCat("cost model: ", what, ": ", XGBGetLastError()));
}

// Frees a DMatrix at scope exit.
struct DMatrix {
  DMatrixHandle handle = nullptr;
  ~DMatrix() {
    if (handle != nullptr) {
      XGDMatrixFree(handle);
    }
  }
};

// XGBoost logs to stderr by default; the search has its own logging, so it is silenced once.
void QuietXgboost() {
  static const bool done = [] {
    XGBSetGlobalConfig(R"({"verbosity":0})");
    return true;
  }();
  (void)done;
}

}  // namespace

XgbCostModel::XgbCostModel(Options options) : options_(options) { QuietXgboost(); }

XgbCostModel::~XgbCostModel() { Free(); }

void XgbCostModel::Free() {
  if (booster_ != nullptr) {
    XGBoosterFree(booster_);
    booster_ = nullptr;
  }
}

absl::Status XgbCostModel::Fit(const FeatureMatrix& x, const std::vector<float>& labels,
                               const std::vector<uint32_t>& groups,
                               const std::map<uint32_t, float>& group_weights) {
  if (x.rows() == 0 || labels.size() != x.rows() || groups.size() != x.rows()) {
    return absl::InvalidArgumentError(StrCat("cost model: ", x.rows(), " feature rows, ",
                                             labels.size(), " labels and ", groups.size(),
                                             " group ids; accepted: as many of each, at least 1"));
  }
  // XGBoost wants each group's rows contiguous: order the rows by group, stably.
  std::vector<size_t> order(x.rows());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return groups[a] < groups[b]; });
  std::vector<float> values;
  values.reserve(x.rows() * x.cols());
  std::vector<float> sorted_labels;
  std::vector<unsigned> group_sizes;
  std::vector<float> weights;  // one per group: a ranking objective weighs groups, not rows
  for (size_t k = 0; k < order.size(); ++k) {
    std::span<const float> row = x.row(order[k]);
    values.insert(values.end(), row.begin(), row.end());
    sorted_labels.push_back(labels[order[k]]);
    if (k == 0 || groups[order[k]] != groups[order[k - 1]]) {
      group_sizes.push_back(0);
      auto weight = group_weights.find(groups[order[k]]);
      weights.push_back(weight == group_weights.end() ? 1.0f : weight->second);
    }
    ++group_sizes.back();
  }

  DMatrix train;
  if (XGDMatrixCreateFromMat(values.data(), x.rows(), x.cols(),
                             std::numeric_limits<float>::quiet_NaN(), &train.handle) != 0) {
    return XgbError("creating the training matrix");
  }
  if (XGDMatrixSetFloatInfo(train.handle, "label", sorted_labels.data(), sorted_labels.size()) !=
          0 ||
      XGDMatrixSetUIntInfo(train.handle, "group", group_sizes.data(), group_sizes.size()) != 0 ||
      XGDMatrixSetFloatInfo(train.handle, "weight", weights.data(), weights.size()) != 0) {
    return XgbError("setting labels, groups and weights");
  }
  BoosterHandle booster = nullptr;
  if (XGBoosterCreate(&train.handle, 1, &booster) != 0) {
    return XgbError("creating the booster");
  }
  const std::pair<const char*, std::string> params[] = {
      {"objective", "rank:pairwise"},
      {"tree_method", "hist"},
      {"nthread", "1"},
      {"max_depth", std::to_string(options_.max_depth)},
      {"eta", std::to_string(options_.eta)},
      {"min_child_weight", "1"},
      {"seed", std::to_string(options_.seed)},
  };
  for (const auto& [name, value] : params) {
    if (XGBoosterSetParam(booster, name, value.c_str()) != 0) {
      XGBoosterFree(booster);
      return XgbError(StrCat("setting ", name, "=", value));
    }
  }
  for (int round = 0; round < options_.rounds; ++round) {
    if (XGBoosterUpdateOneIter(booster, round, train.handle) != 0) {
      XGBoosterFree(booster);
      return XgbError(StrCat("boosting round ", round));
    }
  }
  Free();
  booster_ = booster;
  cols_ = x.cols();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> XgbCostModel::Predict(const FeatureMatrix& x) const {
  if (booster_ == nullptr) {
    return absl::FailedPreconditionError("cost model: Predict before the first Fit");
  }
  if (x.cols() != cols_) {
    return absl::InvalidArgumentError(
        StrCat("cost model: rows of ", x.cols(), " features; the model was fitted on ", cols_));
  }
  if (x.rows() == 0) {
    return std::vector<float>();
  }
  DMatrix matrix;
  if (XGDMatrixCreateFromMat(x.data(), x.rows(), x.cols(), std::numeric_limits<float>::quiet_NaN(),
                             &matrix.handle) != 0) {
    return XgbError("creating the prediction matrix");
  }
  const char* config =
      R"({"type":0,"training":false,"iteration_begin":0,"iteration_end":0,"strict_shape":false})";
  const bst_ulong* shape = nullptr;
  bst_ulong dims = 0;
  const float* result = nullptr;
  if (XGBoosterPredictFromDMatrix(booster_, matrix.handle, config, &shape, &dims, &result) != 0) {
    return XgbError("predicting");
  }
  return std::vector<float>(result, result + x.rows());
}

std::unique_ptr<CostModel> MakeXgbCostModel(uint64_t seed) {
  return std::make_unique<XgbCostModel>(XgbCostModel::Options{.seed = seed});
}

}  // namespace tune
