// The simulator sweep the tensor-core template tests share: a template's default, sampled and
// chosen configs on one workload, lowered and run on the GPU simulator against the reference.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "codegen/lower.h"
#include "codegen/sim/gpu_sim.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/gpu_template_cases.h"

namespace tune::testing {

/// Template `name`'s config `c` for (w, target), built and lowered.
inline absl::StatusOr<ir::LoweredFunc> BuildLoweredGpu(std::string_view name, const Workload& w,
                                                       const Config& c, const Target& target) {
  const KernelTemplate* tpl = GpuTemplate(name, target, w);
  if (tpl == nullptr) {
    return absl::NotFoundError(std::string(name) + " does not apply");
  }
  absl::StatusOr<ir::LoweredFunc> built = tpl->build(w, target, c, DefaultFunctionName(w));
  if (!built.ok()) {
    return built.status();
  }
  return Lower(*std::move(built));
}

/// The default, `random` sampled configs and `extra` of template `name` on workload `text`
/// for `target`, each on the simulator against the reference, its threads interleaved as
/// `schedule_seed` says (GpuSimOptions).
inline void CheckTemplateOnSimulator(std::string_view name, const Target& target,
                                     const std::string& text, int random,
                                     std::vector<Config> extra = {}, uint64_t schedule_seed = 0) {
  const Workload w = *Workload::Parse(text);
  const KernelTemplate* tpl = GpuTemplate(name, target, w);
  ASSERT_NE(tpl, nullptr) << name << " is not offered for " << text;
  std::vector<Config> configs = {tpl->default_config(w, target)};
  const ConfigSpace space = tpl->space(w, target);
  std::mt19937_64 rng(5);
  for (int i = 0; i < random; ++i) {
    std::optional<Config> c = space.Sample(rng);
    ASSERT_TRUE(c.has_value());
    configs.push_back(*c);
  }
  for (Config& c : extra) {
    ASSERT_TRUE(space.Validate(c).ok())
        << text << " " << ConfigToString(c) << ": " << space.Validate(c);
    configs.push_back(std::move(c));
  }
  for (const Config& c : configs) {
    absl::StatusOr<ir::LoweredFunc> lowered = BuildLoweredGpu(name, w, c, target);
    ASSERT_TRUE(lowered.ok()) << text << " " << ConfigToString(c) << ": " << lowered.status();
    GpuSimOptions options;
    options.block_workers = 2;
    options.schedule_seed = schedule_seed;
    const absl::Status status = SimulateAgainstReference(w, *lowered, 17, options);
    EXPECT_TRUE(status.ok()) << text << " " << ConfigToString(c) << " (schedule seed "
                             << schedule_seed << "): " << status;
  }
}

}  // namespace tune::testing
