/* The checks of a launch with TMA tensor maps or a thread-block cluster, and the arguments
 * cuTensorMapEncodeTiled (or cuTensorMapEncodeIm2col) takes for a tune_gpurt_tensor_map
 * (tune_gpurt.h), shared by
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

/* What cuTensorMapEncodeTiled and cuTensorMapEncodeIm2col accept of what tune asks for
 * (cuda.h's documentation of the functions, for interleave NONE), said in every refusal. */
#define TUNE_TENSOR_MAP_RULES                                                                   \
  "a tensor map needs rank 1..5, element_bytes 1, 2 or 4, swizzle_bytes 0 or 128, dims "        \
  "1..2^32, strides multiples of 16 bytes below 2^40, box entries 1..256 with box[0] * "        \
  "element_bytes a multiple of 16 bytes (and at most 128 with the 128-byte swizzle), element "  \
  "strides 1..8 and a 16-byte aligned global address; an im2col map (im2col 1) rank 3..5, box " \
  "[channels, pixels 1..1024, 1...] and rank - 2 corners each within -128..127 at rank 4 "      \
  "(-32768..32767 at 3, -16..15 at 5) bounding at least one window corner"

/* The largest cluster every sm_90 device runs (a portable cluster size, in blocks). */
#define TUNE_MAX_CLUSTER_BLOCKS 8

/* cuTensorMapEncodeTiled's (or cuTensorMapEncodeIm2col's) arguments but the output. */
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
  int im2col; /* 1: cuTensorMapEncodeIm2col, with the corners and box[0], box[1] below */
  int lower_corner[3];
  int upper_corner[3];
} tune_tensor_map_encoding;

/* Descriptor m of a launch's `maps` array, whose descriptors are all `struct_bytes` long (the
 * caller's version, map 0's: TUNE_GPURT_TENSOR_MAP_V1_BYTES or TUNE_GPURT_TENSOR_MAP_BYTES), as
 * this version's struct in *out (a version 1 descriptor's later fields take their defaults).
 * *own_bytes is descriptor m's own struct_bytes (struct_bytes where the size is unknown).
 * Returns 1; or 0 for a size this runtime does not read, or a descriptor whose own size is not
 * the array's. */
static inline int tune_tensor_map_read(const tune_gpurt_tensor_map* maps, uint32_t struct_bytes,
                                       int32_t m, tune_gpurt_tensor_map* out, uint32_t* own_bytes) {
  *own_bytes = struct_bytes;
  if (struct_bytes != TUNE_GPURT_TENSOR_MAP_V1_BYTES &&
      struct_bytes != sizeof(tune_gpurt_tensor_map)) {
    return 0;
  }
  memset(out, 0, sizeof *out);
  memcpy(out, (const char*)maps + (size_t)m * struct_bytes, struct_bytes);
  *own_bytes = out->struct_bytes;
  out->struct_bytes = sizeof(tune_gpurt_tensor_map);
  return *own_bytes == struct_bytes;
}

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
  size_t n = (size_t)snprintf(text, size,
                              "argument %u, %u-byte elements, rank %u, dims [%s], strides [%s], "
                              "box [%s], swizzle %u",
                              map->arg, map->element_bytes, map->rank, dims, strides, box,
                              map->swizzle_bytes);
  if (map->im2col != 0 && n < size) {
    const uint32_t spatial = rank > 2 ? (rank - 2 > 3 ? 3 : rank - 2) : 0;
    char corners[96] = "";
    for (uint32_t d = 0; d < spatial; ++d) {
      size_t c = strlen(corners);
      snprintf(corners + c, sizeof corners - c, "%s%d..%d", d ? "," : "", map->lower_corner[d],
               map->upper_corner[d]);
    }
    snprintf(text + n, size - n, ", im2col corners [%s]", corners);
  }
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
  } else if (map->im2col > 1) {
    snprintf(what, sizeof what, "im2col %u is not 0 or 1", map->im2col);
  } else if (map->im2col == 1 && (map->rank < 3 || map->rank > 5)) {
    snprintf(what, sizeof what, "an im2col map of rank %u (3..5)", map->rank);
  }
  for (uint32_t d = 0; what[0] == '\0' && d < map->rank; ++d) {
    /* An im2col box is [channels, pixels, 1...]; its pixels may reach 1024. */
    const uint32_t box_max = map->im2col == 1 && d == 1 ? 1024 : 256;
    if (map->dims[d] < 1 || map->dims[d] > (UINT64_C(1) << 32)) {
      snprintf(what, sizeof what, "dims[%u] = %llu is not 1..2^32", d,
               (unsigned long long)map->dims[d]);
    } else if (map->box[d] < 1 || map->box[d] > box_max) {
      snprintf(what, sizeof what, "box[%u] = %u is not 1..%u", d, map->box[d], box_max);
    } else if (map->im2col == 1 && d >= 2 && map->box[d] != 1) {
      snprintf(what, sizeof what, "box[%u] = %u of an im2col map is not 1", d, map->box[d]);
    } else if (map->element_strides[d] > 8) { /* 0 reads as 1 */
      snprintf(what, sizeof what, "element_strides[%u] = %u is not 1..8", d,
               map->element_strides[d]);
    } else if (d + 1 < map->rank &&
               (map->strides[d] % 16 != 0 || map->strides[d] >= (UINT64_C(1) << 40))) {
      snprintf(what, sizeof what, "strides[%u] = %llu bytes is not a multiple of 16 below 2^40", d,
               (unsigned long long)map->strides[d]);
    }
  }
  if (what[0] == '\0' && map->im2col == 1) {
    const int32_t limit = map->rank == 3 ? 32768 : map->rank == 4 ? 128 : 16;
    for (uint32_t d = 0; what[0] == '\0' && d + 2 < map->rank; ++d) {
      const int32_t lower = map->lower_corner[d], upper = map->upper_corner[d];
      if (lower < -limit || lower >= limit || upper < -limit || upper >= limit) {
        snprintf(what, sizeof what,
                 "im2col corners %d..%d of spatial dimension %u are not "
                 "within %d..%d",
                 lower, upper, d, -limit, limit - 1);
      } else if ((int64_t)lower > (int64_t)map->dims[d + 1] - 1 + upper) {
        snprintf(what, sizeof what,
                 "im2col corners %d..%d of spatial dimension %u bound no "
                 "window corner of its %llu elements",
                 lower, upper, d, (unsigned long long)map->dims[d + 1]);
      }
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
    out->element_strides[d] = map->element_strides[d] == 0 ? 1 : map->element_strides[d];
    if (d + 1 < map->rank) {
      out->global_strides[d] = map->strides[d];
    }
  }
  out->interleave = TUNE_CU_TENSOR_MAP_INTERLEAVE_NONE;
  out->swizzle =
      map->swizzle_bytes == 128 ? TUNE_CU_TENSOR_MAP_SWIZZLE_128B : TUNE_CU_TENSOR_MAP_SWIZZLE_NONE;
  out->l2_promotion = TUNE_CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
  out->oob_fill = TUNE_CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE; /* zeros */
  out->im2col = (int)map->im2col;
  for (uint32_t d = 0; map->im2col == 1 && d + 2 < map->rank; ++d) {
    out->lower_corner[d] = map->lower_corner[d];
    out->upper_corner[d] = map->upper_corner[d];
  }
  return 1;
}

/* The driver function that encodes a prepared map, for the messages that name it. */
static inline const char* tune_tensor_map_encoder(const tune_tensor_map_encoding* e) {
  return e->im2col ? "cuTensorMapEncodeIm2col" : "cuTensorMapEncodeTiled";
}

/* Whether the driver has the function that encodes a prepared map. */
static inline int tune_tensor_map_can_encode(const tune_cuda_driver* cu,
                                             const tune_tensor_map_encoding* e) {
  return e->im2col ? cu->cuTensorMapEncodeIm2col != NULL : cu->cuTensorMapEncodeTiled != NULL;
}

/* tune_tensor_map_encoder(e) of a prepared encoding into `map` (the driver's code; the caller
 * has checked tune_tensor_map_can_encode). */
static inline tune_cu_result tune_tensor_map_encode(const tune_cuda_driver* cu,
                                                    const tune_tensor_map_encoding* e,
                                                    tune_cu_tensor_map* map) {
  if (e->im2col) {
    return cu->cuTensorMapEncodeIm2col(map, e->data_type, e->rank, e->global_address,
                                       e->global_dims, e->global_strides, e->lower_corner,
                                       e->upper_corner, e->box[0], e->box[1], e->element_strides,
                                       e->interleave, e->swizzle, e->l2_promotion, e->oob_fill);
  }
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
