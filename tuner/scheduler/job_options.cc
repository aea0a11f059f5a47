#include "tuner/scheduler/job_options.h"

#include <algorithm>
#include <set>

#include "codegen/dtype_support.h"
#include "codegen/llvm/cpu_names.h"
#include "common/gpu_arch.h"
#include "common/shape_range.h"
#include "common/status.h"
#include "common/strings.h"
#include "proto/convert.h"
#include "search/strategy.h"

namespace tune::tuner {
namespace {

absl::Status Invalid(std::string_view field, std::string_view problem) {
  return absl::InvalidArgumentError(StrCat("spec.", field, ": ", problem));
}

std::string TemplateNames(const std::vector<const KernelTemplate*>& templates) {
  std::vector<std::string> names;
  for (const KernelTemplate* t : templates) {
    names.emplace_back(t->name);
  }
  return names.empty() ? "none" : Join(names, ", ");
}

// Why no template applies to a workload whose dtype or layout templates of its op and target
// exist for, but not that one: "no template builds dtype=bf16, layout=NT for gemm on 'cuda
// -arch=sm_90' yet; templates there build dtype=f32 in layout=NN". Empty when the op itself has
// no template there.
std::string FormRefusal(const Catalog& catalog, const Workload& workload, const Target& target) {
  std::vector<std::string> form;
  if (workload.dtype() != Dtype::kF32) {
    form.push_back(StrCat("dtype=", DtypeName(workload.dtype())));
  }
  if (workload.op() == OpKind::kGemm && workload.gemm().layout == GemmLayout::kNT) {
    form.push_back("layout=NT");
  }
  if (workload.op() == OpKind::kConv2d && workload.conv2d().nhwc) {
    form.push_back("layout=NHWC");
  }
  if (workload.requantizes()) {
    form.push_back("epilogue=requant");
  }
  if (form.empty()) {
    return "";
  }
  DtypeSet dtypes;
  std::set<std::string> layouts;
  bool requant = false;
  for (const KernelTemplate* t : catalog.templates()) {
    if (t->op == workload.op() && t->offered && TemplateBuildsFor(*t, target.kind) &&
        (t->library.empty() || target.HasLib(t->library))) {
      dtypes = dtypes | t->dtypes;
      layouts.insert(TemplateLayoutsText(*t));
      requant = requant || t->requant;
    }
  }
  if (dtypes.empty()) {
    return "";
  }
  return StrCat("no template builds ", Join(form, ", "), " for ", OpKindName(workload.op()),
                " on '", target.ToString(), "' yet; templates there build dtype=", dtypes.Names(),
                " in ", Join(std::vector<std::string>(layouts.begin(), layouts.end()), " or "),
                workload.requantizes() && !requant ? ", none with epilogue=requant" : "");
}

}  // namespace

absl::StatusOr<std::vector<const KernelTemplate*>> ResolveTemplates(
    const Catalog& catalog, const Workload& workload, const Target& target,
    const std::vector<std::string>& names) {
  if (target.kind != TargetKind::kLlvm) {
    if (absl::StatusOr<GpuArch> arch = GpuArchFor(target); !arch.ok()) {
      return Invalid("target", std::string(arch.status().message()));
    }
  }
  if (absl::Status runs = CheckDtypeOnTarget(workload, target); !runs.ok()) {
    return Invalid("workload", std::string(runs.message()));
  }
  std::vector<const KernelTemplate*> applicable = catalog.TemplatesFor(workload, target);
  if (applicable.empty() && workload.prepared_weights() && target.kind != TargetKind::kLlvm) {
    return Invalid("workload",
                   StrCat("weights=prepared is built for llvm (CPU) targets, not '",
                          target.ToString(), "'; accepted: weights=canonical (the default)"));
  }
  if (applicable.empty()) {
    if (std::string refusal = FormRefusal(catalog, workload, target); !refusal.empty()) {
      return Invalid("workload", refusal);
    }
    return Invalid("target", StrCat("no template for ", OpKindName(workload.op()), " on '",
                                    target.ToString(), "'"));
  }
  if (names.empty()) {
    return applicable;
  }
  std::vector<const KernelTemplate*> chosen;
  for (const std::string& name : names) {
    const KernelTemplate* found = nullptr;
    for (const KernelTemplate* t : applicable) {
      if (t->name == name) {
        found = t;
      }
    }
    if (const KernelTemplate* named = catalog.FindTemplate(name, target.kind, workload.op());
        found == nullptr && named != nullptr && !named->offered) {
      found = named;  // a template a job gets only by naming it
    }
    if (found == nullptr) {
      // A template of this op and target that refuses the workload's layout or shape says why.
      if (const KernelTemplate* known = catalog.FindTemplate(name, target.kind);
          known != nullptr && known->op == workload.op() &&
          TemplateBuildsFor(*known, target.kind)) {
        absl::Status fits = CheckTemplateForm(*known, workload);
        if (fits.ok()) {
          fits = CheckTemplateShape(*known, workload);
        }
        if (!fits.ok()) {
          return Invalid("templates", StrCat("'", name, "' does not apply: ", fits.message(),
                                             "; accepted: ", TemplateNames(applicable)));
        }
      }
      return Invalid("templates", StrCat("'", name, "' is not a template for ",
                                         OpKindName(workload.op()), " on '", target.ToString(),
                                         "'; accepted: ", TemplateNames(applicable)));
    }
    if (std::find(chosen.begin(), chosen.end(), found) == chosen.end()) {
      chosen.push_back(found);
    }
  }
  return chosen;
}

namespace {

// A model job: each task is checked as the job of one workload would be (its templates must
// apply), then the model's own rules: distinct workloads, positive weights, at least a trial
// per task.
absl::StatusOr<ValidatedJob> ValidateModelJobSpec(const v1::JobSpec& spec,
                                                  const ValidationOptions& options) {
  if (!spec.workload().empty()) {
    return Invalid("workload",
                   "is set together with spec.tasks; a job tunes one workload or a model's "
                   "list of tasks, not both");
  }
  if (spec.tasks_size() > static_cast<int>(kMaxJobTasks)) {
    return Invalid(
        "tasks", StrCat(spec.tasks_size(), " workloads; a model job holds at most ", kMaxJobTasks));
  }
  std::vector<JobTask> tasks;
  std::set<std::string> seen;
  ValidatedJob first;
  for (int i = 0; i < spec.tasks_size(); ++i) {
    const v1::WorkloadTask& task = spec.tasks(i);
    const std::string field = StrCat("tasks[", i, "]");
    v1::JobSpec single = spec;
    single.clear_tasks();
    single.set_workload(task.workload());
    single.set_trials(1);
    absl::StatusOr<ValidatedJob> valid = ValidateJobSpec(single, options);
    if (!valid.ok()) {
      std::string message(valid.status().message());
      if (message.starts_with("spec.workload")) {
        message = StrCat(field, ".workload", message.substr(strlen("spec.workload")));
      } else {
        message = StrCat(message, " (", field, ": ", task.workload(), ")");
      }
      return absl::InvalidArgumentError(StrCat("spec.", message));
    }
    const double weight = task.weight() == 0 ? 1 : task.weight();
    if (!std::isfinite(weight) || weight < 0) {
      return Invalid(StrCat(field, ".weight"),
                     StrCat(task.weight(),
                            " is not a positive number; expected how many times one inference "
                            "runs the workload, e.g. 3 or 0.5"));
    }
    if (!seen.insert(valid->spec.workload).second) {
      return Invalid(StrCat(field, ".workload"),
                     StrCat(valid->spec.workload,
                            " is listed twice; list it once with the sum of the weights"));
    }
    tasks.push_back(JobTask{valid->spec.workload, weight, 0});
    if (i == 0) {
      first = *std::move(valid);
    }
  }
  if (spec.trials() < spec.tasks_size() || spec.trials() > kMaxTrials) {
    return Invalid("trials", StrCat(spec.trials(), " is out of range; expected ", spec.tasks_size(),
                                    " (one per workload) to ", kMaxTrials));
  }
  ValidatedJob job = std::move(first);
  job.spec.workload.clear();
  job.spec.tasks = std::move(tasks);
  job.spec.trials = spec.trials();
  JobSpec checked = job.spec;
  RETURN_IF_ERROR(CanonicalizeJobSpec(checked));
  job.spec.workload = checked.workload;
  return job;
}

// A range job: a model job of the range's tuned sizes and of the midpoints between them
// (ShapeRange::TunedSizes, Midpoints; ModelJob holds a midpoint back until the sizes around it
// chose different configs), each weighted by the largest size's work over its own, so that the
// allocator weighs the sizes' relative speeds alike rather than favouring the largest.
absl::StatusOr<ValidatedJob> ValidateRangeJobSpec(const v1::JobSpec& spec,
                                                  const ValidationOptions& options) {
  absl::StatusOr<ShapeRange> range = ShapeRange::Parse(spec.workload());
  if (!range.ok()) {
    return Invalid("workload", std::string(range.status().message()));
  }
  const std::vector<int64_t> tuned = range->TunedSizes();
  if (spec.trials() < static_cast<int>(tuned.size()) || spec.trials() > kMaxTrials) {
    std::vector<std::string> names;
    for (int64_t size : tuned) {
      names.push_back(StrCat(size));
    }
    return Invalid("trials", StrCat(spec.trials(), " is out of range for the range's ",
                                    tuned.size(), " sizes (", range->dim(), "=", Join(names, ","),
                                    "); expected one trial per size or more: ", tuned.size(),
                                    " to ", kMaxTrials));
  }
  std::vector<int64_t> sizes = tuned;
  for (int64_t mid : range->Midpoints()) {
    sizes.push_back(mid);
  }
  std::sort(sizes.begin(), sizes.end());
  v1::JobSpec model = spec;
  model.clear_workload();
  // Checked as a model job with a trial per task; a midpoint held back may get none.
  model.set_trials(std::max(spec.trials(), static_cast<int>(sizes.size())));
  const double largest = range->At(range->hi()).Flops();
  for (int64_t size : sizes) {
    v1::WorkloadTask* task = model.add_tasks();
    task->set_workload(range->At(size).ToString());
    task->set_weight(std::min(largest / range->At(size).Flops(), 1e9));
  }
  ASSIGN_OR_RETURN(ValidatedJob job, ValidateModelJobSpec(model, options));
  job.spec.trials = spec.trials();
  job.spec.range = range->ToString();
  return job;
}

}  // namespace

absl::StatusOr<ValidatedJob> ValidateJobSpec(const v1::JobSpec& spec,
                                             const ValidationOptions& options) {
  if (spec.tasks_size() > 0) {
    return ValidateModelJobSpec(spec, options);
  }
  if (ShapeRange::IsRange(spec.workload())) {
    return ValidateRangeJobSpec(spec, options);
  }
  if (spec.workload().empty()) {
    return Invalid("workload",
                   "is empty; expected e.g. 'gemm:M=512,N=512,K=512' or "
                   "'conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1'");
  }
  absl::StatusOr<Workload> workload = Workload::Parse(spec.workload());
  if (!workload.ok()) {
    return Invalid("workload", std::string(workload.status().message()));
  }

  if (spec.target().empty()) {
    return Invalid("target", "is empty; expected e.g. 'llvm -mcpu=native -threads=1'");
  }
  absl::StatusOr<Target> parsed_target = options.catalog.ParseTarget(spec.target());
  if (!parsed_target.ok()) {
    return Invalid("target", std::string(parsed_target.status().message()));
  }
  // A CPU that LLVM does not know would match no worker's device key: its job would wait
  // forever. (GPU names are checked with the templates, GpuArchFor.)
  if (parsed_target->kind == TargetKind::kLlvm) {
    if (absl::Status known = CheckX86CpuName(parsed_target->cpu); !known.ok()) {
      return Invalid("target", std::string(known.message()));
    }
  }
  // "native" means the daemon's host: workers on other CPUs register other device keys.
  Target target = parsed_target->Resolved();

  if (spec.trials() < 1 || spec.trials() > kMaxTrials) {
    return Invalid("trials", StrCat(spec.trials(), " is out of range; expected 1 to ", kMaxTrials));
  }
  std::string strategy = spec.strategy().empty() ? std::string(kDefaultStrategy) : spec.strategy();
  std::vector<std::string> strategies = StrategyNames();
  if (std::find(strategies.begin(), strategies.end(), strategy) == strategies.end()) {
    return Invalid("strategy",
                   StrCat("'", strategy, "' is not known; accepted: ", Join(strategies, ", ")));
  }
  if (spec.priority() < kMinPriority || spec.priority() > kMaxPriority) {
    return Invalid("priority", StrCat(spec.priority(), " is out of range; expected ", kMinPriority,
                                      " to ", kMaxPriority));
  }
  absl::StatusOr<TimingOptions> timing = TimingOptionsFromProto(spec.timing());
  if (!timing.ok()) {
    return Invalid("timing", std::string(timing.status().message()));
  }
  if (spec.early_stopping() < 0) {
    return Invalid("early_stopping",
                   StrCat(spec.early_stopping(), " is negative; expected 0 (never) or more"));
  }

  ValidatedJob job;
  job.workload = *workload;
  job.target = target;
  job.spec.templates.assign(spec.templates().begin(), spec.templates().end());
  job.spec.early_stopping = spec.early_stopping();
  job.spec.name = spec.name();
  job.spec.transfer = !spec.no_transfer();
  ASSIGN_OR_RETURN(job.templates,
                   ResolveTemplates(options.catalog, *workload, target, job.spec.templates));
  job.spec.workload = workload->ToString();
  job.spec.target = target.ToString();
  job.spec.device_key = target.DeviceKey();
  job.spec.strategy = strategy;
  job.spec.trials = spec.trials();
  job.spec.priority = spec.priority();
  job.spec.seed = spec.seed() == 0 ? 1 : spec.seed();
  job.spec.timing = *timing;
  job.spec.timing.seed = timing->seed == 0 ? 1 : timing->seed;
  // The log's own checks (the same rules, worded for its fields) as a last line of defence.
  JobSpec checked = job.spec;
  RETURN_IF_ERROR(CanonicalizeJobSpec(checked));
  return job;
}

}  // namespace tune::tuner
