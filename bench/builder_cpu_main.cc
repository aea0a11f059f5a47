// tune-bench-builder: the builder's CPU time per trial. A fixed set of templates and configs goes
// through the daemon's real build path: a BuilderPool of one builder process (tune-daemon
// --build-child, its artifact memo on and cold) in front of a cold ArtifactStore in a fresh
// directory. The figure is the CPU time (user + sys) of the builder process and its children
// (the linker), read with getrusage(RUSAGE_CHILDREN) around each pool's life, less the CPU time
// of a pool whose builder starts and answers one task that fails at once (the start-up), per
// config. Each entry runs --repeats times; medians are reported.
//
//   build/bin/tune-bench-builder --repeats 5
#include <sys/resource.h>

#include <cstdio>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"
#include "common/files.h"
#include "common/logging.h"
#include "common/stats.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/target.h"
#include "common/workload.h"
#include "tuner/builder/artifact_store.h"
#include "tuner/builder/builder_pool.h"

namespace tune::bench {
namespace {

// One row of the fixed set: `configs` configs of a template, drawn with a fixed seed.
struct Entry {
  const char* template_name;
  const char* workload;
  const char* target;
  int configs;
};

constexpr Entry kEntries[] = {
    {"gemm.cpu.blocked", "gemm:M=256,N=256,K=256", "llvm -mcpu=skylake-avx512 -threads=1", 8},
    {"conv2d.cpu.direct", "conv2d:N=1,C=64,H=28,W=28,K=64,R=3,S=3,stride=1,pad=1",
     "llvm -mcpu=skylake-avx512 -threads=1", 8},
    {"conv2d.cpu.winograd", "conv2d:N=1,C=64,H=28,W=28,K=64,R=3,S=3,stride=1,pad=1",
     "llvm -mcpu=skylake-avx512 -threads=1", 8},
    {"gemm.cpu.openblas", "gemm:M=256,N=256,K=256",
     "llvm -mcpu=skylake-avx512 -threads=1 -libs=openblas", 4},
    {"conv2d.cpu.dnnl", "conv2d:N=1,C=64,H=28,W=28,K=64,R=3,S=3,stride=1,pad=1",
     "llvm -mcpu=skylake-avx512 -threads=1 -libs=dnnl", 4},
    {"gemm.gpu.tiled", "gemm:M=512,N=512,K=512", "cuda -arch=sm_90", 8},
};

double CpuSecondsOfChildren() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  auto secs = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
  };
  return secs(usage.ru_utime) + secs(usage.ru_stime);
}

// The tasks of an entry: distinct valid configs drawn with a fixed seed.
absl::StatusOr<std::vector<v1::BuildChildTask>> TasksOf(const Entry& entry) {
  ASSIGN_OR_RETURN(Workload workload, Workload::Parse(entry.workload));
  ASSIGN_OR_RETURN(Target target, Target::Parse(entry.target));
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(entry.template_name, target.kind);
  if (tpl == nullptr) {
    return absl::NotFoundError(StrCat("no template ", entry.template_name));
  }
  const ConfigSpace space = tpl->space(workload, target);
  std::mt19937_64 rng(42);
  std::set<std::string> seen;
  std::vector<v1::BuildChildTask> tasks;
  for (int tries = 0; tries < 1000 && static_cast<int>(tasks.size()) < entry.configs; ++tries) {
    std::optional<Config> config =
        tasks.empty() ? std::optional<Config>(tpl->default_config(workload, target))
                      : space.Sample(rng);
    if (!config || !seen.insert(ConfigToString(*config)).second) {
      continue;
    }
    v1::BuildChildTask task;
    task.set_workload(workload.ToString());
    task.set_target(target.ToString());
    task.set_template_name(std::string(tpl->name));
    task.set_template_version(tpl->version);
    task.set_config(ConfigToString(*config));
    task.set_func_name(DefaultFunctionName(workload));
    tasks.push_back(std::move(task));
  }
  return tasks;
}

struct PoolRun {
  double cpu_secs = 0;
  int built = 0;
  int reused_or_failed = 0;
  std::string first_error;
};

// One pool's life: a first task that fails at once (the builder starts), then `tasks`; the CPU
// time of the builder processes the pool started and reaped.
absl::StatusOr<PoolRun> RunPool(const std::string& daemon,
                                const std::vector<v1::BuildChildTask>& tasks) {
  ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("tune-bench-builder-"));
  ASSIGN_OR_RETURN(std::unique_ptr<tuner::ArtifactStore> store,
                   tuner::ArtifactStore::Open(dir.File("store"), uint64_t{1} << 30,
                                              tuner::ArtifactStore::BuildEnvironment({})));
  PoolRun run;
  std::mutex mu;
  const double before = CpuSecondsOfChildren();
  {
    tuner::BuilderOptions options;
    options.executable = daemon;
    tuner::BuilderPool pool(
        options,
        [&](uint64_t trial, tuner::BuildOutcome outcome) {
          std::lock_guard lock(mu);
          if (trial == 0) {
            return;  // the start-up task
          }
          if (outcome.artifact != nullptr) {
            ++run.built;
          } else if (run.first_error.empty()) {
            run.first_error = outcome.build_error + outcome.infra_error;
          }
        },
        store.get());
    tuner::BuildTask start;
    start.trial_id = 0;
    start.priority = 1;
    start.task.set_workload("gemm:M=1,N=1,K=1");
    start.task.set_target("llvm -mcpu=x86-64");
    start.task.set_template_name("no.such.template");
    pool.Submit(start);
    pool.WaitIdle();
    for (size_t i = 0; i < tasks.size(); ++i) {
      tuner::BuildTask task;
      task.trial_id = i + 1;
      task.task = tasks[i];
      pool.Submit(std::move(task));
    }
    pool.WaitIdle();
    pool.Stop();
  }
  run.cpu_secs = CpuSecondsOfChildren() - before;
  return run;
}

int Main(int argc, char** argv) {
  CLI::App app("tune-bench-builder: the builder's CPU time per trial on a fixed set of configs");
  int repeats = 5;
  std::string daemon = TUNE_DAEMON_PATH;
  app.add_option("--repeats", repeats, "runs of each entry (medians are reported)")
      ->check(CLI::PositiveNumber);
  app.add_option("--daemon", daemon, "the tune-daemon binary the builders run");
  CLI11_PARSE(app, argc, argv);
  InitLoggingFromEnv();

  std::vector<double> startup;
  for (int r = 0; r < repeats; ++r) {
    absl::StatusOr<PoolRun> run = RunPool(daemon, {});
    if (!run.ok()) {
      std::fprintf(stderr, "start-up run: %s\n", std::string(run.status().message()).c_str());
      return 1;
    }
    startup.push_back(run->cpu_secs);
  }
  const double startup_ms = Median(startup) * 1e3;
  std::printf("builder start-up (one failing task): %.1f ms CPU (median of %d)\n", startup_ms,
              repeats);
  std::printf("%-22s %-10s %7s %14s %14s\n", "template", "target", "configs", "CPU ms/trial",
              "pool CPU ms");
  double total_ms = 0;
  int total_configs = 0;
  for (const Entry& entry : kEntries) {
    absl::StatusOr<std::vector<v1::BuildChildTask>> tasks = TasksOf(entry);
    if (!tasks.ok()) {
      std::fprintf(stderr, "%s: %s\n", entry.template_name,
                   std::string(tasks.status().message()).c_str());
      return 1;
    }
    std::vector<double> cpu;
    for (int r = 0; r < repeats; ++r) {
      absl::StatusOr<PoolRun> run = RunPool(daemon, *tasks);
      if (!run.ok()) {
        std::fprintf(stderr, "%s: %s\n", entry.template_name,
                     std::string(run.status().message()).c_str());
        return 1;
      }
      if (run->built != static_cast<int>(tasks->size())) {
        std::fprintf(stderr, "%s: %d of %zu configs built; first error: %s\n", entry.template_name,
                     run->built, tasks->size(), run->first_error.c_str());
        return 1;
      }
      cpu.push_back(run->cpu_secs);
    }
    const double pool_ms = Median(cpu) * 1e3;
    const double per_trial = (pool_ms - startup_ms) / static_cast<double>(tasks->size());
    total_ms += pool_ms - startup_ms;
    total_configs += static_cast<int>(tasks->size());
    std::printf("%-22s %-10s %7zu %14.1f %14.1f\n", entry.template_name,
                std::string(entry.target).substr(0, std::string(entry.target).find(' ')).c_str(),
                tasks->size(), per_trial, pool_ms);
  }
  std::printf("%-22s %-10s %7d %14.1f\n", "all", "", total_configs,
              total_ms / static_cast<double>(total_configs));
  return 0;
}

}  // namespace
}  // namespace tune::bench

int main(int argc, char** argv) { return tune::bench::Main(argc, argv); }
