// Compiling generated C with the system C compiler, in a private temporary directory:
//
//   $TUNE_PLUGIN_CC -c -O3 -march=native -fPIC -std=c11 -ffp-contract=fast -o out.o src.c
//
// where TUNE_PLUGIN_CC unset or empty means `cc`. It may hold several words separated by spaces
// ("ccache gcc"); the first is looked up on PATH.
#pragma once

#include <optional>
#include <string>

namespace c_codegen_plugin {

/// The object file's bytes, or nullopt with *error set: the compiler's output (at most about
/// 4 KB) when it failed, else what went wrong around it.
std::optional<std::string> CompileC(const std::string& source, std::string* error);

}  // namespace c_codegen_plugin
