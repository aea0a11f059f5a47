#include "bench/best_query_plan.h"

#include <algorithm>
#include <set>

#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/target.h"
#include "common/workload.h"

namespace tune::bench {
namespace {

// Typical workloads and targets whose spaces give a template's knobs.
constexpr std::string_view kGemm = "gemm:M=1024,N=1024,K=1024";
constexpr std::string_view kConv3x3 = "conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1";
constexpr std::string_view kConv1x1 = "conv2d:N=1,C=256,H=14,W=14,K=256,R=1,S=1,stride=1,pad=0";
constexpr std::string_view kConvBlocked =
    "conv2d:N=1,C=256,H=14,W=14,K=256,R=3,S=3,stride=1,pad=1,layout=NCHW16c";
constexpr std::string_view kCpu = "llvm -mcpu=sapphirerapids -threads=1";
constexpr std::string_view kCpuLibs = "llvm -mcpu=sapphirerapids -threads=8 -libs=openblas,dnnl";
constexpr std::string_view kGpu = "cuda -arch=sm_90 -libs=cublas,cudnn";

// Template `name` of tune's table: its name, version and the knobs of its space for `workload`
// on `target`, with the benchmark's weight and library description.
absl::StatusOr<TemplateSpec> FromTable(std::string_view name, std::string_view workload,
                                       std::string_view target, double weight,
                                       std::string_view library_info = {}) {
  ASSIGN_OR_RETURN(Workload w, Workload::Parse(workload));
  ASSIGN_OR_RETURN(Target t, Target::Parse(target));
  const KernelTemplate* tpl = Catalog::BuiltIn().FindTemplate(name, t.kind);
  if (tpl == nullptr || !TemplateBuildsFor(*tpl, t.kind)) {
    return absl::NotFoundError(StrCat("template ", name, " is not in tune's table for ",
                                      TargetKindName(t.kind), " targets"));
  }
  return TemplateSpec{tpl->name, tpl->version, tpl->space(w, t).knobs(), weight, library_info};
}

absl::StatusOr<std::unique_ptr<const TemplateSpecs>> MakeTemplateSpecs() {
  constexpr std::string_view kOpenblas = "OpenBLAS 0.3.21 (SkylakeX kernels)";
  constexpr std::string_view kDnnl = "oneDNN v3.5.3 (avx512_core)";
  auto k = std::make_unique<TemplateSpecs>();
  ASSIGN_OR_RETURN(k->gemm_blocked, FromTable("gemm.cpu.blocked", kGemm, kCpu, 1.0));
  ASSIGN_OR_RETURN(k->gemm_openblas,
                   FromTable("gemm.cpu.openblas", kGemm, kCpuLibs, 0.02, kOpenblas));
  ASSIGN_OR_RETURN(k->gemm_dnnl, FromTable("gemm.cpu.dnnl", kGemm, kCpuLibs, 0.03, kDnnl));
  ASSIGN_OR_RETURN(k->conv_direct, FromTable("conv2d.cpu.direct", kConv3x3, kCpu, 1.0));
  ASSIGN_OR_RETURN(k->conv_blocked, FromTable("conv2d.cpu.blocked", kConvBlocked, kCpu, 1.0));
  ASSIGN_OR_RETURN(k->conv_winograd, FromTable("conv2d.cpu.winograd", kConv3x3, kCpu, 0.6));
  ASSIGN_OR_RETURN(k->conv_pointwise, FromTable("conv2d.cpu.pointwise", kConv1x1, kCpu, 0.6));
  ASSIGN_OR_RETURN(k->conv_im2col,
                   FromTable("conv2d.cpu.im2col_openblas", kConv3x3, kCpuLibs, 0.03, kOpenblas));
  ASSIGN_OR_RETURN(k->conv_dnnl, FromTable("conv2d.cpu.dnnl", kConv3x3, kCpuLibs, 0.03, kDnnl));
  ASSIGN_OR_RETURN(k->gemm_gpu_tiled, FromTable("gemm.gpu.tiled", kGemm, kGpu, 1.0));
  ASSIGN_OR_RETURN(k->gemm_cublas,
                   FromTable("gemm.cuda.cublas", kGemm, kGpu, 0.02, "cuBLAS 12.4.5"));
  ASSIGN_OR_RETURN(k->conv_gpu_direct, FromTable("conv2d.gpu.direct", kConv3x3, kGpu, 1.0));
  ASSIGN_OR_RETURN(k->conv_gpu_implicit,
                   FromTable("conv2d.gpu.implicit_gemm", kConv3x3, kGpu, 1.0));
  ASSIGN_OR_RETURN(k->conv_cudnn,
                   FromTable("conv2d.cuda.cudnn", kConv3x3, kGpu, 0.05, "cuDNN 9.1.0"));
  return k;
}

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

std::vector<const TemplateSpec*> TemplatesOf(const TemplateSpecs& k, const WorkloadSpec& w,
                                             const TargetSpec& t) {
  std::vector<const TemplateSpec*> out;
  if (t.gpu) {
    if (w.gemm) {
      out = {&k.gemm_gpu_tiled, &k.gemm_cublas};
    } else {
      out = {&k.conv_gpu_direct, &k.conv_gpu_implicit, &k.conv_cudnn};
    }
    return out;
  }
  if (w.gemm) {
    out = {&k.gemm_blocked};
    if (t.libs) {
      out.push_back(&k.gemm_openblas);
      out.push_back(&k.gemm_dnnl);
    }
    return out;
  }
  if (w.blocked) {
    out = {&k.conv_blocked};
    if (t.libs) {
      out.push_back(&k.conv_dnnl);
    }
    return out;
  }
  out = {&k.conv_direct};
  if (w.pointwise) {
    out.insert(out.begin(), &k.conv_pointwise);
  }
  if (w.winograd) {
    out.push_back(&k.conv_winograd);
  }
  if (t.libs) {
    out.push_back(&k.conv_im2col);
    out.push_back(&k.conv_dnnl);
  }
  return out;
}

}  // namespace

absl::StatusOr<Plan> MakePlan(uint64_t seed, int64_t records) {
  Plan plan;
  plan.records = records;
  ASSIGN_OR_RETURN(plan.templates, MakeTemplateSpecs());
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
        plan.contexts.push_back({w, t,
                                 TemplatesOf(*plan.templates, plan.workloads[w], plan.targets[t]),
                                 popularity(rng)});
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

}  // namespace tune::bench
