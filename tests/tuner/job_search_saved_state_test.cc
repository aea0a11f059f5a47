// Saved states written by the daemon's search of two templates (one a random job's, one an xgb
// job's, with lent trials of other workloads), kept as they were written, with the records the
// log held then and what the search proposed when it resumed from them. A job that resumes from
// a state written by an earlier daemon proposes what that daemon would have: its outstanding
// proposals again, then what its strategies would have proposed next, the xgb model refitted on
// the log's records. The templates have hand-made spaces and knob features, so that the states
// depend on no template of the table.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tuner/job_search.h"

namespace tune::tuner {
namespace {

ConfigSpace SyntheticSpaceA() {
  ConfigSpace space;
  space.AddKnob("x", {1, 2, 4, 8, 16, 32});
  space.AddKnob("y", {1, 2, 3, 4, 5, 6, 7, 8});
  space.AddKnob("z", {0, 1});
  space.AddConstraint("x * y <= 128", [](const Config& c) { return c.at("x") * c.at("y") <= 128; });
  return space;
}

ConfigSpace SyntheticSpaceB() {
  ConfigSpace space;
  space.AddKnob("u", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  space.AddKnob("v", {16, 32, 64});
  return space;
}

const KernelTemplate kSyntheticA{
    .name = "synthetic.a",
    .version = 3,
    .op = OpKind::kGemm,
    .target_kind = TargetKind::kLlvm,
    .space = [](const Workload&, const Target&) { return SyntheticSpaceA(); },
    .default_config = [](const Workload&,
                         const Target&) { return Config{{"x", 4}, {"y", 2}, {"z", 0}}; },
    .build = {},
    .seeds =
        [](const Workload&, const Target&) {
          return std::vector<Config>{{{"x", 8}, {"y", 4}, {"z", 1}},
                                     {{"x", 16}, {"y", 2}, {"z", 0}},
                                     {{"x", 2}, {"y", 8}, {"z", 1}}};
        },
};

const KernelTemplate kSyntheticB{
    .name = "synthetic.b",
    .version = 1,
    .op = OpKind::kGemm,
    .target_kind = TargetKind::kLlvm,
    .space = [](const Workload&, const Target&) { return SyntheticSpaceB(); },
    .default_config = [](const Workload&, const Target&) { return Config{{"u", 1}, {"v", 32}}; },
    .build = {},
    .seeds = [](const Workload&,
                const Target&) { return std::vector<Config>{{{"u", 4}, {"v", 64}}}; },
};

// Describes configs by their knob values (the templates build no IR).
class KnobFeatureSource final : public FeatureSource {
 public:
  std::vector<std::vector<float>> Rows(const KernelTemplate&, const Workload&, const Target&,
                                       const ConfigSpace& space,
                                       const std::vector<Config>& configs) override {
    return KnobFeatureFn(space)(configs);
  }
};

// A fixed verdict per config: a time that depends on every knob, and some wrong answers.
TrialOutcome SyntheticOutcome(const Config& config) {
  int64_t sum = 0, k = 0;
  for (const auto& [name, value] : config) {
    sum += value * (2 * k++ + 3);
  }
  if (sum % 11 == 0) {
    return TrialOutcome{config, ErrorKind::kWrongAnswer, 0};
  }
  return TrialOutcome{config, ErrorKind::kNone, 1e-3 * static_cast<double>(1 + sum % 17)};
}

struct SyntheticJob {
  Workload workload = *Workload::Parse("gemm:M=64,N=64,K=64");
  Target target = *Target::Parse("llvm");
  std::vector<const KernelTemplate*> templates = {&kSyntheticA, &kSyntheticB};
  // 24 trials of synthetic.a on two other workloads, the nearer of which lends its best.
  std::map<std::string, std::vector<TemplateTrial>, std::less<>> transfer = [] {
    std::map<std::string, std::vector<TemplateTrial>, std::less<>> lent;
    const std::vector<Config> valid = SyntheticSpaceA().EnumerateValid(24);
    for (size_t i = 0; i < valid.size(); ++i) {
      const TrialOutcome o = SyntheticOutcome(valid[(i * 5) % valid.size()]);
      lent["synthetic.a"].push_back({i < 2 ? "gemm:M=64,N=64,K=32" : "gemm:M=64,N=64,K=48",
                                     ConfigToString(o.config), o.error, 1.5 * o.secs});
    }
    return lent;
  }();
  KnobFeatureSource features;
};

struct SavedJob {
  std::string state;
  std::vector<ConfigKey> log;  // the records, in order
};

// Eight rounds of three proposals, the first and the last of each recorded and the middle one
// still outstanding when the state is saved.
SavedJob RunUntilSaved(SyntheticJob& job, const std::string& strategy) {
  auto search = JobSearch::Create(job.workload, job.target, job.templates, strategy, 9, {}, "", {},
                                  job.transfer, &job.features);
  EXPECT_TRUE(search.ok()) << search.status();
  SavedJob saved;
  for (int round = 0; round < 8; ++round) {
    std::vector<Candidate> batch = (*search)->Propose(3);
    for (size_t i = 0; i < batch.size(); i += 2) {
      (*search)->Observe(batch[i].tpl, SyntheticOutcome(batch[i].config));
      saved.log.push_back({std::string(batch[i].tpl->name), batch[i].tpl->version,
                           ConfigToString(batch[i].config)});
    }
  }
  saved.state = (*search)->SaveState();
  return saved;
}

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

TEST(JobSearchSavedStateTest, AJobRecordsAndSavesWhatItDidBefore) {
  for (const Golden& golden : Goldens()) {
    SyntheticJob job;
    const SavedJob saved = RunUntilSaved(job, golden.strategy);
    EXPECT_EQ(saved.state, golden.state) << golden.strategy;
    std::vector<std::pair<std::string, std::string>> log;
    for (const ConfigKey& key : saved.log) {
      log.emplace_back(key.template_name, key.config);
    }
    EXPECT_EQ(log, *golden.log) << golden.strategy;
  }
}

TEST(JobSearchSavedStateTest, AStateWrittenBeforeResumesWithTheSameProposals) {
  for (const Golden& golden : Goldens()) {
    SyntheticJob job;
    std::vector<ConfigKey> log;
    std::vector<PastTrial> history;
    for (const auto& [name, text] : *golden.log) {
      const KernelTemplate* tpl = name == kSyntheticA.name ? &kSyntheticA : &kSyntheticB;
      const TrialOutcome o = SyntheticOutcome(*ParseConfig(text));
      log.push_back({name, tpl->version, text});
      history.push_back({log.back(), o.error, o.secs});
    }
    auto resumed = JobSearch::Create(job.workload, job.target, job.templates, golden.strategy, 9,
                                     log, golden.state, history, job.transfer, &job.features);
    ASSERT_TRUE(resumed.ok()) << resumed.status();
    std::vector<std::string> proposed;
    for (const Candidate& c : (*resumed)->Propose(20)) {
      proposed.push_back(std::string(c.tpl->name) + " " + ConfigToString(c.config));
    }
    EXPECT_EQ(proposed, *golden.resumed) << golden.strategy;
  }
}

}  // namespace
}  // namespace tune::tuner
