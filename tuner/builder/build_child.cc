#include "tuner/builder/build_child.h"

#include <unistd.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "codegen/compiler.h"
#include "codegen/plugins/plugin.h"
#include "codegen/templates/template_features.h"
#include "common/strings.h"
#include "proto/convert.h"
#include "proto/framing.h"

namespace tune::tuner {
namespace {

template <typename Result = v1::BuildChildResult>
Result Error(uint64_t task_id, std::string message) {
  Result result;
  result.set_task_id(task_id);
  result.set_error(std::move(message));
  return result;
}

// The template a task names, at the version it expects; nullptr with `error` set otherwise.
const KernelTemplate* TaskTemplate(const Catalog& catalog, const std::string& name, int32_t version,
                                   const Target& target, OpKind op, std::string* error) {
  const KernelTemplate* tpl = catalog.FindTemplate(name, target.kind, op);
  if (tpl == nullptr) {
    tpl = catalog.FindTemplate(name, target.kind);
  }
  if (tpl == nullptr) {
    *error = StrCat("template '", name, "' is unknown to this builder");
    return nullptr;
  }
  if (tpl->version != version) {
    *error = StrCat("template ", tpl->name, " is at version ", tpl->version, ", not ", version);
    return nullptr;
  }
  return tpl;
}

}  // namespace

namespace {

// A successful build's result: the artifact, its code and the config's features (if any).
v1::BuildChildResult Built(uint64_t task_id, bool reused, Artifact built,
                           const std::vector<float>& features) {
  v1::BuildChildResult result;
  result.set_task_id(task_id);
  result.set_reused(reused);
  *result.mutable_artifact() = ArtifactToProto(built);
  *result.mutable_code() = ArtifactCodeToProto(built.hash, built.format, std::move(built.code));
  if (!features.empty()) {
    result.mutable_features()->mutable_values()->Add(features.begin(), features.end());
  }
  return result;
}

}  // namespace

v1::Artifact ArtifactToProto(const Artifact& built) {
  v1::Artifact artifact;
  artifact.set_hash(built.hash);
  artifact.set_entry_symbol(built.entry_symbol);
  for (const std::string& lib : built.external_libs) {
    artifact.add_needed_libs(lib);
  }
  artifact.set_template_name(built.template_name);
  artifact.set_config(built.config);
  artifact.set_format(ArtifactFormatToProto(built.format));
  artifact.set_code_bytes(static_cast<int64_t>(built.code.size()));
  artifact.set_tolerance_scale(built.tolerance_scale);
  if (built.format != CodeFormat::kSharedObject) {
    *artifact.mutable_launch() = LaunchDimsToProto(built.launch);
  }
  return artifact;
}

v1::BuildChildResult BuildOne(const Catalog& catalog, const v1::BuildChildTask& task,
                              ArtifactMemo* memo) {
  const uint64_t id = task.task_id();
  absl::StatusOr<Workload> workload = Workload::Parse(task.workload());
  if (!workload.ok()) {
    return Error(id, StrCat("workload: ", std::string(workload.status().message())));
  }
  absl::StatusOr<Target> target = Target::Parse(task.target());
  if (!target.ok()) {
    return Error(id, StrCat("target: ", std::string(target.status().message())));
  }
  std::string error;
  const KernelTemplate* tpl = TaskTemplate(catalog, task.template_name(), task.template_version(),
                                           *target, workload->op(), &error);
  if (tpl == nullptr) {
    return Error(id, std::move(error));
  }
  absl::StatusOr<Config> config = ParseConfig(task.config());
  if (!config.ok()) {
    return Error(id, StrCat("config: ", std::string(config.status().message())));
  }
  Compiler compiler(catalog, *target);
  if (tpl->build_object) {
    // A codegen plugin's family: the plugin compiles it (no IR of ours to remember it by).
    absl::StatusOr<Artifact> built =
        compiler.BuildArtifact(*workload, *tpl, *config, task.func_name());
    if (!built.ok()) {
      return Error(id, std::string(built.status().message()));
    }
    return Built(id, false, *std::move(built), {});
  }
  // The config is lowered once: its text finds an artifact compiled before (configs that lower
  // alike differ only in the config and its tolerance), or the kernel is emitted; the features
  // are read off the same kernel's template IR.
  absl::StatusOr<LoweredKernel> lowered =
      compiler.Lower(*workload, *tpl, *config, task.func_name());
  if (!lowered.ok()) {
    return Error(id, std::string(lowered.status().message()));
  }
  std::string key;
  std::optional<Artifact> known;
  if (memo != nullptr) {
    key = ArtifactMemo::Key(*target, *tpl, lowered->text);
    known = memo->Find(key);
  }
  const bool reused = known.has_value();
  absl::StatusOr<Artifact> built =
      known ? absl::StatusOr<Artifact>(*std::move(known)) : compiler.Emit(*lowered);
  if (!built.ok()) {
    return Error(id, std::string(built.status().message()));
  }
  if (!key.empty() && !reused) {
    memo->Insert(key, *built);
  }
  built->config = ConfigToString(*config);
  built->tolerance_scale = TemplateTolerance(*tpl, *workload, *config);
  return Built(
      id, reused, *std::move(built),
      TemplateFeaturesOfIr(lowered->source, *workload, tpl->space(*workload, *target), *config));
}
v1::FeatureChildResult FeaturesOne(const Catalog& catalog, const v1::FeatureChildTask& task) {
  using Result = v1::FeatureChildResult;
  const uint64_t id = task.task_id();
  absl::StatusOr<Workload> workload = Workload::Parse(task.workload());
  if (!workload.ok()) {
    return Error<Result>(id, StrCat("workload: ", std::string(workload.status().message())));
  }
  absl::StatusOr<Target> target = Target::Parse(task.target());
  if (!target.ok()) {
    return Error<Result>(id, StrCat("target: ", std::string(target.status().message())));
  }
  std::string error;
  const KernelTemplate* tpl = TaskTemplate(catalog, task.template_name(), task.template_version(),
                                           *target, workload->op(), &error);
  if (tpl == nullptr) {
    return Error<Result>(id, std::move(error));
  }
  const ConfigSpace space = tpl->space(*workload, *target);
  Result result;
  result.set_task_id(id);
  for (const std::string& text : task.configs()) {
    absl::StatusOr<Config> config = ParseConfig(text);
    if (!config.ok() || !space.IsValid(*config)) {
      return Error<Result>(id, StrCat("config ", text, " is not a valid point of ", tpl->name,
                                      "'s space for ", task.workload()));
    }
    const std::vector<float> row = TemplateFeatures(*tpl, *workload, *target, space, *config);
    result.add_rows()->mutable_values()->Add(row.begin(), row.end());
  }
  return result;
}

int RunBuildChild(int in_fd, int out_fd,
                  const std::vector<const KernelTemplate*>& program_templates) {
  v1::BuildChildRequest request;
  std::string error;
  if (ReadFrame(in_fd, &request, std::nullopt, -1, &error) != ReadOutcome::kOk ||
      !request.has_setup()) {
    return 1;
  }
  const v1::BuildChildSetup setup = request.setup();
  CatalogSources sources{
      .extern_kernel_manifests = {setup.extern_kernel_manifests().begin(),
                                  setup.extern_kernel_manifests().end()},
      .codegen_plugins = {setup.codegen_plugins().begin(), setup.codegen_plugins().end()},
      .extra_templates = program_templates,
  };
  // The daemon checked its sources at start-up: a failure here means a file changed since, and
  // the daemon reports the builder's exit.
  absl::StatusOr<Catalog> catalog = LoadCatalog(sources);
  if (!catalog.ok()) {
    return 1;
  }
  ArtifactMemo memo;
  v1::BuildChildReply ready;
  ready.mutable_ready()->set_pid(getpid());
  if (!WriteFrame(out_fd, ready).ok()) {
    return 1;
  }
  while (true) {
    request.Clear();
    switch (ReadFrame(in_fd, &request, std::nullopt, -1, &error)) {
      case ReadOutcome::kOk:
        break;
      case ReadOutcome::kEof:
        return 0;
      case ReadOutcome::kDeadline:
      case ReadOutcome::kWoken:
      case ReadOutcome::kError:
        return 1;
    }
    if (getppid() != setup.parent_pid()) {
      return 0;  // the daemon is gone
    }
    v1::BuildChildReply reply;
    if (request.has_task()) {
      *reply.mutable_result() = BuildOne(*catalog, request.task(), &memo);
    } else if (request.has_features()) {
      *reply.mutable_features() = FeaturesOne(*catalog, request.features());
    } else {
      return 1;
    }
    if (!WriteFrame(out_fd, reply).ok()) {
      return 1;
    }
  }
}

}  // namespace tune::tuner
