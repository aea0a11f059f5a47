// tune-bench-best-query: how long the best-config query takes on a large tuning log. Fills a log
// with N records (default 10^6) through TuningLog's public API — JSON lines imported in large
// transactions, then the decided bests of the jobs that re-measured finalists — spread as a
// service's log is: several hundred GEMM and conv2d workloads, a few targets on three device
// keys, each (workload, target) tuned by one or more jobs of 32 to 1000 trials over the
// templates that apply (configs drawn from each template's knobs; as a search skips what the log
// has measured, only finalists measure a config twice on one workload and target), about 10%
// failed trials, some cold-cache jobs, records of concurrent jobs interleaved. Then times QueryBest
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
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/files.h"
#include "common/logging.h"
#include "common/measurement.h"
#include "common/stats.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/target.h"
#include "common/workload.h"
#include "db/record.h"
#include "db/record_json.h"
#include "db/tuning_log.h"

namespace tune::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }
double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

double Uniform(std::mt19937_64& rng) { return std::uniform_real_distribution<double>(0, 1)(rng); }
size_t Index(std::mt19937_64& rng, size_t n) { return static_cast<size_t>(rng() % n); }
template <typename T>
const T& Pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[Index(rng, v.size())];
}

// --- What the log holds ---------------------------------------------------------------------

struct Knob {
  std::string_view name;
  std::vector<int64_t> values;
};

// A template as the log sees it: its name, version and knobs (names and candidates of the real
// template's space; constraints are not applied, a record's config need only be a flat object
// of integers), and how often a search picks it.
struct TemplateSpec {
  std::string_view name;
  int version;
  std::vector<Knob> knobs;
  double weight;
  std::string_view library_info = {};
};

const TemplateSpec kGemmBlocked{"gemm.cpu.blocked",
                                1,
                                {{"mr", {1, 2, 4, 6, 8, 12, 14}},
                                 {"nr", {16, 32, 48, 64}},
                                 {"kc", {32, 64, 128, 256, 384, 512, 768}},
                                 {"mc", {16, 24, 32, 48, 56, 64, 96, 112, 128, 168, 192, 256}},
                                 {"nc", {192, 384, 768, 1536, 3072}},
                                 {"unroll_k", {1, 2, 4, 8}},
                                 {"pack_a", {0, 1}},
                                 {"pack_b", {0, 1}},
                                 {"order", {0, 1, 2, 3, 4, 5}}},
                                1.0};
const TemplateSpec kGemmOpenblas{
    "gemm.cpu.openblas", 1, {}, 0.02, "OpenBLAS 0.3.21 (SkylakeX kernels)"};
const TemplateSpec kGemmDnnl{
    "gemm.cpu.dnnl", 1, {{"layout", {0, 1}}}, 0.03, "oneDNN v3.5.3 (avx512_core)"};
const TemplateSpec kConvDirect{"conv2d.cpu.direct",
                               2,
                               {{"kv", {1, 2, 3, 4}},
                                {"qt", {1, 2, 3, 4, 6, 8, 10, 12, 14}},
                                {"unroll_rs", {0, 1, 2}},
                                {"loop_order", {0, 1}},
                                {"pt", {1, 2, 3, 4, 6, 8}},
                                {"kt", {1, 2, 3, 4, 6, 8}},
                                {"tile_order", {0, 1}},
                                {"cc", {1, 2, 4, 8, 16, 32, 64}},
                                {"chunk_outer", {0, 1}},
                                {"unroll_c", {1, 2, 4, 8}}},
                               1.0};
const TemplateSpec kConvBlocked{"conv2d.cpu.blocked",
                                2,
                                {{"kb", {1, 2, 4}},
                                 {"qt", {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 28}},
                                 {"unroll_rs", {0, 1, 2}},
                                 {"unroll_ci", {1, 2, 4, 8, 16}},
                                 {"loop_order", {0, 1}},
                                 {"pt", {1, 2, 3, 4, 6, 8}},
                                 {"kt", {1, 2, 3, 4, 6, 8}},
                                 {"tile_order", {0, 1}},
                                 {"cbc", {1, 2, 4, 8, 16, 32}},
                                 {"chunk_outer", {0, 1}}},
                                1.0};
const TemplateSpec kConvWinograd{"conv2d.cpu.winograd",
                                 2,
                                 {{"m", {2, 4}},
                                  {"jt", {2, 4, 6, 7, 8, 10, 12, 14}},
                                  {"kv", {1, 2, 4}},
                                  {"tr", {1, 2, 3, 4, 6, 8}},
                                  {"order", {0, 1}},
                                  {"cc", {16, 32, 64, 128, 256}},
                                  {"gemm_order", {0, 1, 2, 3, 4, 5}},
                                  {"unroll_c", {1, 2, 4, 8}},
                                  {"it_order", {0, 1}},
                                  {"ot_order", {0, 1}}},
                                 0.6};
const TemplateSpec kConvPointwise{"conv2d.cpu.pointwise", 1, kGemmBlocked.knobs, 0.6};
const TemplateSpec kConvIm2col{"conv2d.cpu.im2col_openblas",
                               1,
                               {{"im2col", {0, 1}}, {"pq_block", {64, 256, 1024, 4096}}},
                               0.03,
                               "OpenBLAS 0.3.21 (SkylakeX kernels)"};
const TemplateSpec kConvDnnl{"conv2d.cpu.dnnl",
                             1,
                             {{"algorithm", {0, 1}}, {"layout", {0, 1}}},
                             0.03,
                             "oneDNN v3.5.3 (avx512_core)"};
const TemplateSpec kGemmGpuTiled{"gemm.gpu.tiled",
                                 4,
                                 {{"bm", {16, 32, 64, 128, 256}},
                                  {"bn", {16, 32, 64, 128, 256}},
                                  {"tm", {1, 2, 4, 8, 16}},
                                  {"tn", {1, 2, 4, 8, 16}},
                                  {"bk", {4, 8, 16, 32, 64, 128}},
                                  {"stages", {1, 2, 3, 4}},
                                  {"async", {0, 1, 2}},
                                  {"vec", {1, 2, 4}},
                                  {"splitk", {1, 2, 4, 8, 16}},
                                  {"gridk", {1, 2, 4, 8}},
                                  {"fragpipe", {0, 1}}},
                                 1.0};
const TemplateSpec kGemmCublas{"gemm.cuda.cublas", 1, {}, 0.02, "cuBLAS 12.4.5"};
const TemplateSpec kConvGpuDirect{"conv2d.gpu.direct",
                                  1,
                                  {{"tile_f", {1, 2, 4, 8, 16, 32, 64}},
                                   {"tile_y", {1, 2, 4, 7, 8, 14, 16}},
                                   {"tile_x", {1, 2, 4, 7, 8, 14, 16, 28, 32}},
                                   {"tile_rc", {1, 2, 4, 8, 16, 32}},
                                   {"vf", {1, 2, 4, 8}},
                                   {"vx", {1, 2, 4}}},
                                  1.0};
const TemplateSpec kConvGpuImplicit{"conv2d.gpu.implicit_gemm",
                                    3,
                                    {{"bm", {8, 16, 32, 64, 128, 256}},
                                     {"bn", {4, 8, 16, 32, 64, 128, 256}},
                                     {"tm", {1, 2, 4, 8}},
                                     {"tn", {1, 2, 4, 8}},
                                     {"bk", {4, 8, 16, 32}},
                                     {"stages", {1, 2}},
                                     {"vec", {1, 2, 4}},
                                     {"gridk", {1, 2, 4, 8}}},
                                    1.0};
const TemplateSpec kConvCudnn{
    "conv2d.cuda.cudnn", 1, {{"algorithm", {0, 1, 2, 3, 4, 5, 6, 7}}}, 0.05, "cuDNN 9.1.0"};

struct TargetSpec {
  std::string text;  // canonical
  std::string device_key;
  std::string fingerprint;
  bool gpu;
  bool libs;              // -libs= names the libraries
  double gflops;          // what a good kernel reaches, for plausible times
  double tuned_fraction;  // share of the workloads tuned on it
};

struct WorkloadSpec {
  std::string text;  // canonical
  bool gemm;
  bool pointwise;  // 1x1 stride-1 conv2d
  bool winograd;   // 3x3 stride-1 conv2d
  bool blocked;    // conv2d in a blocked layout
  double flops;
};

// One (workload, target) that jobs tuned.
struct Context {
  size_t workload;
  size_t target;
  std::vector<const TemplateSpec*> templates;  // the first one's default is its first trial
  double popularity;                           // how often it is tuned again
};

struct JobPlan {
  size_t context;
  int trials;
  bool cold;       // timed with flush_cache
  bool finalists;  // ends by re-measuring its 3 fastest configs and deciding the best
};

// The log's shape, from the seed and the record count alone (so --reuse can rebuild it).
struct Plan {
  std::vector<WorkloadSpec> workloads;
  std::vector<TargetSpec> targets;
  std::vector<Context> contexts;
  std::vector<JobPlan> jobs;
  std::vector<size_t> tuned;          // contexts with a warm-cache job: best queries hit
  std::vector<std::string> unknown;   // workloads the log does not hold: misses
  std::vector<size_t> untuned_pairs;  // workload * targets + target never tuned: misses
  int64_t records = 0;
};

absl::StatusOr<std::string> CanonicalTargetText(const std::string& text) {
  ASSIGN_OR_RETURN(Target target, Target::Parse(text));
  return target.ToString();
}

absl::StatusOr<WorkloadSpec> MakeWorkload(const std::string& text) {
  ASSIGN_OR_RETURN(Workload w, Workload::Parse(text));
  WorkloadSpec spec{w.ToString(), w.op() == OpKind::kGemm, false, false, false, w.Flops()};
  if (!spec.gemm) {
    const Conv2dShape& s = w.conv2d();
    spec.pointwise = s.r == 1 && s.s == 1 && s.stride == 1;
    spec.winograd = s.r == 3 && s.s == 3 && s.stride == 1;
    spec.blocked = s.block > 1;
  }
  return spec;
}

// Several hundred GEMM shapes (transformer projections, square, skinny, odd) and conv2d layers
// (ResNet / MobileNet-like, plain and blocked, batch 1 and 8).
absl::StatusOr<std::vector<WorkloadSpec>> MakeWorkloads(std::mt19937_64& rng, int gemms,
                                                        int convs) {
  std::vector<WorkloadSpec> out;
  std::set<std::string> seen;
  const std::vector<int64_t> dims = {1,   8,   16,  32,   64,   100,  128,  196,  197, 256, 333,
                                     384, 512, 768, 1000, 1024, 2048, 3072, 4096, 555, 777};
  while (static_cast<int>(out.size()) < gemms) {
    std::string text =
        StrCat("gemm:M=", Pick(rng, dims), ",N=", Pick(rng, dims), ",K=", Pick(rng, dims));
    if (seen.insert(text).second) {
      ASSIGN_OR_RETURN(WorkloadSpec spec, MakeWorkload(text));
      out.push_back(std::move(spec));
    }
  }
  const std::vector<int64_t> channels = {16, 32, 64, 96, 128, 192, 256, 384, 512, 1024, 2048};
  const std::vector<int64_t> sizes = {7, 14, 28, 56, 112};
  const std::vector<int64_t> filters = {1, 1, 3, 3, 3, 5, 7};
  int made = 0;
  while (made < convs) {
    const int64_t r = Pick(rng, filters);
    const int64_t stride = Uniform(rng) < 0.8 ? 1 : 2;
    const int64_t c = Pick(rng, channels), k = Pick(rng, channels), hw = Pick(rng, sizes);
    const int64_t batch = Uniform(rng) < 0.7 ? 1 : 8;
    std::string text = StrCat("conv2d:N=", batch, ",C=", c, ",H=", hw, ",W=", hw, ",K=", k,
                              ",R=", r, ",S=", r, ",stride=", stride, ",pad=", r / 2);
    if (Uniform(rng) < 0.3) {
      text += ",layout=NCHW16c";
    }
    if (seen.insert(text).second) {
      ASSIGN_OR_RETURN(WorkloadSpec spec, MakeWorkload(text));
      out.push_back(std::move(spec));
      ++made;
    }
  }
  return out;
}

std::vector<const TemplateSpec*> TemplatesOf(const WorkloadSpec& w, const TargetSpec& t) {
  std::vector<const TemplateSpec*> out;
  if (t.gpu) {
    if (w.gemm) {
      out = {&kGemmGpuTiled, &kGemmCublas};
    } else {
      out = {&kConvGpuDirect, &kConvGpuImplicit, &kConvCudnn};
    }
    return out;
  }
  if (w.gemm) {
    out = {&kGemmBlocked};
    if (t.libs) {
      out.push_back(&kGemmOpenblas);
      out.push_back(&kGemmDnnl);
    }
    return out;
  }
  if (w.blocked) {
    out = {&kConvBlocked};
    if (t.libs) {
      out.push_back(&kConvDnnl);
    }
    return out;
  }
  out = {&kConvDirect};
  if (w.pointwise) {
    out.insert(out.begin(), &kConvPointwise);
  }
  if (w.winograd) {
    out.push_back(&kConvWinograd);
  }
  if (t.libs) {
    out.push_back(&kConvIm2col);
    out.push_back(&kConvDnnl);
  }
  return out;
}

absl::StatusOr<Plan> MakePlan(uint64_t seed, int64_t records) {
  Plan plan;
  plan.records = records;
  std::mt19937_64 rng(seed);
  struct RawTarget {
    const char* text;
    const char* fingerprint;
    bool gpu, libs;
    double gflops, tuned;
  };
  const RawTarget raw[] = {
      {"llvm -mcpu=znver4 -threads=1", "AMD EPYC 9654 96-Core; 1 thread", false, false, 80, 0.9},
      {"llvm -mcpu=znver4 -threads=16 -libs=openblas,dnnl", "AMD EPYC 9654 96-Core; 16 threads",
       false, true, 1000, 0.5},
      {"llvm -mcpu=sapphirerapids -threads=1", "Intel Xeon Platinum 8480+; 1 thread", false, false,
       100, 0.5},
      {"llvm -mcpu=sapphirerapids -threads=8 -libs=openblas,dnnl",
       "Intel Xeon Platinum 8480+; 8 threads", false, true, 700, 0.3},
      {"cuda -arch=sm_90 -libs=cublas,cudnn", "NVIDIA H100 80GB HBM3; driver 550.54", true, true,
       30000, 0.3},
  };
  for (const RawTarget& r : raw) {
    ASSIGN_OR_RETURN(std::string text, CanonicalTargetText(r.text));
    ASSIGN_OR_RETURN(Target target, Target::Parse(text));
    plan.targets.push_back(
        {text, target.DeviceKey(), r.fingerprint, r.gpu, r.libs, r.gflops, r.tuned});
  }
  ASSIGN_OR_RETURN(plan.workloads, MakeWorkloads(rng, /*gemms=*/260, /*convs=*/190));
  std::lognormal_distribution<double> popularity(0, 1);
  for (size_t w = 0; w < plan.workloads.size(); ++w) {
    std::vector<bool> tuned(plan.targets.size());
    for (size_t t = 0; t < plan.targets.size(); ++t) {
      tuned[t] = Uniform(rng) < plan.targets[t].tuned_fraction;
    }
    if (std::find(tuned.begin(), tuned.end(), true) == tuned.end()) {
      tuned[0] = true;
    }
    for (size_t t = 0; t < plan.targets.size(); ++t) {
      if (tuned[t]) {
        plan.contexts.push_back(
            {w, t, TemplatesOf(plan.workloads[w], plan.targets[t]), popularity(rng)});
      } else {
        plan.untuned_pairs.push_back(w * plan.targets.size() + t);
      }
    }
  }
  // Jobs: every context once first (warm cache), then again by popularity, until the records
  // are spent; the last job is cut short.
  std::vector<size_t> order(plan.contexts.size());
  for (size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<double> weights;
  for (const Context& c : plan.contexts) {
    weights.push_back(c.popularity);
  }
  std::discrete_distribution<size_t> by_popularity(weights.begin(), weights.end());
  const std::vector<int> budgets = {32, 64, 64, 128, 128, 200, 256, 512, 1000};
  std::vector<bool> has_warm_job(plan.contexts.size(), false);
  int64_t left = records;
  for (size_t j = 0; left > 0; ++j) {
    const bool first_pass = j < order.size();
    JobPlan job{first_pass ? order[j] : by_popularity(rng), Pick(rng, budgets),
                !first_pass && Uniform(rng) < 0.15, Uniform(rng) < 0.5};
    int64_t size = job.trials + (job.finalists ? 3 : 0);
    if (size > left) {
      job.trials = static_cast<int>(left);
      job.finalists = false;
      size = left;
    }
    left -= size;
    if (!job.cold) {
      has_warm_job[job.context] = true;
    }
    plan.jobs.push_back(job);
  }
  for (size_t c = 0; c < plan.contexts.size(); ++c) {
    if (has_warm_job[c]) {
      plan.tuned.push_back(c);
    }
  }
  // Misses: shapes no job tuned.
  std::set<std::string> known;
  for (const WorkloadSpec& w : plan.workloads) {
    known.insert(w.text);
  }
  for (int m = 1; plan.unknown.size() < 64; ++m) {
    ASSIGN_OR_RETURN(WorkloadSpec w,
                     MakeWorkload(StrCat("gemm:M=", 10 + m, ",N=", 3 * m + 1, ",K=", 7 * m)));
    if (!known.contains(w.text)) {
      plan.unknown.push_back(w.text);
    }
  }
  return plan;
}

// --- Filling the log --------------------------------------------------------------------------

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

struct FillStats {
  double generate_import_secs = 0;
  double decide_secs = 0;
  int64_t decisions = 0;
};

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
