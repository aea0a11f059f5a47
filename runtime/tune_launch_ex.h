/* The checks of a launch with TMA tensor maps or a thread-block cluster, and the arguments
 * cuTensorMapEncodeTiled takes for a tune_gpurt_tensor_map (tune_gpurt.h), shared by
 * libtune_gpurt.so (launches from generated libraries) and tune-server's measurement child, so
 * both refuse the same descriptors with the same words. Everything but
 * tune_tensor_map_encode is pure (no driver call), so tests check every refusal without a GPU.
 * Plain C, header only, like the driver tables. */
#ifndef TUNE_LAUNCH_EX_H_
#define TUNE_LAUNCH_EX_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tune_cuda_driver.h"
#include "tune_gpurt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What cuTensorMapEncodeTiled accepts of what tune asks for (cuda.h's documentation of the
 * function, for interleave NONE and element strides 1), said in every refusal. */
#define TUNE_TENSOR_MAP_RULES                                                                \
  "a tensor map needs rank 1..5, element_bytes 1, 2 or 4, swizzle_bytes 0 or 128, dims "     \
  "1..2^32, strides multiples of 16 bytes below 2^40, box entries 1..256 with box[0] * "     \
  "element_bytes a multiple of 16 bytes (and at most 128 with the 128-byte swizzle), and a " \
  "16-byte aligned global address"

/* The largest cluster every sm_90 device runs (a portable cluster size, in blocks). */
#define TUNE_MAX_CLUSTER_BLOCKS 8

/* cuTensorMapEncodeTiled's arguments but the output. */
typedef struct tune_tensor_map_encoding {
  int data_type; /* TUNE_CU_TENSOR_MAP_DATA_TYPE_UINT8/16/32 */
  uint32_t rank;
  void* global_address;
  uint64_t global_dims[5];
  uint64_t global_strides[4]; /* rank - 1 of them are read */
  uint32_t box[5];
  uint32_t element_strides[5];
  int interleave;
  int swizzle;
  int l2_promotion;
  int oob_fill;
} tune_tensor_map_encoding;

/* Writes "argument 2, 2-byte elements, dims [64,128], strides [128], box [64,64], swizzle 128"
 * (the entries of the map's rank, clamped to 1..5) into text[size]. */
static inline void tune_tensor_map_describe(const tune_gpurt_tensor_map* map, char* text,
                                            size_t size) {
  uint32_t rank = map->rank < 1 ? 1 : map->rank > 5 ? 5 : map->rank;
  char dims[128] = "";
  char strides[128] = "";
  char box[96] = "";
  for (uint32_t d = 0; d < rank; ++d) {
    size_t n = strlen(dims);
    snprintf(dims + n, sizeof dims - n, "%s%llu", d ? "," : "", (unsigned long long)map->dims[d]);
    n = strlen(box);
    snprintf(box + n, sizeof box - n, "%s%u", d ? "," : "", map->box[d]);
    if (d + 1 < rank) {
      n = strlen(strides);
      snprintf(strides + n, sizeof strides - n, "%s%llu", d ? "," : "",
               (unsigned long long)map->strides[d]);
    }
  }
  snprintf(text, size,
           "argument %u, %u-byte elements, rank %u, dims [%s], strides [%s], box [%s], "
           "swizzle %u",
           map->arg, map->element_bytes, map->rank, dims, strides, box, map->swizzle_bytes);
}

/* Checks `map` for a kernel of num_args arguments whose map argument lives at global_address,
 * and fills `out` with the arguments that encode it. Returns 1; or 0 with error[error_size]
 * naming the map (tune_tensor_map_describe), what is wrong and TUNE_TENSOR_MAP_RULES. */
static inline int tune_tensor_map_prepare(const tune_gpurt_tensor_map* map, uint32_t num_args,
                                          uint64_t global_address, tune_tensor_map_encoding* out,
                                          char* error, size_t error_size) {
  char what[160] = "";
  memset(out, 0, sizeof *out);
  if (map->arg >= num_args) {
    snprintf(what, sizeof what, "argument %u is not one of the kernel's %u arguments", map->arg,
             num_args);
  } else if (map->rank < 1 || map->rank > 5) {
    snprintf(what, sizeof what, "rank %u is not 1..5", map->rank);
  } else if (map->element_bytes != 1 && map->element_bytes != 2 && map->element_bytes != 4) {
    snprintf(what, sizeof what, "element_bytes %u is not 1, 2 or 4", map->element_bytes);
  } else if (map->swizzle_bytes != 0 && map->swizzle_bytes != 128) {
    snprintf(what, sizeof what, "swizzle_bytes %u is not 0 or 128", map->swizzle_bytes);
  } else if (global_address % 16 != 0) {
    snprintf(what, sizeof what, "the global address 0x%llx is not 16-byte aligned",
             (unsigned long long)global_address);
  }
  for (uint32_t d = 0; what[0] == '\0' && d < map->rank; ++d) {
    if (map->dims[d] < 1 || map->dims[d] > (UINT64_C(1) << 32)) {
      snprintf(what, sizeof what, "dims[%u] = %llu is not 1..2^32", d,
               (unsigned long long)map->dims[d]);
    } else if (map->box[d] < 1 || map->box[d] > 256) {
      snprintf(what, sizeof what, "box[%u] = %u is not 1..256", d, map->box[d]);
    } else if (d + 1 < map->rank &&
               (map->strides[d] % 16 != 0 || map->strides[d] >= (UINT64_C(1) << 40))) {
      snprintf(what, sizeof what, "strides[%u] = %llu bytes is not a multiple of 16 below 2^40", d,
               (unsigned long long)map->strides[d]);
    }
  }
  const uint64_t inner_bytes = (uint64_t)map->box[0] * map->element_bytes;
  if (what[0] == '\0' && inner_bytes % 16 != 0) {
    snprintf(what, sizeof what, "box[0] * element_bytes = %llu bytes is not a multiple of 16",
             (unsigned long long)inner_bytes);
  } else if (what[0] == '\0' && map->swizzle_bytes == 128 && inner_bytes > 128) {
    snprintf(what, sizeof what,
             "box[0] * element_bytes = %llu bytes exceeds the 128-byte swizzle span",
             (unsigned long long)inner_bytes);
  }
  if (what[0] != '\0') {
    char described[512];
    tune_tensor_map_describe(map, described, sizeof described);
    snprintf(error, error_size, "tensor map over %s: %s (%s)", described, what,
             TUNE_TENSOR_MAP_RULES);
    return 0;
  }
  out->data_type = map->element_bytes == 1   ? TUNE_CU_TENSOR_MAP_DATA_TYPE_UINT8
                   : map->element_bytes == 2 ? TUNE_CU_TENSOR_MAP_DATA_TYPE_UINT16
                                             : TUNE_CU_TENSOR_MAP_DATA_TYPE_UINT32;
  out->rank = map->rank;
  out->global_address = (void*)(uintptr_t)global_address;
  for (uint32_t d = 0; d < map->rank; ++d) {
    out->global_dims[d] = map->dims[d];
    out->box[d] = map->box[d];
    out->element_strides[d] = 1;
    if (d + 1 < map->rank) {
      out->global_strides[d] = map->strides[d];
    }
  }
  out->interleave = TUNE_CU_TENSOR_MAP_INTERLEAVE_NONE;
  out->swizzle =
      map->swizzle_bytes == 128 ? TUNE_CU_TENSOR_MAP_SWIZZLE_128B : TUNE_CU_TENSOR_MAP_SWIZZLE_NONE;
  out->l2_promotion = TUNE_CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  out->oob_fill = TUNE_CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE; /* zeros */
  return 1;
}

/* cuTensorMapEncodeTiled of a prepared encoding into `map` (the driver's code; the caller has
 * checked that the driver has the function). */
static inline tune_cu_result tune_tensor_map_encode(const tune_cuda_driver* cu,
                                                    const tune_tensor_map_encoding* e,
                                                    tune_cu_tensor_map* map) {
  return cu->cuTensorMapEncodeTiled(map, e->data_type, e->rank, e->global_address, e->global_dims,
                                    e->global_strides, e->box, e->element_strides, e->interleave,
                                    e->swizzle, e->l2_promotion, e->oob_fill);
}

/* Whether `cluster` (blocks per cluster, x/y/z) can launch `grid`: every entry >= 1 and
 * dividing the grid's, at most TUNE_MAX_CLUSTER_BLOCKS blocks in all. Returns 1; or 0 with
 * error[error_size] naming the entry and the limit. */
static inline int tune_cluster_check(const uint32_t grid[3], const uint32_t cluster[3], char* error,
                                     size_t error_size) {
  static const char axis[3] = {'x', 'y', 'z'};
  for (int a = 0; a < 3; ++a) {
    if (cluster[a] < 1 || grid[a] % cluster[a] != 0) {
      snprintf(error, error_size,
               "cluster.%c = %u does not divide grid.%c = %u (a cluster entry is >= 1 and "
               "divides the grid's)",
               axis[a], cluster[a], axis[a], grid[a]);
      return 0;
    }
  }
  const uint64_t blocks = (uint64_t)cluster[0] * cluster[1] * cluster[2];
  if (blocks > TUNE_MAX_CLUSTER_BLOCKS) {
    snprintf(error, error_size,
             "a cluster of %u x %u x %u = %llu blocks exceeds the portable maximum of %d blocks "
             "per cluster",
             cluster[0], cluster[1], cluster[2], (unsigned long long)blocks,
             TUNE_MAX_CLUSTER_BLOCKS);
    return 0;
  }
  return 1;
}

#ifdef __cplusplus
}
#endif

#endif /* TUNE_LAUNCH_EX_H_ */
