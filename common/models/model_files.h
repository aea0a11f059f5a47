// The built-in models' workloads files, common/models/NAME.txt, embedded into tune_common when it
// is built (cmake/EmbedFiles.cmake), so that an installed tune-client or tune-compile needs no
// file beside it. Read them through workload_list.h (BuiltinModelNames, BuiltinModel,
// BuiltinModelText); python/CMakeLists.txt copies the same files into the Python client.
#pragma once

#include <span>
#include <string_view>

namespace tune::models {

struct EmbeddedFile {
  std::string_view path;  // "/resnet50.txt"
  std::string_view body;  // the file's bytes
};

/// Every file of TUNE_BUILTIN_MODELS (common/CMakeLists.txt), generated at build time. The
/// generated table is dynamically initialized (as the dashboard's): read it from main on, not
/// from another static initializer.
std::span<const EmbeddedFile> ModelFiles();

}  // namespace tune::models
