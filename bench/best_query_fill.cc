#include "bench/best_query_fill.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "common/logging.h"
#include "common/measurement.h"
#include "common/status.h"
#include "common/strings.h"
#include "db/record.h"
#include "db/record_json.h"
#include "db/tuning_log.h"

namespace tune::bench {
namespace {

std::string ConfigText(const TemplateSpec& tpl, std::mt19937_64& rng, bool default_config) {
  std::string out = "{";
  // Knobs in name order: the canonical text (CanonicalizeRecord would sort them anyway).
  std::vector<const Knob*> knobs;
  for (const Knob& k : tpl.knobs) {
    knobs.push_back(&k);
  }
  std::sort(knobs.begin(), knobs.end(),
            [](const Knob* a, const Knob* b) { return a->name < b->name; });
  for (const Knob* k : knobs) {
    const int64_t value = default_config ? k->values[k->values.size() / 2] : Pick(rng, k->values);
    out += StrCat(out.size() > 1 ? "," : "", "\"", k->name, "\":", value);
  }
  return out + "}";
}

// A deterministic "speed" of a config on a context: the same config measures alike every time.
double SlowdownOf(size_t context, std::string_view tpl, const std::string& config) {
  const size_t h = std::hash<std::string>{}(StrCat(context, "/", tpl, "/", config));
  std::mt19937_64 rng(h);
  return 1.0 + std::exp(std::normal_distribution<double>(0.0, 1.0)(rng));
}

struct Decision {
  size_t context;
  bool cold;
  int64_t line;  // 0-based index of the finalist's record among all records
  std::string uid;
  double median_secs;
};

class Filler {
 public:
  Filler(const Plan& plan, uint64_t seed)
      : plan_(plan), rng_(seed ^ 0x9e3779b97f4a7c15ULL), measured_(plan.contexts.size()) {}

  // Every record of the plan, in commit order, with the decided bests that finalists produced
  // (the latest per context and cache state).
  template <typename Sink>
  void Generate(Sink&& sink) {
    struct Active {
      const JobPlan* plan;
      int done = 0;
      std::vector<std::pair<double, std::pair<const TemplateSpec*, std::string>>> best = {};
    };
    std::vector<Active> active;
    size_t next = 0;
    const size_t concurrency = 3;
    while (next < plan_.jobs.size() || !active.empty()) {
      while (active.size() < concurrency && next < plan_.jobs.size()) {
        active.push_back(Active{.plan = &plan_.jobs[next++]});
      }
      const size_t a = Index(rng_, active.size());
      Active& job = active[a];
      const Context& ctx = plan_.contexts[job.plan->context];
      if (job.done < job.plan->trials) {
        Record r = Trial(*job.plan, ctx, job.done);
        if (r.measurement.ok()) {
          job.best.push_back(
              {r.measurement.MedianSecs(), {FindTemplate(ctx, r.template_name), r.config}});
        }
        ++job.done;
        Emit(sink, r);
        if (job.done < job.plan->trials || !job.plan->finalists) {
          if (job.done == job.plan->trials) {
            active.erase(active.begin() + static_cast<std::ptrdiff_t>(a));
          }
          continue;
        }
      }
      // The job's end: re-measure its three fastest configs, decide the best.
      std::sort(job.best.begin(), job.best.end());
      std::optional<Decision> decision;
      std::set<std::string> finalists;
      for (const auto& [secs, which] : job.best) {
        if (finalists.size() == 3) {
          break;
        }
        if (!finalists.insert(which.second).second) {
          continue;
        }
        Record r = Base(*job.plan, ctx, *which.first, which.second);
        r.final = true;
        Measure(r, secs * (1.0 + 0.03 * Uniform(rng_)), 10);
        const double median = r.measurement.MedianSecs();
        if (!decision || median < decision->median_secs) {
          decision = Decision{job.plan->context, job.plan->cold, lines_, r.uid, median};
        }
        Emit(sink, r);
      }
      if (decision) {
        decisions_[{decision->context, decision->cold}] = *decision;
      }
      active.erase(active.begin() + static_cast<std::ptrdiff_t>(a));
    }
  }

  int64_t lines() const { return lines_; }

  std::vector<Decision> decisions() const {
    std::vector<Decision> out;
    for (const auto& [key, d] : decisions_) {
      out.push_back(d);
    }
    return out;
  }

 private:
  template <typename Sink>
  void Emit(Sink& sink, const Record& r) {
    sink(r);
    ++lines_;
  }

  static const TemplateSpec* FindTemplate(const Context& ctx, std::string_view name) {
    for (const TemplateSpec* t : ctx.templates) {
      if (t->name == name) {
        return t;
      }
    }
    return ctx.templates.front();
  }

  std::string Uid() {
    return fmt::format("{:016x}{:016x}", static_cast<uint64_t>(rng_()),
                       static_cast<uint64_t>(rng_()));
  }

  Record Base(const JobPlan& job, const Context& ctx, const TemplateSpec& tpl,
              const std::string& config) {
    const TargetSpec& target = plan_.targets[ctx.target];
    Record r;
    r.uid = Uid();
    r.workload = plan_.workloads[ctx.workload].text;
    r.target = target.text;
    r.device_key = target.device_key;
    r.template_name = std::string(tpl.name);
    r.template_version = tpl.version;
    r.config = config;
    r.measurement.device_fingerprint = target.fingerprint;
    r.measurement.library_info = std::string(tpl.library_info);
    TimingOptions timing;
    timing.flush_cache = job.cold;
    r.timing = timing;
    // tune 0.2.0 from 60% of the log on.
    r.tune_version = lines_ * 10 < plan_.records * 6 ? "0.1.0" : "0.2.0";
    r.llvm_version = "19.1.7";
    r.worker = StrCat(target.gpu ? "gpu-worker-" : "worker-", lines_ % 4);
    r.created_at_ms = 1767225600000 + lines_ * 700;  // 2026-01-01, a trial every 0.7 s
    return r;
  }

  void Measure(Record& r, double secs, int rounds) {
    r.measurement.error = ErrorKind::kNone;
    r.measurement.number = static_cast<int>(std::max(1.0, std::ceil(0.01 / secs)));
    for (int i = 0; i < rounds; ++i) {
      r.measurement.round_secs.push_back(secs * (1.0 + 0.02 * (Uniform(rng_) - 0.5)));
    }
  }

  Record Trial(const JobPlan& job, const Context& ctx, int index) {
    // The context's first trial is the first template's default; later ones draw a template by
    // weight and a config not measured on this workload and target yet (as a search skips
    // MeasuredConfigs), when one is found quickly. A job's first trial always measures.
    std::unordered_set<uint64_t>& measured = measured_[job.context];
    const TemplateSpec* tpl = ctx.templates.front();
    std::string config;
    uint64_t key = 0;
    if (measured.empty()) {
      config = ConfigText(*tpl, rng_, /*default_config=*/true);
      key = std::hash<std::string>{}(StrCat(tpl->name, config));
    } else {
      double total = 0;
      for (const TemplateSpec* t : ctx.templates) {
        total += t->weight;
      }
      for (int attempt = 0; attempt < 16; ++attempt) {
        double draw = Uniform(rng_) * total;
        for (const TemplateSpec* t : ctx.templates) {
          tpl = t;
          if ((draw -= t->weight) <= 0) {
            break;
          }
        }
        config = ConfigText(*tpl, rng_, false);
        key = std::hash<std::string>{}(StrCat(tpl->name, config));
        if (!measured.contains(key)) {
          break;
        }
      }
    }
    measured.insert(key);
    Record r = Base(job, ctx, *tpl, config);
    const double fail = index == 0 ? 1.0 : Uniform(rng_);
    if (fail < 0.10) {
      static const std::pair<ErrorKind, const char*> kFailures[] = {
          {ErrorKind::kBuildError, "llc: error: ran out of registers during register allocation"},
          {ErrorKind::kBuildError, "codegen: vectorize: the tile does not divide the extent"},
          {ErrorKind::kTimeout, "kernel exceeded the 10000 ms deadline"},
          {ErrorKind::kRuntimeCrash, "the kernel was killed by signal 11 (SIGSEGV)"},
          {ErrorKind::kWrongAnswer, "max relative error 3.1e-02 at C[17][3] exceeds 1.0e-04"},
          {ErrorKind::kUnsupported, "the library rejects this shape: status 9 (not supported)"},
          {ErrorKind::kWorkerLost, "worker-2 lost while measuring (3 attempts)"},
          {ErrorKind::kTimeout, "kernel exceeded the 10000 ms deadline"},
          {ErrorKind::kBuildError, "lower: shared memory 69632 bytes exceeds 49152"},
          {ErrorKind::kBuildError, "llc: error: ran out of registers during register allocation"},
      };
      const auto& [kind, message] = kFailures[static_cast<size_t>(fail * 100) % 10];
      r.measurement.error = kind;
      r.measurement.message = message;
      return r;
    }
    const WorkloadSpec& w = plan_.workloads[ctx.workload];
    const TargetSpec& t = plan_.targets[ctx.target];
    double secs = w.flops / (t.gflops * 1e9) * SlowdownOf(job.context, tpl->name, config);
    if (job.cold) {
      secs *= 1.25;
    }
    Measure(r, secs * (1.0 + 0.04 * (Uniform(rng_) - 0.5)), 3 + static_cast<int>(Index(rng_, 8)));
    return r;
  }

  const Plan& plan_;
  int64_t lines_ = 0;  // records generated so far
  std::mt19937_64 rng_;
  std::vector<std::unordered_set<uint64_t>> measured_;  // per context: template + config hashes
  std::map<std::pair<size_t, bool>, Decision> decisions_;
};

}  // namespace

absl::StatusOr<FillStats> Fill(const Plan& plan, uint64_t seed, const std::string& path,
                               int64_t chunk) {
  ASSIGN_OR_RETURN(std::unique_ptr<TuningLog> log, TuningLog::Open(path));
  FillStats stats;
  Filler filler(plan, seed);
  std::string buffer;
  int64_t in_buffer = 0;
  absl::Status status;
  auto flush = [&]() {
    if (in_buffer == 0 || !status.ok()) {
      return;
    }
    std::istringstream in(std::move(buffer));
    absl::StatusOr<TuningLog::ImportStats> imported = log->ImportJsonl(in);
    if (!imported.ok()) {
      status = imported.status();
    } else if (imported->imported != in_buffer) {
      status = absl::InternalError(StrCat("imported ", imported->imported, " of ", in_buffer,
                                          " records (", imported->skipped_duplicates,
                                          " duplicate uids)"));
    }
    buffer.clear();
    in_buffer = 0;
  };
  const Clock::time_point start = Clock::now();
  int64_t reported = 0;
  filler.Generate([&](const Record& r) {
    buffer += RecordToJsonLine(r);
    buffer += '\n';
    ++in_buffer;
    if (in_buffer >= chunk) {
      flush();
    }
    const int64_t done = filler.lines() + 1;
    if (plan.records >= 100000 && done - reported >= plan.records / 10) {
      reported = done;
      fmt::print(stderr, "  {} records, {:.1f} s\n", done, Seconds(Clock::now() - start));
    }
  });
  flush();
  RETURN_IF_ERROR(status);
  if (filler.lines() != plan.records) {
    return absl::InternalError(
        StrCat("generated ", filler.lines(), " records, planned ", plan.records));
  }
  stats.generate_import_secs = Seconds(Clock::now() - start);

  // Decided bests: a fresh log numbers records in import order from 1.
  const Clock::time_point decide = Clock::now();
  for (const Decision& d : filler.decisions()) {
    const int64_t id = d.line + 1;
    ASSIGN_OR_RETURN(std::optional<Record> record, log->GetRecord(id));
    if (!record || record->uid != d.uid) {
      return absl::InternalError(StrCat("record ", id, " is not the finalist ", d.uid,
                                        " (was the log empty before the fill?)"));
    }
    const Context& ctx = plan.contexts[d.context];
    RETURN_IF_ERROR(log->SetBestDecision({.workload = plan.workloads[ctx.workload].text,
                                          .target = plan.targets[ctx.target].text,
                                          .flush_cache = d.cold,
                                          .record_id = id,
                                          .median_secs = d.median_secs,
                                          .relative_ci = 0.01}));
    ++stats.decisions;
  }
  stats.decide_secs = Seconds(Clock::now() - decide);
  return stats;
}

}  // namespace tune::bench
