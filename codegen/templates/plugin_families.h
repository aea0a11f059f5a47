// The template families that codegen plugins add at run time. codegen/plugins/plugin.h installs
// them here, and template lookup (TemplatesFor, FindTemplate) lists them after the built-in
// templates: the arrow runs from plugins/ down to templates/, never back.
#pragma once

#include <vector>

#include "codegen/templates/template.h"

namespace tune {

/// Replaces the plugins' families (in installation order). The templates must live for the
/// program. Thread-safe.
void SetPluginFamilies(std::vector<const KernelTemplate*> families);

/// The plugins' families last set, in installation order (empty before any). Thread-safe.
std::vector<const KernelTemplate*> PluginFamilies();

}  // namespace tune
