// tune-bench-best-query: how long the best-config query takes on a large tuning log. Fills a log
// with N records (default 10^6) through TuningLog's public API — JSON lines imported in large
// transactions, then the decided bests of the jobs that re-measured finalists — spread as a
// service's log is: several hundred GEMM and conv2d workloads, a few targets on three device
// keys, each (workload, target) tuned by one or more jobs of 32 to 1000 trials over the
// templates that apply (configs drawn from each template's knobs, read from tune's template
// table; as a search skips what the log has measured, only finalists measure a config twice on
// one workload and target), about 10% failed trials, some cold-cache jobs, records of concurrent
// jobs interleaved. Then times QueryBest
// (with a target; with a device key; with a target and a template) and QueryTopK(k=5) on random
// tuned workloads and on misses, one query at a time on one thread, each call timed through the
// public API (parsing, the mutex, the cached statements). Every run of the timing part opens the
// log afresh.
//
//   build/bin/tune-bench-best-query --db /tmp/best-query.db          # fill, then time
//   build/bin/tune-bench-best-query --db /tmp/best-query.db --reuse  # time an existing log
//
// The log's contents follow from --seed and the record count, so --reuse finds the same tuned
// workloads in a log this benchmark built with the same --seed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "bench/best_query_fill.h"
#include "bench/best_query_plan.h"
#include "common/files.h"
#include "common/logging.h"
#include "common/stats.h"
#include "common/status.h"
#include "common/strings.h"
#include "db/record.h"
#include "db/tuning_log.h"

namespace tune::bench {
namespace {

// --- Timing -----------------------------------------------------------------------------------

enum class Call { kBest, kTopK };

struct QueryKind {
  std::string name;
  Call call;
  bool device;  // by device key instead of target
  bool template_filter;
  bool miss;
};

struct Percentiles {
  double p50, p90, p99;
  size_t queries;
};

std::vector<BestQuery> MakeQueries(const Plan& plan, const QueryKind& kind, size_t count,
                                   std::mt19937_64& rng) {
  std::vector<BestQuery> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    BestQuery q;
    if (kind.miss) {
      // Half unknown shapes, half known shapes on a target no job tuned them for.
      if (i % 2 == 0 || plan.untuned_pairs.empty()) {
        q.workload = Pick(rng, plan.unknown);
        q.target = Pick(rng, plan.targets).text;
      } else {
        const size_t pair = Pick(rng, plan.untuned_pairs);
        q.workload = plan.workloads[pair / plan.targets.size()].text;
        q.target = plan.targets[pair % plan.targets.size()].text;
      }
    } else {
      const Context& ctx = plan.contexts[Pick(rng, plan.tuned)];
      q.workload = plan.workloads[ctx.workload].text;
      q.target = plan.targets[ctx.target].text;
      if (kind.template_filter) {
        q.template_name = std::string(ctx.templates.front()->name);
      }
    }
    if (kind.device) {
      for (const TargetSpec& t : plan.targets) {
        if (t.text == q.target) {
          q.device_key = t.device_key;
        }
      }
      q.target.clear();
    }
    out.push_back(std::move(q));
  }
  return out;
}

absl::StatusOr<Percentiles> TimeKind(TuningLog& log, const Plan& plan, const QueryKind& kind,
                                     size_t queries, size_t warmup, std::mt19937_64& rng) {
  constexpr int kTopK = 5;
  std::vector<BestQuery> batch = MakeQueries(plan, kind, warmup + queries, rng);
  std::vector<double> us;
  us.reserve(queries);
  for (size_t i = 0; i < batch.size(); ++i) {
    const BestQuery& q = batch[i];
    size_t found = 0;
    const Clock::time_point start = Clock::now();
    if (kind.call == Call::kBest) {
      absl::StatusOr<std::optional<Record>> best = log.QueryBest(q);
      const Clock::time_point end = Clock::now();
      RETURN_IF_ERROR(best.status());
      found = best->has_value() ? 1 : 0;
      if (i >= warmup) {
        us.push_back(Micros(end - start));
      }
    } else {
      absl::StatusOr<std::vector<Record>> top = log.QueryTopK(q, kTopK);
      const Clock::time_point end = Clock::now();
      RETURN_IF_ERROR(top.status());
      found = top->size();
      if (i >= warmup) {
        us.push_back(Micros(end - start));
      }
    }
    if (kind.miss ? found != 0 : found == 0) {
      return absl::FailedPreconditionError(
          StrCat(kind.name, ": ", q.workload, " on ", q.target.empty() ? q.device_key : q.target,
                 kind.miss ? " found records, expected none" : " found none",
                 "; was the log built by this benchmark with the same --seed?"));
    }
  }
  return Percentiles{Percentile(us, 0.5), Percentile(us, 0.9), Percentile(us, 0.99), us.size()};
}

int64_t FileSize(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(size);
}

int Fail(std::string_view what, const absl::Status& status) {
  fmt::print(stderr, "tune-bench-best-query: {}: {}\n", what, status.message());
  return 1;
}

int Main(int argc, char** argv) {
  CLI::App app{"tune-bench-best-query: the best-config query's latency on a large tuning log"};
  int64_t records = 1000000;
  std::string db;
  bool reuse = false;
  bool read_only = false;
  size_t queries = 20000;
  size_t warmup = 2000;
  int runs = 3;
  uint64_t seed = 1;
  int64_t chunk = 50000;
  std::string only;
  app.add_option("--records", records,
                 "records to fill the log with (--reuse: as many as the log holds)")
      ->check(CLI::Range(int64_t{1000}, int64_t{100000000}))
      ->capture_default_str();
  auto* db_option = app.add_option(
      "--db", db, "the log's file (kept); default: a fresh one in $TMPDIR, removed at the end");
  app.add_flag("--reuse", reuse,
               "time the existing log at --db (built by this benchmark with the same --seed) "
               "instead of filling a new one")
      ->needs(db_option);
  app.add_flag("--read-only", read_only, "time through a read-only TuningLog (as tune-compile)");
  app.add_option("--queries", queries, "timed queries of each kind per run")
      ->check(CLI::Range(size_t{100}, size_t{10000000}))
      ->capture_default_str();
  app.add_option("--warmup", warmup, "untimed queries of each kind before the timed ones")
      ->check(CLI::Range(size_t{0}, size_t{10000000}))
      ->capture_default_str();
  app.add_option("--runs", runs, "timing runs (each opens the log afresh); medians over runs")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  app.add_option("--seed", seed, "seed of the log's contents and of the queries")
      ->capture_default_str();
  app.add_option("--chunk", chunk, "records per import transaction")
      ->check(CLI::Range(int64_t{1}, int64_t{10000000}))
      ->capture_default_str();
  app.add_option("--only", only,
                 "time only the queries whose name contains this text, e.g. 'QueryBest, target'");
  CLI11_PARSE(app, argc, argv);
  if (absl::Status s = InitLogging("warn"); !s.ok()) {
    return Fail("logging", s);
  }

  const std::vector<QueryKind> all_kinds = {
      {"QueryBest, target", Call::kBest, false, false, false},
      {"QueryBest, device key", Call::kBest, true, false, false},
      {"QueryBest, target + template", Call::kBest, false, true, false},
      {"QueryTopK k=5, target", Call::kTopK, false, false, false},
      {"QueryTopK k=5, device key", Call::kTopK, true, false, false},
      {"QueryBest, target, miss", Call::kBest, false, false, true},
      {"QueryTopK k=5, target, miss", Call::kTopK, false, false, true},
  };
  std::vector<QueryKind> kinds;
  for (const QueryKind& kind : all_kinds) {
    if (kind.name.find(only) != std::string::npos) {
      kinds.push_back(kind);
    }
  }
  if (kinds.empty()) {
    fmt::print(stderr, "tune-bench-best-query: --only: no query's name contains '{}'\n", only);
    return 2;
  }

  std::optional<TempDir> temp;
  if (db.empty()) {
    absl::StatusOr<TempDir> dir = TempDir::Create("tune-bench-best-query-");
    if (!dir.ok()) {
      return Fail("temporary directory", dir.status());
    }
    temp = std::move(*dir);
    db = temp->File("log.db");
  }
  const bool exists = std::filesystem::exists(db);
  if (reuse && !exists) {
    fmt::print(stderr, "tune-bench-best-query: --reuse: {} does not exist\n", db);
    return 2;
  }
  if (!reuse && exists) {
    fmt::print(stderr,
               "tune-bench-best-query: {} exists; pass --reuse to time it, or remove it (and "
               "its -wal and -shm files) to fill a new log\n",
               db);
    return 2;
  }

  if (reuse) {
    absl::StatusOr<std::unique_ptr<TuningLog>> log =
        TuningLog::Open(db, TuningLog::Mode::kReadOnly);
    if (!log.ok()) {
      return Fail("opening the log", log.status());
    }
    absl::StatusOr<int64_t> count = (*log)->CountRecords();
    if (!count.ok()) {
      return Fail("counting records", count.status());
    }
    records = *count;
  }
  const Clock::time_point plan_start = Clock::now();
  absl::StatusOr<Plan> plan = MakePlan(seed, records);
  if (!plan.ok()) {
    return Fail("planning the log", plan.status());
  }
  fmt::print("log: {}\n", db);
  fmt::print(
      "{} records: {} workloads, {} targets, {} (workload, target) pairs tuned by {} jobs "
      "(plan {:.2f} s)\n",
      records, plan->workloads.size(), plan->targets.size(), plan->contexts.size(),
      plan->jobs.size(), Seconds(Clock::now() - plan_start));
  if (!reuse) {
    fmt::print("filling ({} records per import transaction)...\n", chunk);
    std::fflush(stdout);
    absl::StatusOr<FillStats> fill = Fill(*plan, seed, db, chunk);
    if (!fill.ok()) {
      return Fail("filling the log", fill.status());
    }
    fmt::print(
        "fill: {:.1f} s generating and importing ({:.0f} records/s), {:.1f} s for {} "
        "decided bests; {:.1f} s in all\n",
        fill->generate_import_secs, static_cast<double>(records) / fill->generate_import_secs,
        fill->decide_secs, fill->decisions, fill->generate_import_secs + fill->decide_secs);
  }
  fmt::print("file: {:.1f} MiB (+ {:.1f} MiB -wal)\n", FileSize(db) / 1048576.0,
             FileSize(db + "-wal") / 1048576.0);

  std::vector<std::vector<Percentiles>> results(kinds.size());
  for (int run = 0; run < runs; ++run) {
    absl::StatusOr<std::unique_ptr<TuningLog>> log =
        TuningLog::Open(db, read_only ? TuningLog::Mode::kReadOnly : TuningLog::Mode::kReadWrite);
    if (!log.ok()) {
      return Fail("opening the log", log.status());
    }
    std::mt19937_64 rng(seed * 1000 + static_cast<uint64_t>(run));
    fmt::print("run {}:", run);
    for (size_t k = 0; k < kinds.size(); ++k) {
      const size_t n = kinds[k].miss ? std::max<size_t>(100, queries / 10) : queries;
      absl::StatusOr<Percentiles> p = TimeKind(**log, *plan, kinds[k], n, warmup, rng);
      if (!p.ok()) {
        return Fail(kinds[k].name, p.status());
      }
      results[k].push_back(*p);
      fmt::print(" {} p50 {:.1f}", kinds[k].name, p->p50);
    }
    fmt::print("\n");
    std::fflush(stdout);
  }
  fmt::print(
      "\n| query ({} runs, median of each run's percentile) | queries/run | p50 us | p90 us "
      "| p99 us |\n|---|---|---|---|---|\n",
      runs);
  for (size_t k = 0; k < kinds.size(); ++k) {
    std::vector<double> p50, p90, p99;
    for (const Percentiles& p : results[k]) {
      p50.push_back(p.p50);
      p90.push_back(p.p90);
      p99.push_back(p.p99);
    }
    fmt::print("| {} | {} | {:.1f} | {:.1f} | {:.1f} |\n", kinds[k].name, results[k][0].queries,
               Percentile(p50, 0.5), Percentile(p90, 0.5), Percentile(p99, 0.5));
  }
  return 0;
}

}  // namespace
}  // namespace tune::bench

int main(int argc, char** argv) { return tune::bench::Main(argc, argv); }
