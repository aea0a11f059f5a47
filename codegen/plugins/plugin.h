// Codegen plugins ("bring your own codegen", seed 003): executables that add template families
// to tune without touching its core. The wire protocol is proto/tune/v1/plugin.proto: one
// PluginRequest on the plugin's stdin, one PluginResponse on its stdout, one process per
// request. examples/c_codegen_plugin is the worked case.
//
// A program that builds kernels (tune-daemon and its builder processes, tune-compile) adds its
// plugins to its catalog in main() (LoadCatalog): each plugin is asked to describe its families,
// and every family becomes a KernelTemplate whose space comes from the plugin (asked once per
// workload and target, then cached) and whose code is the ELF object the plugin builds
// (KernelTemplate::build_object). The catalog lists them after the built-in templates.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"

namespace tune {

/// How long a plugin may take to describe its families or a space, and to build a config.
inline constexpr std::chrono::milliseconds kPluginDescribeDeadline{20000};
inline constexpr std::chrono::milliseconds kPluginBuildDeadline{120000};

/// `base` with every plugin's families added: each plugin's describe request is run. A plugin
/// that another user could have written (CheckTrustedPath with kCodeFileRule: owned by this user
/// or root, writable by nobody else, in a directory nobody else can rename files in) is
/// FailedPrecondition naming its owner and mode and the fix, before it is run.
/// Fails with InvalidArgument naming the plugin and what is wrong: not an executable file, a
/// non-zero exit, a crash, a hang past the deadline, an answer that is not a PluginResponse, an
/// error answer, a family with a bad or taken name, an unknown op or target kind, a version
/// below 1.
absl::StatusOr<Catalog> WithCodegenPlugins(const Catalog& base,
                                           const std::vector<std::string>& plugin_paths);

/// The catalog of a program: the built-in templates, the micro-kernels of the manifests
/// (LoadExternKernels), the extra templates, then the plugins' families (WithCodegenPlugins).
/// The first error of any of them.
absl::StatusOr<Catalog> LoadCatalog(const CatalogSources& sources);

}  // namespace tune
