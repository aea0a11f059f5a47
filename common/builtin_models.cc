// The built-in models of workload_list.h: the layers of ResNet-50, MobileNet-v2 and BERT-base
// at batch 1, fp32, each with how many times one inference runs it. Each model is a workloads
// file, common/models/NAME.txt (README.md there says what each list holds and leaves out),
// embedded into tune_common at build time (common/models/model_files.h) and copied into the
// Python client's package (python/CMakeLists.txt): tune-client --model, tune-compile --model and
// tune_client's submit(model=...) read the same lists.
#include <algorithm>

#include "common/models/model_files.h"
#include "common/workload_list.h"

namespace tune {
namespace {

constexpr std::string_view kModelSuffix = ".txt";

// The model's name of an embedded file: "/resnet50.txt" is "resnet50".
std::string_view ModelName(std::string_view path) {
  path.remove_prefix(path.starts_with('/') ? 1 : 0);
  if (path.ends_with(kModelSuffix)) {
    path.remove_suffix(kModelSuffix.size());
  }
  return path;
}

}  // namespace

std::vector<std::string> BuiltinModelNames() {
  std::vector<std::string> names;
  for (const models::EmbeddedFile& file : models::ModelFiles()) {
    names.emplace_back(ModelName(file.path));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string_view BuiltinModelText(std::string_view name) {
  for (const models::EmbeddedFile& file : models::ModelFiles()) {
    if (ModelName(file.path) == name) {
      return file.body;
    }
  }
  return {};
}

}  // namespace tune
