#include "codegen/compiler.h"

#include <filesystem>
#include <iterator>
#include <map>
#include <set>

#include "codegen/c_header.h"
#include "codegen/dtype_support.h"
#include "codegen/gpu_library.h"
#include "codegen/ir/printer.h"
#include "codegen/llvm/cpu_backend.h"
#include "codegen/llvm/gpu_backend.h"
#include "common/artifact_hash.h"
#include "common/extern_kernels.h"
#include "common/files.h"
#include "common/logging.h"
#include "common/runtime_libs.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

namespace fs = std::filesystem;

// Host code: for the target's CPU, or for generic x86-64 when the target is a GPU (the host
// code of a GPU library candidate runs on whichever host the GPU is in).
CpuCodegenOptions CodegenOptions(const Target& target) {
  CpuCodegenOptions options;
  options.cpu = target.kind == TargetKind::kLlvm ? target.cpu : "x86-64";
  options.threads = target.threads;
  options.bind = target.bind;
  return options;
}

// The host code of a library template on a GPU target (cuBLAS, cuDNN, rocBLAS, MIOpen): a call
// of the library's shim with device pointers and the stream, built for any x86-64 CPU (GPU
// targets name no host CPU).
bool IsGpuLibraryTemplate(const KernelTemplate& tpl, const Target& target) {
  return !tpl.library.empty() && target.kind != TargetKind::kLlvm;
}

CpuCodegenOptions GpuLibraryHostOptions() {
  CpuCodegenOptions options;
  options.cpu = "x86-64";
  options.threads = 1;
  return options;
}

struct Linked {
  std::string shared_object;
  std::vector<std::string> needed_libs;  // runtime libraries the linker added (libgomp.so.1)
};

// Objects -> shared library bytes, through a scratch directory. A non-empty `soname` becomes
// the library's DT_SONAME, so that programs linked against it record that name (not a path).
// The runtime libraries it needs are the linker's decision (LinkSharedObject), made once, from
// the objects' undefined symbols. Every symbol of `required` must be defined by the result
// (objects from codegen plugins are checked so): InvalidArgument naming the missing one.
absl::StatusOr<Linked> LinkInScratch(const std::vector<std::string>& objects,
                                     const std::string& soname = "",
                                     const std::vector<std::string>& link_args = {},
                                     const std::vector<std::string>& required = {}) {
  ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("tune-build-"));
  const std::string so_path = dir.File("kernels.so");
  std::vector<std::string> object_paths;
  for (size_t i = 0; i < objects.size(); ++i) {
    object_paths.push_back(dir.File(StrCat("kernels", i, ".o")));
    RETURN_IF_ERROR(WriteFileAtomically(object_paths.back(), objects[i]));
  }
  std::vector<std::string> options;
  if (!soname.empty()) {
    options.push_back(StrCat("--soname=", soname));
  }
  options.insert(options.end(), link_args.begin(), link_args.end());
  Linked linked;
  RETURN_IF_ERROR(LinkSharedObject(object_paths, options, so_path, &linked.needed_libs));
  for (const std::string& symbol : required) {
    ASSIGN_OR_RETURN(bool defined, ElfDefinesSymbol(so_path, symbol));
    if (!defined) {
      return absl::InvalidArgumentError(
          StrCat("the object built for ", symbol, " does not define the function ", symbol));
    }
  }
  ASSIGN_OR_RETURN(linked.shared_object, ReadFile(so_path));
  return linked;
}

// OK when a recorded choice can be built today: its template still exists, builds the workload
// for the target (and is `required_template` when one was asked for), and its config is a
// point of today's space. Otherwise the reason.
absl::Status CheckRecorded(const Catalog& catalog, const KernelChoice& recorded,
                           const Workload& workload, const Target& target,
                           std::string_view required_template) {
  const KernelTemplate* tpl = catalog.FindTemplate(recorded.template_name, target.kind);
  if (tpl == nullptr) {
    return absl::NotFoundError(
        StrCat("template '", recorded.template_name, "' is unknown to this build"));
  }
  if (tpl->op != workload.op() || !TemplateBuildsFor(*tpl, target.kind) ||
      (!required_template.empty() && tpl->name != required_template)) {
    return absl::InvalidArgumentError(
        StrCat("template '", recorded.template_name, "' does not apply"));
  }
  return tpl->space(workload, target).Validate(recorded.config);
}

absl::Status CheckFunctionName(std::string_view func_name) {
  if (!IsCIdentifier(func_name)) {
    return absl::InvalidArgumentError(
        StrCat("function name '", func_name, "' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)"));
  }
  return absl::OkStatus();
}

// The fields of an artifact that come from its template and config.
void Describe(const KernelTemplate& tpl, const Workload& workload, const Config& config,
              std::string_view func_name, Artifact& artifact) {
  artifact.entry_symbol = std::string(func_name);
  artifact.hash = ArtifactHash(artifact.format, artifact.code);
  artifact.template_name = std::string(tpl.name);
  artifact.template_version = tpl.version;
  artifact.config = ConfigToString(config);
  artifact.tolerance_scale = TemplateTolerance(tpl, workload, config);
}

// Writes a built library's code to `so_path` and its C header (one entry per kernel of
// `result`, with its launch geometry when `launches` has one) to `header_path`. Nothing is left
// at `so_path` when the header cannot be written.
absl::Status WriteLibraryFiles(const LibraryResult& result, const Target& target,
                               const std::string& code,
                               const std::map<std::string, GpuLaunch>& launches,
                               const std::string& so_path, const std::string& header_path) {
  HeaderSpec spec;
  spec.guard_name = fs::path(header_path).filename().string();
  spec.library_name = fs::path(so_path).filename().string();
  spec.target = target;
  spec.needed_libs = result.needed_libs;
  spec.external_libs = result.external_libs;
  for (const LibraryKernel& k : result.kernels) {
    HeaderKernel header{k.func_name,
                        k.workload,
                        k.choice.template_name,
                        k.choice.template_version,
                        ConfigToString(k.choice.config),
                        k.origin};
    if (auto it = launches.find(k.func_name); it != launches.end()) {
      header.launch = it->second;
    }
    spec.kernels.push_back(std::move(header));
  }
  for (const LibraryRange& r : result.ranges) {
    HeaderRange range{r.func_name, r.range, {}, r.measured};
    for (const LibraryKernel& k : r.kernels) {
      range.kernels.push_back(HeaderKernel{k.func_name, k.workload, k.choice.template_name,
                                           k.choice.template_version,
                                           ConfigToString(k.choice.config), k.origin});
    }
    spec.ranges.push_back(std::move(range));
  }
  RETURN_IF_ERROR(WriteFileAtomically(so_path, code));
  absl::Status header = WriteFileAtomically(header_path, RenderCHeader(spec));
  if (!header.ok()) {
    std::error_code ec;
    fs::remove(so_path, ec);
  }
  return header;
}

}  // namespace

Compiler::Compiler(Catalog catalog, Target target, BestConfigLookup lookup, LowerOptions lower)
    : catalog_(std::move(catalog)),
      target_(std::move(target)),
      lookup_(std::move(lookup)),
      lower_(std::move(lower)) {}

absl::StatusOr<LoweredKernel> Compiler::Lower(const Workload& workload, const KernelTemplate& tpl,
                                              const Config& config,
                                              std::string_view func_name) const {
  if (tpl.build_object) {
    return absl::NotFoundError(StrCat(tpl.name, " is compiled by its codegen plugin"));
  }
  RETURN_IF_ERROR(CheckFunctionName(func_name));
  LoweredKernel kernel{&tpl, workload, config, std::string(func_name)};
  ASSIGN_OR_RETURN(kernel.source, tpl.build(workload, target_, config, func_name));
  ASSIGN_OR_RETURN(ir::LoweredFunc func, tune::Lower(kernel.source, lower_));
  kernel.text = ir::ToText(func);
  kernel.funcs.push_back(std::move(func));
  if (!workload.prepared_weights()) {
    return kernel;
  }
  // Prepared weights: the preparation is part of the artifact (the kernel's IR alone may be the
  // same as for canonical weights).
  ASSIGN_OR_RETURN(PreparedWeights prepared,
                   PrepareWeights(tpl, workload, target_, config, func_name));
  ASSIGN_OR_RETURN(ir::LoweredFunc preparation, tune::Lower(std::move(prepared.func), lower_));
  StrAppend(&kernel.text, "\n", ir::ToText(preparation));
  kernel.funcs.push_back(std::move(preparation));
  kernel.constants.push_back({PreparedFloatsName(func_name), prepared.floats});
  StrAppend(&kernel.text, "\nconst int64 ", kernel.constants.back().name, " = ",
            kernel.constants.back().value, "\n");
  return kernel;
}

absl::StatusOr<Artifact> Compiler::Emit(const LoweredKernel& kernel) const {
  TUNE_CHECK(kernel.tpl != nullptr && !kernel.funcs.empty()) << "Emit needs a lowered kernel";
  const KernelTemplate& tpl = *kernel.tpl;
  const ir::LoweredFunc& func = kernel.funcs.front();
  Artifact artifact;
  artifact.external_libs = func.external_libs;
  if (target_.kind != TargetKind::kLlvm && HasGpuLoops(func.body)) {
    GpuCodegenOptions options;
    options.target = target_;
    ASSIGN_OR_RETURN(GpuModule module, EmitGpuModule({func}, options));
    artifact.format = module.format;
    artifact.code = std::move(module.code);
    artifact.launch = module.kernels.front().launch;
    artifact.llvm_ir = std::move(module.llvm_ir);
    Describe(tpl, kernel.workload, kernel.config, kernel.func_name, artifact);
    return artifact;
  }
  const CpuCodegenOptions options =
      IsGpuLibraryTemplate(tpl, target_) ? GpuLibraryHostOptions() : CodegenOptions(target_);
  ASSIGN_OR_RETURN(std::string object,
                   EmitCpuObject(kernel.funcs, options, &artifact.llvm_ir, kernel.constants));
  ASSIGN_OR_RETURN(Linked linked, LinkInScratch({object}));
  artifact.format = CodeFormat::kSharedObject;
  artifact.code = std::move(linked.shared_object);
  artifact.needed_libs = std::move(linked.needed_libs);
  Describe(tpl, kernel.workload, kernel.config, kernel.func_name, artifact);
  return artifact;
}

absl::StatusOr<Artifact> Compiler::BuildArtifact(const Workload& workload,
                                                 const KernelTemplate& tpl, const Config& config,
                                                 std::string_view func_name) const {
  if (!tpl.build_object) {
    ASSIGN_OR_RETURN(LoweredKernel kernel, Lower(workload, tpl, config, func_name));
    return Emit(kernel);
  }
  // A codegen plugin's family: its object, linked and checked like ours.
  RETURN_IF_ERROR(CheckTemplateForm(tpl, workload));
  RETURN_IF_ERROR(CheckFunctionName(func_name));
  ASSIGN_OR_RETURN(std::string object, tpl.build_object(workload, target_, config, func_name));
  ASSIGN_OR_RETURN(Linked linked, LinkInScratch({object}, "", {}, {std::string(func_name)}));
  Artifact artifact;
  artifact.format = CodeFormat::kSharedObject;
  artifact.code = std::move(linked.shared_object);
  artifact.needed_libs = std::move(linked.needed_libs);
  Describe(tpl, workload, config, func_name, artifact);
  return artifact;
}

absl::StatusOr<KernelChoice> Compiler::Choose(const KernelRequest& request, std::string* origin) {
  const Workload& workload = request.workload;
  RETURN_IF_ERROR(CheckDtypeOnTarget(workload, target_));
  const KernelTemplate* tpl = nullptr;
  if (!request.template_name.empty()) {
    tpl = catalog_.FindTemplate(request.template_name, target_.kind);
    if (tpl == nullptr || tpl->op != workload.op() || !TemplateBuildsFor(*tpl, target_.kind)) {
      return absl::InvalidArgumentError(StrCat("template '", request.template_name,
                                               "' does not build '", workload.ToString(),
                                               "' for target '", target_.ToString(), "'"));
    }
    RETURN_IF_ERROR(CheckTemplateForm(*tpl, workload));
  } else {
    std::vector<const KernelTemplate*> candidates = catalog_.TemplatesFor(workload, target_);
    if (candidates.empty() && workload.prepared_weights() && target_.kind != TargetKind::kLlvm) {
      return absl::InvalidArgumentError(StrCat("'", workload.ToString(),
                                               "': weights=prepared is built for llvm (CPU) "
                                               "targets, not '",
                                               target_.ToString(), "'; use weights=canonical"));
    }
    if (candidates.empty()) {
      return absl::InvalidArgumentError(StrCat("no template builds '", workload.ToString(),
                                               "' for target '", target_.ToString(), "'"));
    }
    tpl = candidates.front();
  }
  auto say = [&](std::string text) {
    if (origin != nullptr) {
      *origin = std::move(text);
    }
  };

  if (request.config.has_value()) {
    absl::Status valid = tpl->space(workload, target_).Validate(*request.config);
    if (!valid.ok()) {
      return absl::InvalidArgumentError(StrCat("config ", ConfigToString(*request.config), " for '",
                                               workload.ToString(),
                                               "': ", std::string(valid.message())));
    }
    say("given config");
    return KernelChoice{std::string(tpl->name), tpl->version, *request.config, false};
  }

  std::string why = "no tuning log";
  if (lookup_) {
    ASSIGN_OR_RETURN(std::optional<KernelChoice> recorded,
                     lookup_(workload, target_, request.template_name));
    if (!recorded.has_value()) {
      why = StrCat("no record for '", target_.ToString(), "' nor for device ", target_.DeviceKey(),
                   " in the tuning log");
    } else {
      absl::Status usable =
          CheckRecorded(catalog_, *recorded, workload, target_, request.template_name);
      if (usable.ok()) {
        const KernelTemplate* rec_tpl =
            catalog_.FindTemplate(recorded->template_name, target_.kind);
        std::string text = "the tuning log";
        if (!recorded->note.empty()) {
          StrAppend(&text, ", ", recorded->note);
        }
        if (recorded->template_version != rec_tpl->version) {
          StrAppend(&text, " (measured with template version ", recorded->template_version,
                    ", built with version ", rec_tpl->version, ")");
        }
        say(std::move(text));
        return KernelChoice{std::string(rec_tpl->name),
                            rec_tpl->version,
                            recorded->config,
                            true,
                            recorded->note,
                            recorded->secs};
      }
      why = StrCat("the recorded config ", recorded->template_name, " ",
                   ConfigToString(recorded->config), " is stale: ", std::string(usable.message()));
      Logger("codegen")->warn("{}: {}; using the default config of {}", workload.ToString(), why,
                              tpl->name);
    }
  }
  say(StrCat("default config (", why, ")"));
  return KernelChoice{std::string(tpl->name), tpl->version, tpl->default_config(workload, target_),
                      false};
}

absl::StatusOr<LibraryResult> Compiler::BuildLibrary(const std::vector<KernelRequest>& requests,
                                                     const std::string& so_path,
                                                     const std::string& header_path) {
  if (target_.kind != TargetKind::kLlvm) {
    // cuda / rocm: device code plus host stubs (codegen/gpu_library.h).
    return BuildGpuLibrary(requests, so_path, header_path);
  }
  if (requests.empty()) {
    return absl::InvalidArgumentError("no kernels requested: give at least one workload");
  }
  ASSIGN_OR_RETURN(ExpandedRequests expanded, ExpandRanges(requests));
  LibraryResult result;
  result.so_path = so_path;
  result.header_path = header_path;
  std::set<std::string> names;  // the kernels' symbols, and their preparations'
  for (const RangeEntry& entry : expanded.entries) {
    names.insert(entry.func_name);
  }
  std::vector<ir::LoweredFunc> funcs;
  std::vector<ExportedConstant> constants;
  std::vector<std::string> plugin_objects;  // from codegen plugins, one per kernel
  std::vector<std::string> plugin_symbols;
  for (const KernelRequest& request : expanded.requests) {
    LibraryKernel kernel{
        request.func_name.empty() ? DefaultFunctionName(request.workload) : request.func_name,
        request.workload, KernelChoice{}, ""};
    std::vector<std::string> symbols = {kernel.func_name};
    if (request.workload.prepared_weights()) {
      symbols.push_back(PrepareFunctionName(kernel.func_name));
      symbols.push_back(PreparedFloatsName(kernel.func_name));
    }
    for (const std::string& symbol : symbols) {
      if (!names.insert(symbol).second) {
        return absl::InvalidArgumentError(
            StrCat("function name '", symbol,
                   "' is used twice (a kernel's, or the _prepare or _prepared_floats of one "
                   "with weights=prepared): give each workload a distinct name"));
      }
    }
    ASSIGN_OR_RETURN(kernel.choice, Choose(request, &kernel.origin));
    const KernelTemplate* tpl = catalog_.FindTemplate(kernel.choice.template_name, target_.kind);
    TUNE_CHECK(tpl != nullptr);
    if (tpl->build_object) {
      ASSIGN_OR_RETURN(
          std::string object,
          tpl->build_object(request.workload, target_, kernel.choice.config, kernel.func_name));
      plugin_objects.push_back(std::move(object));
      plugin_symbols.push_back(kernel.func_name);
    } else {
      ASSIGN_OR_RETURN(LoweredKernel lowered,
                       Lower(request.workload, *tpl, kernel.choice.config, kernel.func_name));
      std::move(lowered.funcs.begin(), lowered.funcs.end(), std::back_inserter(funcs));
      constants.insert(constants.end(), lowered.constants.begin(), lowered.constants.end());
    }
    result.kernels.push_back(std::move(kernel));
  }
  // The runtime shims the kernels call are linked (DT_NEEDED, found through RUNPATH); other
  // external libraries (a user's micro-kernels) are left to whoever loads the library.
  std::vector<std::string> link_args;
  std::vector<std::string> shims;
  std::set<std::string> external;
  for (const ir::LoweredFunc& func : funcs) {
    external.insert(func.external_libs.begin(), func.external_libs.end());
  }
  for (const std::string& lib : external) {
    const RuntimeLibrary* runtime = FindRuntimeLibraryByShim(lib);
    if (runtime == nullptr) {
      result.external_libs.push_back(lib);
      continue;
    }
    ASSIGN_OR_RETURN(std::string path, RuntimeLibraryPath(*runtime));
    link_args.push_back(path);
    link_args.push_back(StrCat("-rpath=", fs::path(path).parent_path().string()));
    shims.push_back(std::string(runtime->shim_file));
  }
  std::vector<std::string> objects = std::move(plugin_objects);
  if (!funcs.empty()) {
    ASSIGN_OR_RETURN(std::string object,
                     EmitCpuObject(funcs, CodegenOptions(target_), &result.llvm_ir, constants));
    objects.push_back(std::move(object));
  }
  if (!expanded.entries.empty()) {
    ASSIGN_OR_RETURN(std::string object, RangeObject(expanded, result, link_args));
    objects.push_back(std::move(object));
    shims.push_back(kRangeRuntimeLibrary);
  }
  ASSIGN_OR_RETURN(Linked linked, LinkInScratch(objects, fs::path(so_path).filename().string(),
                                                link_args, plugin_symbols));
  result.needed_libs = std::move(linked.needed_libs);
  result.needed_libs.insert(result.needed_libs.end(), shims.begin(), shims.end());

  RETURN_IF_ERROR(
      WriteLibraryFiles(result, target_, linked.shared_object, {}, so_path, header_path));
  return result;
}

absl::StatusOr<LibraryResult> Compiler::BuildGpuLibrary(const std::vector<KernelRequest>& requests,
                                                        const std::string& so_path,
                                                        const std::string& header_path) {
  const Target& target = target_;
  if (requests.empty()) {
    return absl::InvalidArgumentError("no kernels requested: give at least one workload");
  }
  ASSIGN_OR_RETURN(ExpandedRequests expanded, ExpandRanges(requests));
  LibraryResult result;
  result.so_path = so_path;
  result.header_path = header_path;
  std::set<std::string> names;
  for (const RangeEntry& entry : expanded.entries) {
    names.insert(entry.func_name);
  }
  std::vector<ir::LoweredFunc> funcs;
  for (const KernelRequest& request : expanded.requests) {
    LibraryKernel kernel{
        request.func_name.empty() ? DefaultFunctionName(request.workload) : request.func_name,
        request.workload, KernelChoice{}, ""};
    if (!IsCIdentifier(kernel.func_name)) {
      return absl::InvalidArgumentError(StrCat("function name '", kernel.func_name,
                                               "' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)"));
    }
    if (!names.insert(kernel.func_name).second) {
      return absl::InvalidArgumentError(
          StrCat("function name '", kernel.func_name,
                 "' is used twice: give each workload a distinct name"));
    }
    ASSIGN_OR_RETURN(kernel.choice, Choose(request, &kernel.origin));
    const KernelTemplate* tpl = catalog_.FindTemplate(kernel.choice.template_name, target_.kind);
    if (tpl == nullptr || !tpl->build) {
      return absl::UnimplementedError(
          StrCat("template '", kernel.choice.template_name,
                 "' has no IR builder (codegen plugins build CPU objects only): it cannot be part "
                 "of a GPU library"));
    }
    // A GPU template's IR has GPU loops and becomes device code plus a host stub; a library
    // template's IR is host code with the stream parameter (LinkGpuLibrary tells them apart).
    ASSIGN_OR_RETURN(ir::LoweredFunc func,
                     tpl->build(request.workload, target, kernel.choice.config, kernel.func_name));
    ASSIGN_OR_RETURN(func, tune::Lower(std::move(func), lower_));
    if (func.params.size() != request.workload.Arguments().size()) {
      return absl::InternalError(StrCat("template '", tpl->name, "' built ", func.params.size(),
                                        " parameters for '", request.workload.ToString(),
                                        "', which has ", request.workload.Arguments().size(),
                                        " arguments"));
    }
    func.param_elements.clear();
    for (const TensorArg& arg : request.workload.Arguments()) {
      func.param_elements.push_back(arg.NumElements());
    }
    funcs.push_back(std::move(func));
    result.kernels.push_back(std::move(kernel));
  }
  GpuLibraryExtras extras;
  if (!expanded.entries.empty()) {
    ASSIGN_OR_RETURN(std::string object, RangeObject(expanded, result, extras.link_args));
    extras.objects.push_back(std::move(object));
    extras.needed_libs.push_back(kRangeRuntimeLibrary);
  }
  ASSIGN_OR_RETURN(
      GpuLibraryBinary binary,
      LinkGpuLibrary(target, funcs, fs::path(so_path).filename().string(), EmitGpuModule, extras));
  result.needed_libs = binary.needed_libs;
  result.external_libs = binary.external_libs;
  result.llvm_ir = StrCat(binary.llvm_ir, result.llvm_ir);

  std::map<std::string, GpuLaunch> launches;
  for (const GpuKernel& kernel : binary.kernels) {
    launches[kernel.name] = kernel.launch;
  }
  RETURN_IF_ERROR(
      WriteLibraryFiles(result, target, binary.shared_object, launches, so_path, header_path));
  return result;
}

}  // namespace tune
