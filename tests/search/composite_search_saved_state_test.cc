// Saved states written by the daemon's search of two templates (one a random job's, one an xgb
// job's, with lent trials of other workloads) before that search moved to search/, kept as they
// were written, with the records the log held then and what the search proposed when it
// resumed from them. A job that resumes from a state written by an earlier daemon proposes what
// that daemon would have: its outstanding proposals again, then what its strategies would have
// proposed next, the xgb model refitted on the log's records. The spaces are hand-made
// (synthetic_spaces.h), so that the states depend on no template of the table.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "search/composite_search.h"
#include "tests/search/synthetic_spaces.h"

namespace tune {
namespace {

struct SyntheticJob {
  std::string workload = Workload::Parse("gemm:M=64,N=64,K=64")->ToString();
  std::vector<float> shape = synthetic::Shape(*Workload::Parse(workload));
  // 24 trials of synthetic.a on two other workloads, the nearer of which lends its best.
  std::map<std::string, std::vector<LentTrial>, std::less<>> transfer = [] {
    std::map<std::string, std::vector<LentTrial>, std::less<>> lent;
    const std::vector<Config> valid = synthetic::SpaceA().EnumerateValid(24);
    for (size_t i = 0; i < valid.size(); ++i) {
      const TrialOutcome o = synthetic::Outcome(valid[(i * 5) % valid.size()]);
      lent["synthetic.a"].push_back({i < 2 ? "gemm:M=64,N=64,K=32" : "gemm:M=64,N=64,K=48",
                                     ConfigToString(o.config), o.error, 1.5 * o.secs});
    }
    return lent;
  }();

  std::unique_ptr<CompositeSearch> Create(const std::string& strategy,
                                          const std::vector<RecordedConfig>& measured,
                                          std::string_view state,
                                          const std::vector<RecordedTrial>& history) const {
    auto search =
        CompositeSearch::Create(workload, shape, {synthetic::DescribeA(), synthetic::DescribeB()},
                                strategy, 9, measured, state, history, transfer);
    EXPECT_TRUE(search.ok()) << search.status();
    return search.ok() ? std::move(search).value() : nullptr;
  }
};

// Written by the search of random jobs before it moved to search/.
constexpr std::string_view kRandomState =
    R"json({"defaults_proposed":["synthetic.a","synthetic.b"],"layout":2,"next":0,)json"
    R"json("outstanding":[{"config":{"u":1,"v":32},"template":"synthetic.b"},)json"
    R"json({"config":{"x":1,"y":1,"z":0},"template":"synthetic.a"},{"config":{"x":16,)json"
    R"json("y":2,"z":0},"template":"synthetic.a"},{"config":{"x":1,"y":5,"z":1},)json"
    R"json("template":"synthetic.a"},{"config":{"x":4,"y":5,"z":0},)json"
    R"json("template":"synthetic.a"},{"config":{"x":32,"y":2,"z":0},)json"
    R"json("template":"synthetic.a"},{"config":{"x":8,"y":7,"z":0},)json"
    R"json("template":"synthetic.a"},{"config":{"x":1,"y":4,"z":0},)json"
    R"json("template":"synthetic.a"}],"round":17,"seeds_pending":{"synthetic.a":[],)json"
    R"json("synthetic.b":[]},"seeds_to_model":[],)json"
    R"json("strategies":{"synthetic.a":{"mode":"shuffle","observed":11,"position":12,)json"
    R"json("seed":9,"space":"61a0124c3abc8970","strategy":"random","version":1},)json"
    R"json("synthetic.b":{"mode":"shuffle","observed":5,"position":5,"seed":10,)json"
    R"json("space":"a6b93ab5376b918f","strategy":"random","version":1}}})json";
// What its log held then (space, config), in order.
const std::vector<std::pair<std::string, std::string>> kRandomLog = {
    {"synthetic.a", R"({"x":4,"y":2,"z":0})"},  {"synthetic.a", R"({"x":2,"y":1,"z":1})"},
    {"synthetic.b", R"({"u":4,"v":64})"},       {"synthetic.b", R"({"u":6,"v":16})"},
    {"synthetic.a", R"({"x":8,"y":4,"z":1})"},  {"synthetic.a", R"({"x":2,"y":8,"z":1})"},
    {"synthetic.b", R"({"u":11,"v":16})"},      {"synthetic.a", R"({"x":2,"y":7,"z":0})"},
    {"synthetic.a", R"({"x":1,"y":6,"z":1})"},  {"synthetic.b", R"({"u":1,"v":16})"},
    {"synthetic.a", R"({"x":4,"y":8,"z":0})"},  {"synthetic.a", R"({"x":4,"y":6,"z":1})"},
    {"synthetic.a", R"({"x":16,"y":5,"z":0})"}, {"synthetic.a", R"({"x":8,"y":8,"z":1})"},
    {"synthetic.a", R"({"x":4,"y":4,"z":1})"},  {"synthetic.b", R"({"u":5,"v":32})"},
};
// The first 20 proposals of the search resumed from it.
const std::vector<std::string> kRandomResumed = {
    R"(synthetic.b {"u":1,"v":32})",       R"(synthetic.a {"x":1,"y":1,"z":0})",
    R"(synthetic.a {"x":16,"y":2,"z":0})", R"(synthetic.a {"x":1,"y":5,"z":1})",
    R"(synthetic.a {"x":4,"y":5,"z":0})",  R"(synthetic.a {"x":32,"y":2,"z":0})",
    R"(synthetic.a {"x":8,"y":7,"z":0})",  R"(synthetic.a {"x":1,"y":4,"z":0})",
    R"(synthetic.a {"x":32,"y":3,"z":1})", R"(synthetic.a {"x":1,"y":5,"z":0})",
    R"(synthetic.a {"x":8,"y":2,"z":1})",  R"(synthetic.a {"x":16,"y":4,"z":1})",
    R"(synthetic.b {"u":10,"v":64})",      R"(synthetic.a {"x":4,"y":3,"z":0})",
    R"(synthetic.a {"x":16,"y":8,"z":0})", R"(synthetic.a {"x":2,"y":2,"z":1})",
    R"(synthetic.a {"x":2,"y":8,"z":0})",  R"(synthetic.b {"u":8,"v":64})",
    R"(synthetic.a {"x":8,"y":3,"z":1})",  R"(synthetic.a {"x":1,"y":4,"z":1})",
};
// Written by the search of xgb jobs before it moved to search/.
constexpr std::string_view kXgbState =
    R"json({"defaults_proposed":["synthetic.a","synthetic.b"],"layout":2,"next":1,)json"
    R"json("outstanding":[{"config":{"u":1,"v":32},"template":"synthetic.b"},)json"
    R"json({"config":{"x":1,"y":1,"z":0},"template":"synthetic.a"},{"config":{"x":1,)json"
    R"json("y":3,"z":0},"template":"synthetic.a"},{"config":{"x":16,"y":1,"z":1},)json"
    R"json("template":"synthetic.a"},{"config":{"x":1,"y":2,"z":1},)json"
    R"json("template":"synthetic.a"},{"config":{"x":2,"y":3,"z":1},)json"
    R"json("template":"synthetic.a"},{"config":{"u":5,"v":64},"template":"synthetic.b"},)json"
    R"json({"config":{"x":4,"y":1,"z":1},"template":"synthetic.a"}],"round":16,)json"
    R"json("seeds_pending":{"synthetic.a":[],"synthetic.b":[]},)json"
    R"json("seeds_to_model":["synthetic.a"],"strategies":{"synthetic.a":{"batches":15,)json"
    R"json("plan_batch":13,"plan_observations":10,"seed":9,"space":"61a0124c3abc8970",)json"
    R"json("strategy":"xgb","taken":[1,3,4,5,6,8,9,10,17,21,33,34,49,52,65,76,81],)json"
    R"json("version":1},"synthetic.b":{"batches":4,"plan_batch":0,"plan_observations":0,)json"
    R"json("seed":10,"space":"a6b93ab5376b918f","strategy":"xgb","taken":[0,7,11,14,28],)json"
    R"json("version":1}}})json";
// What its log held then (space, config), in order.
const std::vector<std::pair<std::string, std::string>> kXgbLog = {
    {"synthetic.a", R"({"x":4,"y":2,"z":0})"},  {"synthetic.a", R"({"x":2,"y":1,"z":1})"},
    {"synthetic.b", R"({"u":4,"v":64})"},       {"synthetic.b", R"({"u":3,"v":32})"},
    {"synthetic.a", R"({"x":1,"y":1,"z":1})"},  {"synthetic.a", R"({"x":32,"y":1,"z":1})"},
    {"synthetic.b", R"({"u":1,"v":16})"},       {"synthetic.a", R"({"x":8,"y":1,"z":1})"},
    {"synthetic.a", R"({"x":16,"y":7,"z":0})"}, {"synthetic.b", R"({"u":10,"v":32})"},
    {"synthetic.a", R"({"x":1,"y":5,"z":0})"},  {"synthetic.a", R"({"x":1,"y":4,"z":0})"},
    {"synthetic.a", R"({"x":1,"y":6,"z":0})"},  {"synthetic.a", R"({"x":1,"y":3,"z":1})"},
    {"synthetic.a", R"({"x":1,"y":5,"z":1})"},  {"synthetic.a", R"({"x":8,"y":3,"z":0})"},
};
// The first 20 proposals of the search resumed from it.
const std::vector<std::string> kXgbResumed = {
    R"(synthetic.b {"u":1,"v":32})",       R"(synthetic.a {"x":1,"y":1,"z":0})",
    R"(synthetic.a {"x":1,"y":3,"z":0})",  R"(synthetic.a {"x":16,"y":1,"z":1})",
    R"(synthetic.a {"x":1,"y":2,"z":1})",  R"(synthetic.a {"x":2,"y":3,"z":1})",
    R"(synthetic.b {"u":5,"v":64})",       R"(synthetic.a {"x":4,"y":1,"z":1})",
    R"(synthetic.b {"u":11,"v":64})",      R"(synthetic.a {"x":1,"y":8,"z":0})",
    R"(synthetic.a {"x":2,"y":2,"z":1})",  R"(synthetic.a {"x":8,"y":4,"z":0})",
    R"(synthetic.a {"x":8,"y":2,"z":1})",  R"(synthetic.b {"u":12,"v":64})",
    R"(synthetic.a {"x":2,"y":3,"z":0})",  R"(synthetic.a {"x":8,"y":5,"z":1})",
    R"(synthetic.a {"x":32,"y":3,"z":0})", R"(synthetic.a {"x":8,"y":3,"z":1})",
    R"(synthetic.b {"u":8,"v":16})",       R"(synthetic.a {"x":16,"y":3,"z":0})",
};

struct Golden {
  std::string strategy;
  std::string_view state;
  const std::vector<std::pair<std::string, std::string>>* log;
  const std::vector<std::string>* resumed;
};

std::vector<Golden> Goldens() {
  return {{"random", kRandomState, &kRandomLog, &kRandomResumed},
          {"xgb", kXgbState, &kXgbLog, &kXgbResumed}};
}

// Eight rounds of three proposals, the first and the last of each recorded and the middle one
// still outstanding when the state is saved: the job that wrote the goldens.
TEST(CompositeSearchSavedStateTest, AJobRecordsAndSavesWhatItDidBefore) {
  for (const Golden& golden : Goldens()) {
    SyntheticJob job;
    std::unique_ptr<CompositeSearch> search = job.Create(golden.strategy, {}, "", {});
    ASSERT_NE(search, nullptr);
    std::vector<std::pair<std::string, std::string>> log;
    for (int round = 0; round < 8; ++round) {
      std::vector<Proposal> batch = search->Propose(3);
      for (size_t i = 0; i < batch.size(); i += 2) {
        search->Observe(batch[i].space, synthetic::Outcome(batch[i].config));
        log.emplace_back(search->space(batch[i].space).name, ConfigToString(batch[i].config));
      }
    }
    EXPECT_EQ(search->SaveState(), golden.state) << golden.strategy;
    EXPECT_EQ(log, *golden.log) << golden.strategy;
  }
}

TEST(CompositeSearchSavedStateTest, AStateWrittenBeforeResumesWithTheSameProposals) {
  for (const Golden& golden : Goldens()) {
    SyntheticJob job;
    std::vector<RecordedConfig> measured;
    std::vector<RecordedTrial> history;
    for (const auto& [name, text] : *golden.log) {
      const TrialOutcome o = synthetic::Outcome(*ParseConfig(text));
      measured.push_back({name, name == "synthetic.a" ? 3 : 1, text});
      history.push_back({measured.back(), o.error, o.secs});
    }
    std::unique_ptr<CompositeSearch> resumed =
        job.Create(golden.strategy, measured, golden.state, history);
    ASSERT_NE(resumed, nullptr);
    std::vector<std::string> proposed;
    for (const Proposal& p : resumed->Propose(20)) {
      proposed.push_back(resumed->space(p.space).name + " " + ConfigToString(p.config));
    }
    EXPECT_EQ(proposed, *golden.resumed) << golden.strategy;
  }
}

}  // namespace
}  // namespace tune
