// tune-bench-cost-model: how fast the search's cost model learns and ranks, at the sizes a search
// reaches. Four figures, each the median (and range) of --runs runs:
//   - fit: training the XGBoost model on --records rows of 56 features (a template's row width);
//   - model alone: candidates the fitted model scores per second from ready feature rows;
//   - feature rows: rows per second that --template's FeatureFn makes (its IR built and walked);
//   - end to end: new configs scored per second as a search scores them (sampled from the space,
//     their feature rows made, put in a matrix and predicted), with a model fitted on rows of
//     that template; the figure a search sees, since features cost far more than the model.
// Usage: tune-bench-cost-model [--runs 5] [--records 2000] [--candidates 10000] [--configs 500]
//                              [--workload W] [--template T] [--target T]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"
#include "codegen/templates/template_features.h"
#include "common/stats.h"
#include "common/target.h"
#include "common/workload.h"
#include "search/config_space.h"
#include "search/xgb_cost_model.h"

namespace tune {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// `n` rows of `width` uniform values and labels with structure a model can learn.
void RandomRows(int n, size_t width, std::mt19937_64& rng, FeatureMatrix& x,
                std::vector<float>* labels) {
  std::uniform_real_distribution<float> value(0, 10);
  for (int i = 0; i < n; ++i) {
    std::vector<float> row(width);
    for (float& v : row) {
      v = value(rng);
    }
    if (labels != nullptr) {
      labels->push_back(1.0f / (1.0f + std::abs(row[0] - 3) + std::abs(row[1] - 7)));
    }
    x.Append(row);
  }
}

// `n` distinct valid configs of `space`, fewer when the space has fewer.
std::vector<Config> DistinctConfigs(const ConfigSpace& space, int n, std::mt19937_64& rng) {
  std::vector<Config> out;
  std::set<std::string> seen;
  for (int tries = 0; static_cast<int>(out.size()) < n && tries < 100 * n; ++tries) {
    std::optional<Config> c = space.Sample(rng);
    if (c && seen.insert(ConfigToString(*c)).second) {
      out.push_back(std::move(*c));
    }
  }
  return out;
}

struct Series {
  std::string name;
  std::string unit;
  std::vector<double> values;
};

void Print(const Series& s) {
  std::vector<double> v = s.values;
  std::sort(v.begin(), v.end());
  std::printf("| %s | %.4g | %.4g | %.4g | %s |\n", s.name.c_str(), Median(s.values), v.front(),
              v.back(), s.unit.c_str());
}

int Run(int runs, int records, int candidates, int configs, const Workload& workload,
        const KernelTemplate& tpl, const Target& target) {
  constexpr size_t kWidth = 56;
  Series fit{"fit", "s", {}}, model{"model alone", "candidates/s", {}},
      rows{"feature rows", "rows/s", {}}, end{"end to end", "candidates/s", {}};
  const ConfigSpace space = tpl.space(workload, target);
  for (int run = 0; run < runs; ++run) {
    std::mt19937_64 rng(run + 1);
    FeatureMatrix x(kWidth), scored(kWidth);
    std::vector<float> labels;
    RandomRows(records, kWidth, rng, x, &labels);
    RandomRows(candidates, kWidth, rng, scored, nullptr);
    XgbCostModel cost_model;
    Clock::time_point start = Clock::now();
    if (absl::Status s = cost_model.Fit(x, labels, std::vector<uint32_t>(labels.size(), 0));
        !s.ok()) {
      std::fprintf(stderr, "tune-bench-cost-model: fit: %s\n", std::string(s.message()).c_str());
      return 1;
    }
    fit.values.push_back(SecondsSince(start));
    start = Clock::now();
    absl::StatusOr<std::vector<float>> scores = cost_model.Predict(scored);
    const double predict_secs = SecondsSince(start);
    if (!scores.ok() || static_cast<int>(scores->size()) != candidates) {
      std::fprintf(stderr, "tune-bench-cost-model: predict gave no score per candidate\n");
      return 1;
    }
    model.values.push_back(candidates / predict_secs);

    // The template's rows: a model fitted on some, then new configs scored end to end. A fresh
    // FeatureFn per run, so that no row is cached from an earlier run.
    FeatureFn features = TemplateFeatureFn(tpl, workload, target);
    std::vector<Config> train = DistinctConfigs(space, configs, rng);
    start = Clock::now();
    std::vector<std::vector<float>> train_rows = features(train);
    rows.values.push_back(static_cast<double>(train.size()) / SecondsSince(start));
    FeatureMatrix tx(train_rows.front().size());
    std::vector<float> tlabels;
    for (const std::vector<float>& r : train_rows) {
      tx.Append(r);
      tlabels.push_back(1.0f / (1.0f + r[12]));
    }
    XgbCostModel template_model;
    if (!template_model.Fit(tx, tlabels, std::vector<uint32_t>(tlabels.size(), 0)).ok()) {
      std::fprintf(stderr, "tune-bench-cost-model: fit on the template's rows failed\n");
      return 1;
    }
    FeatureFn fresh = TemplateFeatureFn(tpl, workload, target);
    start = Clock::now();
    std::vector<Config> batch = DistinctConfigs(space, configs, rng);
    FeatureMatrix bx(tx.cols());
    for (const std::vector<float>& r : fresh(batch)) {
      bx.Append(r);
    }
    absl::StatusOr<std::vector<float>> ranked = template_model.Predict(bx);
    const double end_secs = SecondsSince(start);
    if (!ranked.ok() || ranked->size() != batch.size()) {
      std::fprintf(stderr, "tune-bench-cost-model: predict gave no score per config\n");
      return 1;
    }
    end.values.push_back(static_cast<double>(batch.size()) / end_secs);
  }
  std::printf("cost model: %d records and %d candidates of %zu features; %s on %s, %s; %d runs\n\n",
              records, candidates, kWidth, std::string(tpl.name).c_str(),
              workload.ToString().c_str(), target.ToString().c_str(), runs);
  std::printf("| figure | median | min | max | unit |\n|---|---|---|---|---|\n");
  for (const Series& s : {fit, model, rows, end}) {
    Print(s);
  }
  return 0;
}

}  // namespace
}  // namespace tune

int main(int argc, char** argv) {
  CLI::App app{"How fast the search's cost model fits and scores candidates"};
  int runs = 5, records = 2000, candidates = 10000, configs = 500;
  std::string workload_text = "gemm:M=1024,N=1024,K=1024", template_name = "gemm.cpu.blocked",
              target_text = "llvm -mcpu=native -threads=1";
  app.add_option("--runs", runs, "runs; each figure is their median")->check(CLI::PositiveNumber);
  app.add_option("--records", records, "training rows of the fit")->check(CLI::PositiveNumber);
  app.add_option("--candidates", candidates, "rows the model alone scores")
      ->check(CLI::PositiveNumber);
  app.add_option("--configs", configs, "configs whose rows are made, and scored end to end")
      ->check(CLI::Range(2, 1000000));
  app.add_option("--workload", workload_text, "the workload of the template's rows");
  app.add_option("--template", template_name, "a template that builds IR");
  app.add_option("--target", target_text, "the target of the template's rows");
  CLI11_PARSE(app, argc, argv);
  absl::StatusOr<tune::Workload> workload = tune::Workload::Parse(workload_text);
  absl::StatusOr<tune::Target> target = tune::Target::Parse(target_text);
  if (!workload.ok() || !target.ok()) {
    std::fprintf(
        stderr, "tune-bench-cost-model: %s\n",
        std::string((!workload.ok() ? workload.status() : target.status()).message()).c_str());
    return 2;
  }
  const tune::KernelTemplate* tpl = tune::Catalog::BuiltIn().FindTemplate(template_name);
  if (tpl == nullptr || !tpl->build) {
    std::fprintf(stderr,
                 "tune-bench-cost-model: --template: '%s' is not a template that builds IR; "
                 "accepted form: a template name such as gemm.cpu.blocked\n",
                 template_name.c_str());
    return 2;
  }
  return tune::Run(runs, records, candidates, configs, *workload, *tpl, target->Resolved());
}
