#include "codegen/templates/plugin_families.h"

#include <mutex>

namespace tune {
namespace {

struct Families {
  std::mutex mu;
  std::vector<const KernelTemplate*> list;
};

Families& State() {
  static auto* state = new Families();
  return *state;
}

}  // namespace

void SetPluginFamilies(std::vector<const KernelTemplate*> families) {
  Families& state = State();
  std::lock_guard lock(state.mu);
  state.list = std::move(families);
}

std::vector<const KernelTemplate*> PluginFamilies() {
  Families& state = State();
  std::lock_guard lock(state.mu);
  return state.list;
}

}  // namespace tune
