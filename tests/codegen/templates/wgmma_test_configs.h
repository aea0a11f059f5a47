// Configs of gemm.cuda.wgmma (and conv2d.cuda.wgmma, which shares its space) for the tests of
// its kernels: the sm_90a target, every knob spelled out (Knobs), a warp-specialised TMA
// pipeline (Tma), its clustered twins (Clustered, ClusteredMxN), its persistent twin
// (Persistent), for the 8-bit floats its twin that promotes every two steps
// (PromotedEveryTwoSteps), and for the convolutions that offer the resident pipeline, a config
// outside it (NotResident).
#pragma once

#include <cstdint>

#include "common/target.h"
#include "search/config_space.h"

namespace tune::testing::wgmma {

inline const Target& Sm90a() {
  static const Target target = *Target::Parse("cuda -arch=sm_90a");
  return target;
}

inline Config Knobs(int64_t bm, int64_t bn, int64_t wg_m, int64_t wg_n, int64_t stages,
                    int64_t copy, int64_t raster = 1, int64_t gridk = 1, int64_t wg_k = 1,
                    int64_t stage_c = 0, int64_t tma = 0, int64_t streamk = 0,
                    int64_t cluster = 1) {
  return {{"bm", bm},           {"bn", bn},           {"wg_m", wg_m},    {"wg_n", wg_n},
          {"wg_k", wg_k},       {"stages", stages},   {"copy", copy},    {"raster", raster},
          {"gridk", gridk},     {"stage_c", stage_c}, {"tma", tma},      {"streamk", streamk},
          {"cluster", cluster}, {"blocks", 1},        {"persistent", 0}, {"promote_steps", 1},
          {"split_cluster", 0}, {"cluster_n", 1}};
}

// A warp-specialised TMA pipeline (tma = 1) of the given tile, stages, grid split and output.
inline Config Tma(int64_t bm, int64_t bn, int64_t wg_m, int64_t wg_n, int64_t stages,
                  int64_t gridk = 1, int64_t stage_c = 0) {
  return Knobs(bm, bn, wg_m, wg_n, stages, 16, 1, gridk, 1, stage_c, 1);
}

// A TMA pipeline in clusters of two blocks along M sharing B's tile (cluster = 2).
inline Config Clustered(Config c) {
  c["cluster"] = 2;
  return c;
}

// A TMA pipeline in clusters of `m` x `n` blocks: along M sharing B's tile (cluster = m), along
// N sharing A's (cluster_n = n).
inline Config ClusteredMxN(Config c, int64_t m, int64_t n) {
  c["cluster"] = m;
  c["cluster_n"] = n;
  return c;
}

// A TMA pipeline on a persistent grid, each block taking whole tiles in turn (persistent = 1),
// compiled for `blocks` blocks per multiprocessor.
inline Config Persistent(Config c, int64_t blocks = 1) {
  c["persistent"] = 1;
  c["blocks"] = blocks;
  return c;
}

// `c` for a convolution whose space offers the resident pipeline (a 1x1 one of one or two steps
// of K, or narrow channels), outside it (resident = 0).
inline Config NotResident(Config c) {
  c["resident"] = 0;
  return c;
}

// A grid split whose tile's gridk blocks form one cluster and share the finish.
inline Config SplitInCluster(Config c) {
  c["split_cluster"] = 1;
  return c;
}

// An 8-bit float TMA pipeline that promotes its sums every two steps of K (promote_steps 2).
inline Config PromotedEveryTwoSteps(Config c) {
  c["promote_steps"] = 2;
  return c;
}

}  // namespace tune::testing::wgmma
