// A wgmma config on the simulator with its persistent grid counted for a GPU of a handful of
// multiprocessors (persistent grids, stream-K and the window pipeline), so that each block takes
// several tiles there.
#pragma once

#include <cstdint>
#include <string>

#include "codegen/lower.h"
#include "codegen/sim/gpu_sim.h"
#include "codegen/templates/tensor_core_gemm.h"
#include "codegen/templates/wgmma_kernel.h"
#include "gtest/gtest.h"
#include "search/config_space.h"

namespace tune::testing::wgmma {

/// `config` with its persistent grid counted in multiprocessors of a GPU of `multiprocessors`
/// (not the 132 of the space's knobs), for `text`, on the simulator with one and three block
/// workers (any block of a shared tile may arrive last).
inline void CheckOnAGpuOf(int64_t multiprocessors, const std::string& text, const Config& config,
                          uint64_t schedule_seed = 0) {
  const Workload w = *Workload::Parse(text);
  const ImplicitGemm g(w);
  WgmmaKnobs k = WgmmaKnobsOf(config, WgmmaCostShape(g));
  k.multiprocessors = multiprocessors;
  absl::StatusOr<ir::LoweredFunc> lowered = Lower(BuildWgmmaKernel(g, k, DefaultFunctionName(w)));
  ASSERT_TRUE(lowered.ok()) << text << ": " << lowered.status();
  for (int workers : {1, 3}) {
    GpuSimOptions options;
    options.block_workers = workers;
    options.schedule_seed = schedule_seed;
    const absl::Status status = SimulateAgainstReference(w, *lowered, 17, options);
    EXPECT_TRUE(status.ok()) << text << " " << ConfigToString(config) << " on " << multiprocessors
                             << " multiprocessors, " << workers << " workers, schedule seed "
                             << schedule_seed << ": " << status;
  }
}

}  // namespace tune::testing::wgmma
