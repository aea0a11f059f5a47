// tune::Catalog: what the names in a job, a target or a query mean to one program. A catalog is
// a value: each program's main() builds one and passes it down, and nothing reads a catalog from
// process state.
//
//   built-in templates   the table of template.cc, always
//   micro-kernels        the manifests a program was given (--extern-kernels, common/
//                        extern_kernels.h): names a target may list in -libs=, and the
//                        *.ukernel templates that call them
//   plugin families      the template families of codegen plugins (codegen/plugins/plugin.h),
//                        listed after the built-in templates, each with the executable it came
//                        from
//   extra templates      templates a program adds for itself: the tests' deliberately broken
//                        fault templates (tests/fault/fault_templates.h), in tune-fault-daemon
//
// Copies share one immutable state: a catalog is cheap to copy and safe to read from any thread.
// The templates it lists live as long as any copy of it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/templates/template.h"
#include "common/extern_kernels.h"
#include "common/target.h"
#include "common/workload.h"

namespace tune {

/// A template family a codegen plugin adds, with the executable it came from.
struct CatalogFamily {
  std::shared_ptr<const KernelTemplate> tpl;
  std::string source;  // the plugin executable
};

/// What a program's catalog is made of, from its flags (codegen/plugins/plugin.h:LoadCatalog
/// builds it). A builder process receives the paths and adds its own program's templates.
struct CatalogSources {
  std::vector<std::string> extern_kernel_manifests = {};    // --extern-kernels
  std::vector<std::string> codegen_plugins = {};            // --codegen-plugin
  std::vector<const KernelTemplate*> extra_templates = {};  // the program's own (tests' faults)
};

class Catalog {
 public:
  /// The built-in templates alone: no micro-kernels, no plugin families.
  Catalog();

  /// One constant catalog of the built-in templates, for tests and tools that load nothing (its
  /// templates live for the program).
  static const Catalog& BuiltIn();

  /// A copy whose micro-kernels are `kernels` (LoadExternKernels: sorted, unique), replacing
  /// any it had.
  Catalog WithExternKernels(std::vector<ExternKernel> kernels) const;

  /// A copy with `families` listed after its templates. A family whose name another template
  /// of the catalog has is InvalidArgument naming the family, its source and who has the name.
  absl::StatusOr<Catalog> WithFamilies(std::vector<CatalogFamily> families) const;

  /// A copy with `templates` (which live for the program) listed after the others: a program's
  /// own templates, such as the tests' fault templates.
  Catalog WithTemplates(const std::vector<const KernelTemplate*>& templates) const;

  /// Every template, in table order: the built-in ones, then the plugins' families, then the
  /// extra templates.
  const std::vector<const KernelTemplate*>& templates() const;

  /// What the catalog was made of: its micro-kernels' manifests, its plugins (in the order
  /// their families were added) and its extra templates.
  CatalogSources sources() const;

  /// The templates offered for a workload on a target, best first (the first one's default is
  /// what tune-compile uses when the tuning log knows nothing, and what a search measures first):
  /// those that lead on it (KernelTemplate::leads), then the others, each in table order. Empty
  /// when none applies. Templates that are not offered (KernelTemplate::offered) are left out.
  std::vector<const KernelTemplate*> TemplatesFor(const Workload& workload,
                                                  const Target& target) const;

  /// The template called `name` (the first, where a library's templates for cuda and rocm share
  /// one), or nullptr. A template of generated GPU code is one entry for cuda and rocm targets
  /// (TemplateTargets::kGpu).
  const KernelTemplate* FindTemplate(std::string_view name) const;
  /// The entry called `name` that builds for targets of `kind`, else the first entry called
  /// `name` (which then does not build for `kind`: callers check TemplateBuildsFor), else
  /// nullptr.
  const KernelTemplate* FindTemplate(std::string_view name, TargetKind kind) const;
  /// The entry called `name` for `op` that builds for targets of `kind`, or nullptr.
  const KernelTemplate* FindTemplate(std::string_view name, TargetKind kind, OpKind op) const;

  /// The plugin executable a template came from, or "" for the others.
  std::string SourceOf(const KernelTemplate& tpl) const;
  /// The plugins' families, in the order they were added.
  std::vector<CatalogFamily> families() const;

  /// The micro-kernels, by name.
  const std::vector<ExternKernel>& extern_kernels() const;
  /// The micro-kernel called `name`, or nullptr.
  const ExternKernel* FindExternKernel(std::string_view name) const;
  /// The micro-kernel that `target` names in -libs= and whose ISA its CPU has, or nullptr.
  const ExternKernel* UkernelOf(const Target& target) const;

  /// What `tpl` calls on `target` (a runtime library, or the target's micro-kernel); nullopt
  /// for code that calls no library.
  std::optional<TemplateLibrary> LibraryOf(const KernelTemplate& tpl, const Target& target) const;

  /// The libraries a target of `kind` may name: the runtime libraries of that kind (common/
  /// runtime_libs.h), sorted, then for llvm the micro-kernels.
  std::vector<std::string> LibrariesFor(TargetKind kind) const;

  /// OK when every library `target` names exists for its kind and it names at most one
  /// micro-kernel; else InvalidArgument (InvalidTarget, with `text` as the target's text)
  /// naming the library and the accepted ones.
  absl::Status CheckTarget(const Target& target, std::string_view text) const;
  /// Target::Parse, then CheckTarget.
  absl::StatusOr<Target> ParseTarget(std::string_view text) const;

 private:
  struct State;
  explicit Catalog(std::shared_ptr<const State> state);
  /// Lists `state`'s templates in table order (State::all) from its parts.
  static void ListAll(State& state);

  std::shared_ptr<const State> state_;
};

}  // namespace tune
