#include "codegen/templates/catalog.h"

#include <algorithm>

#include "codegen/templates/conv2d_cpu_amx.h"
#include "codegen/templates/conv2d_cpu_blocked.h"
#include "codegen/templates/conv2d_cpu_direct.h"
#include "codegen/templates/conv2d_cpu_dot.h"
#include "codegen/templates/conv2d_cpu_library.h"
#include "codegen/templates/conv2d_cpu_pointwise.h"
#include "codegen/templates/conv2d_cpu_winograd.h"
#include "codegen/templates/conv2d_cuda_tensor_core.h"
#include "codegen/templates/conv2d_gpu_direct.h"
#include "codegen/templates/conv2d_gpu_implicit_gemm.h"
#include "codegen/templates/conv2d_gpu_library.h"
#include "codegen/templates/conv2d_rocm_mfma.h"
#include "codegen/templates/gemm_cpu_amx.h"
#include "codegen/templates/gemm_cpu_blocked.h"
#include "codegen/templates/gemm_cpu_dot.h"
#include "codegen/templates/gemm_cpu_library.h"
#include "codegen/templates/gemm_cuda_mma.h"
#include "codegen/templates/gemm_cuda_wgmma.h"
#include "codegen/templates/gemm_gpu_library.h"
#include "codegen/templates/gemm_gpu_tiled.h"
#include "codegen/templates/gemm_rocm_mfma.h"
#include "codegen/templates/ukernel_templates.h"
#include "common/runtime_libs.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {

struct Catalog::State {
  std::shared_ptr<const UkernelTemplates> ukernels;
  std::vector<CatalogFamily> families;
  std::vector<const KernelTemplate*> extra;
  std::vector<const KernelTemplate*> all;  // built-in, families, extra
};

namespace {

// Every built-in template, best first within each (op, target kind): tune's own code, then the
// libraries (which apply only to targets that name them). A template of generated GPU code is
// one entry for cuda and rocm targets alike (TemplateTargets::kGpu). The *.ukernel templates
// are the catalog's own (they call its micro-kernels).
std::vector<const KernelTemplate*> BuiltInTemplates(const UkernelTemplates& ukernels) {
  return {
      &kGemmCpuBlocked,        &kGemmCpuAmx,           &kGemmCpuDot,
      &kConv2dCpuPointwise,    &kConv2dCpuDirect,      &kConv2dCpuBlocked,
      &kConv2dCpuWinograd,     &kConv2dCpuAmx,         &kConv2dCpuDot,
      &kGemmCpuOpenblas,       &kGemmCpuDnnl,          &kConv2dCpuIm2colOpenblas,
      &kConv2dCpuDnnl,         &ukernels.gemm(),       &ukernels.conv2d(),
      &kGemmCudaWgmma,         &kGemmCudaMma,          &kGemmRocmMfma,
      &kGemmRocmWmma,          &kGemmGpuTiled,         &kConv2dCudaWgmma,
      &kConv2dCudaMma,         &kConv2dRocmMfma,       &kConv2dRocmWmma,
      &kConv2dGpuImplicitGemm, &kConv2dGpuDirect,      &kGemmCudaCublas,
      &kConv2dCudaCudnn,       &kConv2dCudaCudnnGraph, &kGemmCudaCublasLt,
      &kGemmRocmRocblas,       &kGemmRocmHipblasLt,    &kConv2dRocmMiopen,
      &kConv2dRocmMiopenNhwc,
  };
}

}  // namespace

void Catalog::ListAll(State& state) {
  state.all = BuiltInTemplates(*state.ukernels);
  for (const CatalogFamily& f : state.families) {
    state.all.push_back(f.tpl.get());
  }
  state.all.insert(state.all.end(), state.extra.begin(), state.extra.end());
}

namespace {

// " (a library of cuda targets)" when `lib` is a runtime library of another kind, else "".
std::string OtherKindNote(std::string_view lib) {
  const RuntimeLibrary* runtime = FindRuntimeLibrary(lib);
  return runtime == nullptr ? std::string()
                            : StrCat("; ", lib, " is a library of ",
                                     TargetKindName(runtime->target_kind), " targets");
}

}  // namespace

Catalog::Catalog() {
  auto state = std::make_shared<State>();
  state->ukernels = std::make_shared<UkernelTemplates>(std::vector<ExternKernel>{});
  ListAll(*state);
  state_ = std::move(state);
}

const Catalog& Catalog::BuiltIn() {
  static const Catalog* const built_in = new Catalog();
  return *built_in;
}

Catalog::Catalog(std::shared_ptr<const State> state) : state_(std::move(state)) {}

Catalog Catalog::WithExternKernels(std::vector<ExternKernel> kernels) const {
  auto state = std::make_shared<State>(*state_);
  state->ukernels = std::make_shared<UkernelTemplates>(std::move(kernels));
  ListAll(*state);
  return Catalog(std::move(state));
}

absl::StatusOr<Catalog> Catalog::WithFamilies(std::vector<CatalogFamily> families) const {
  auto state = std::make_shared<State>(*state_);
  for (CatalogFamily& family : families) {
    const std::string_view name = family.tpl->name;
    for (const KernelTemplate* t : state->all) {
      if (t->name != name) {
        continue;
      }
      std::string who = "a built-in template";
      for (const CatalogFamily& other : state->families) {
        if (other.tpl.get() == t) {
          who = other.source;
        }
      }
      return absl::InvalidArgumentError(StrCat("codegen plugin ", family.source, ": family '", name,
                                               "': the name is taken by ", who));
    }
    state->families.push_back(std::move(family));
    ListAll(*state);
  }
  return Catalog(std::move(state));
}

Catalog Catalog::WithTemplates(const std::vector<const KernelTemplate*>& templates) const {
  auto state = std::make_shared<State>(*state_);
  state->extra.insert(state->extra.end(), templates.begin(), templates.end());
  ListAll(*state);
  return Catalog(std::move(state));
}

const std::vector<const KernelTemplate*>& Catalog::templates() const { return state_->all; }

std::vector<const KernelTemplate*> Catalog::TemplatesFor(const Workload& workload,
                                                         const Target& target) const {
  std::vector<const KernelTemplate*> out;
  for (const KernelTemplate* t : state_->all) {
    if (t->offered && t->op == workload.op() && TemplateBuildsFor(*t, target.kind) &&
        TemplateBuildsForm(*t, workload) && CheckTemplateShape(*t, workload).ok() &&
        (t->library.empty() || target.HasLib(t->library)) &&
        (!t->uses_extern_kernel || UkernelOf(target) != nullptr) &&
        (!t->applies || t->applies(workload, target))) {
      out.push_back(t);
    }
  }
  std::stable_partition(out.begin(), out.end(), [&](const KernelTemplate* t) {
    return t->leads && t->leads(workload, target);
  });
  return out;
}

const KernelTemplate* Catalog::FindTemplate(std::string_view name) const {
  for (const KernelTemplate* t : state_->all) {
    if (t->name == name) {
      return t;
    }
  }
  return nullptr;
}

const KernelTemplate* Catalog::FindTemplate(std::string_view name, TargetKind kind) const {
  for (const KernelTemplate* t : state_->all) {
    if (t->name == name && TemplateBuildsFor(*t, kind)) {
      return t;
    }
  }
  return FindTemplate(name);
}

const KernelTemplate* Catalog::FindTemplate(std::string_view name, TargetKind kind,
                                            OpKind op) const {
  for (const KernelTemplate* t : state_->all) {
    if (t->name == name && t->op == op && TemplateBuildsFor(*t, kind)) {
      return t;
    }
  }
  return nullptr;
}

CatalogSources Catalog::sources() const {
  CatalogSources sources;
  for (const ExternKernel& k : extern_kernels()) {
    sources.extern_kernel_manifests.push_back(k.manifest_path);
  }
  for (const CatalogFamily& f : state_->families) {
    if (std::find(sources.codegen_plugins.begin(), sources.codegen_plugins.end(), f.source) ==
        sources.codegen_plugins.end()) {
      sources.codegen_plugins.push_back(f.source);
    }
  }
  sources.extra_templates = state_->extra;
  return sources;
}

std::string Catalog::SourceOf(const KernelTemplate& tpl) const {
  for (const CatalogFamily& f : state_->families) {
    if (f.tpl.get() == &tpl) {
      return f.source;
    }
  }
  return "";
}

std::vector<CatalogFamily> Catalog::families() const { return state_->families; }

const std::vector<ExternKernel>& Catalog::extern_kernels() const {
  return state_->ukernels->kernels();
}

const ExternKernel* Catalog::FindExternKernel(std::string_view name) const {
  return state_->ukernels->Find(name);
}

const ExternKernel* Catalog::UkernelOf(const Target& target) const {
  return state_->ukernels->UkernelOf(target);
}

std::optional<TemplateLibrary> Catalog::LibraryOf(const KernelTemplate& tpl,
                                                  const Target& target) const {
  if (!tpl.library.empty()) {
    const RuntimeLibrary* lib = FindRuntimeLibrary(tpl.library);
    return TemplateLibrary{std::string(tpl.library),
                           lib != nullptr ? std::string(lib->shim_file) : std::string(tpl.library)};
  }
  if (tpl.uses_extern_kernel) {
    if (const ExternKernel* k = UkernelOf(target); k != nullptr) {
      return TemplateLibrary{k->name, k->library_file};
    }
  }
  return std::nullopt;
}

std::vector<std::string> Catalog::LibrariesFor(TargetKind kind) const {
  std::vector<std::string> libs;
  for (const RuntimeLibrary& lib : RuntimeLibraries()) {
    if (lib.target_kind == kind) {
      libs.emplace_back(lib.name);
    }
  }
  std::sort(libs.begin(), libs.end());
  if (kind == TargetKind::kLlvm) {
    for (const ExternKernel& k : extern_kernels()) {
      libs.push_back(k.name);
    }
  }
  return libs;
}

absl::Status Catalog::CheckTarget(const Target& target, std::string_view text) const {
  const std::vector<std::string> allowed = LibrariesFor(target.kind);
  for (const std::string& lib : target.libs) {
    if (std::find(allowed.begin(), allowed.end(), lib) == allowed.end()) {
      return InvalidTarget(
          text, StrCat("library '", lib, "' is not available for ", TargetKindName(target.kind),
                       " targets (accepted: ", Join(allowed, ", "), ")", OtherKindNote(lib)));
    }
  }
  std::vector<std::string> ukernels;
  for (const std::string& lib : target.libs) {
    if (FindExternKernel(lib) != nullptr) {
      ukernels.push_back(lib);
    }
  }
  if (ukernels.size() > 1) {
    return InvalidTarget(text, StrCat("-libs names ", ukernels.size(), " micro-kernel libraries (",
                                      Join(ukernels, ", "), "); a target may name one"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Target> Catalog::ParseTarget(std::string_view text) const {
  ASSIGN_OR_RETURN(Target target, Target::Parse(text));
  RETURN_IF_ERROR(CheckTarget(target, text));
  return target;
}

}  // namespace tune
