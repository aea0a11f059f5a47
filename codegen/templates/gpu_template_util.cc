#include "codegen/templates/gpu_template_util.h"

#include <algorithm>
#include <optional>

#include "codegen/templates/template_util.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {

int64_t GpuCeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

int64_t ClusterWaveBlocks(int64_t c) {
  int64_t blocks = 0;
  for (int64_t gpc : {18, 18, 18, 18, 16, 16, 14, 14}) {
    blocks += gpc / c * c;
  }
  return blocks;
}

bool SimtGridFitsColumns(int64_t columns) {
  return GpuCeilDiv(columns, kWidestSimtBlockColumns) <= 65535;
}

int64_t MatmulSize::Blocks(const Config& c) const {
  if (auto streamk = c.find("streamk"); streamk != c.end() && streamk->second > 0) {
    return streamk->second * kGpuMultiprocessorsGuess;  // a persistent grid
  }
  const int64_t blocks = GpuCeilDiv(m, c.at("bm")) * GpuCeilDiv(n, c.at("bn")) * c.at("gridk");
  if (auto persistent = c.find("persistent"); persistent != c.end() && persistent->second == 1) {
    return std::min(blocks, c.at("blocks") * kGpuMultiprocessorsGuess);  // whole tiles each
  }
  return blocks;
}

Config MatmulDefault(const ConfigSpace& space, std::vector<Config> presets, const MatmulSize& size,
                     int64_t want_blocks, std::string_view what) {
  for (Config& c : presets) {
    for (int64_t gridk : space.FindKnob("gridk")->values) {
      if (size.Blocks(c) >= want_blocks || gridk * 256 > size.k) {
        break;
      }
      Config split = c;
      split["gridk"] = gridk;
      if (space.IsValid(split)) {
        c = split;
      }
    }
  }
  const Config* most = nullptr;
  for (const Config& c : presets) {
    if (!space.IsValid(c)) {
      continue;
    }
    if (size.Blocks(c) >= want_blocks) {
      return c;
    }
    if (most == nullptr || size.Blocks(c) > size.Blocks(*most)) {
      most = &c;
    }
  }
  if (most != nullptr) {
    return *most;
  }
  std::vector<Config> any = space.EnumerateValid(1);
  TUNE_CHECK(!any.empty()) << what << " has no valid config";
  return any.front();
}

std::vector<Config> MatmulSeeds(const ConfigSpace& space, const std::vector<Config>& variants,
                                const MatmulSize& size, int64_t split_below_blocks) {
  std::vector<Config> seeds;
  auto add = [&](Config c) {
    if (seeds.size() < kMaxGpuSeeds && space.IsValid(c) &&
        std::find(seeds.begin(), seeds.end(), c) == seeds.end()) {
      seeds.push_back(std::move(c));
    }
  };
  const bool one_split = split_below_blocks != INT64_MAX;
  for (const Config& v : variants) {
    Config unsplit = v;
    unsplit["gridk"] = 1;
    const bool few = size.Blocks(unsplit) < split_below_blocks;
    std::optional<Config> chosen;  // one_split: the split this variant gets
    for (int64_t gridk : space.FindKnob("gridk")->values) {
      Config c = v;
      c["gridk"] = gridk;
      if (gridk > 1 && (!few || gridk * 128 > size.k ||
                        size.Blocks(c) > 8 * kGpuMultiprocessorsGuess || !space.IsValid(c))) {
        continue;
      }
      if (!one_split || gridk == 1) {
        add(std::move(c));
      } else if (!chosen || size.Blocks(*chosen) < split_below_blocks) {
        chosen = std::move(c);
      }
    }
    if (chosen) {
      add(*std::move(chosen));
    }
  }
  return seeds;
}

std::vector<BlockTile> WaveFitTiles(const MatmulSize& size, std::vector<BlockTile> tiles) {
  auto modelled = [&](const BlockTile& t) {
    const int64_t blocks = GpuCeilDiv(size.m, t.bm) * GpuCeilDiv(size.n, t.bn);
    const int64_t waves = GpuCeilDiv(blocks, kGpuMultiprocessorsGuess);
    return waves * std::max(t.bm * t.bn, 64 * (t.bm + t.bn));
  };
  std::stable_sort(tiles.begin(), tiles.end(), [&](const BlockTile& a, const BlockTile& b) {
    const int64_t ta = modelled(a), tb = modelled(b);
    return ta != tb ? ta < tb : a.bm * a.bn > b.bm * b.bn;
  });
  return tiles;
}

int64_t NextPow2(int64_t n) {
  int64_t p = 1;
  while (p < n) {
    p *= 2;
  }
  return p;
}

GpuArch GpuArchOrDefault(const Target& target) {
  absl::StatusOr<GpuArch> arch = GpuArchFor(target);
  if (arch.ok()) {
    return *arch;
  }
  return *GpuArchFor(*Target::Parse("cuda -arch=sm_90"));
}

int64_t RegisterBudget(const GpuArch& arch, int64_t threads) {
  const int64_t two_blocks =
      arch.registers_per_multiprocessor / (2 * std::max<int64_t>(threads, 1));
  return std::min<int64_t>(arch.max_registers_per_thread, std::max<int64_t>(128, two_blocks));
}

void AddGpuLimitConstraints(ConfigSpace& space, const GpuArch& arch,
                            std::function<GpuBlockCost(const Config&)> cost,
                            GpuLimitOptions options) {
  const bool dynamic_shared = options.dynamic_shared;
  const int64_t max_threads = arch.max_threads_per_block;
  const int64_t warp = arch.warp_size;
  space.AddConstraint(
      StrCat("threads per block <= max_threads_per_block (", max_threads, ") of ", arch.name),
      [cost, max_threads](const Config& c) { return cost(c).threads <= max_threads; });
  space.AddConstraint(StrCat("threads per block a multiple of warp_size (", warp, ") of ",
                             arch.name, " or fewer than one warp"),
                      [cost, warp](const Config& c) {
                        int64_t t = cost(c).threads;
                        return t % warp == 0 || t < warp;
                      });
  const int64_t max_shared = dynamic_shared ? std::max(arch.max_shared_bytes_per_block,
                                                       arch.max_dynamic_shared_bytes_per_block)
                                            : arch.max_shared_bytes_per_block;
  space.AddConstraint(
      dynamic_shared ? StrCat("shared bytes <= max_dynamic_shared_bytes_per_block (", max_shared,
                              ") of ", arch.name)
                     : StrCat("static shared bytes <= max_shared_bytes_per_block (", max_shared,
                              ") of ", arch.name),
      [cost, max_shared](const Config& c) { return cost(c).shared_bytes <= max_shared; });
  if (options.one_block_per_multiprocessor) {
    space.AddConstraint(StrCat("estimated registers per thread <= min(max_registers_per_thread (",
                               arch.max_registers_per_thread, "), registers_per_multiprocessor (",
                               arch.registers_per_multiprocessor, ") / threads) of ", arch.name),
                        [cost, arch](const Config& c) {
                          const GpuBlockCost k = cost(c);
                          return k.registers <=
                                 std::min<int64_t>(arch.max_registers_per_thread,
                                                   arch.registers_per_multiprocessor /
                                                       std::max<int64_t>(k.threads, 1));
                        });
    return;
  }
  space.AddConstraint(
      StrCat("estimated registers per thread <= min(max_registers_per_thread (",
             arch.max_registers_per_thread, "), max(128, registers_per_multiprocessor (",
             arch.registers_per_multiprocessor, ") / (2 x threads))) of ", arch.name),
      [cost, arch](const Config& c) {
        const GpuBlockCost k = cost(c);
        return k.registers <= RegisterBudget(arch, k.threads);
      });
}

int64_t LanesDividing(int64_t want, const std::vector<int64_t>& divides) {
  for (int64_t lanes : {int64_t{4}, int64_t{2}}) {
    if (lanes > want) {
      continue;
    }
    bool ok = true;
    for (int64_t d : divides) {
      ok = ok && d % lanes == 0;
    }
    if (ok) {
      return lanes;
    }
  }
  return 1;
}

bool FragPipeFits(int64_t stages, int64_t bk, int64_t splitk) {
  return stages >= 2 && (bk / splitk) % 2 == 0;
}

bool GridSplitFits(int64_t k, int64_t bk, int64_t gridk) {
  const int64_t steps = GpuCeilDiv(k, bk);
  return gridk >= 1 && (gridk - 1) * GpuCeilDiv(steps, gridk) < steps;
}

}  // namespace tune
