/* libtune_gpurt.so's launches with thread-block clusters and TMA tensor maps
 * (tune_gpurt_launch_ex, tune_gpurt.h): the checks that need no driver, the maps encoded by the
 * driver on every call, and cuLaunchKernelEx. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tune_gpurt_internal.h"

/* Kernel parameters held on the stack; a launch with more takes them from the heap. */
#define LAUNCH_EX_STACK_PARAMS 32
/* More TMA descriptors than a kernel has any use for (each names one operand's tiling). */
#define LAUNCH_EX_MAX_MAPS 16

/* The checks of tune_gpurt_launch_ex that need no driver; fills descriptors[num_maps] with the
 * maps as this version reads them, and encodings[num_maps] with each one's encoder arguments
 * (over the pointer its argument holds). */
static int32_t check_launch_ex(const tune_gpurt_module* module, const char* kernel_name,
                               const uint32_t grid[3], const uint32_t cluster[3], void** args,
                               int32_t num_args, const tune_gpurt_tensor_map* maps,
                               int32_t num_maps, tune_gpurt_tensor_map* descriptors,
                               tune_tensor_map_encoding* encodings) {
  if (num_maps < 0 || num_maps > LAUNCH_EX_MAX_MAPS || (maps == NULL && num_maps > 0)) {
    return gpurt_fail(TUNE_GPURT_ERROR_BAD_ARGUMENT,
                      "tune_gpurt_launch_ex: maps must hold num_maps descriptors, 0..%d (got %d)",
                      LAUNCH_EX_MAX_MAPS, (int)num_maps);
  }
  if (module->api != TUNE_GPURT_API_CUDA) {
    return gpurt_fail(
        TUNE_GPURT_ERROR_BAD_ARGUMENT,
        "tune_gpurt_launch_ex: '%s' has thread-block clusters or tensor maps, which are "
        "CUDA-only; this library's module is for api %d (CUDA is 1)",
        kernel_name, module->api);
  }
  char error[2048];
  if (cluster != NULL && !tune_cluster_check(grid, cluster, error, sizeof error)) {
    return gpurt_fail(TUNE_GPURT_ERROR_BAD_ARGUMENT, "'%s': %s", kernel_name, error);
  }
  /* The first descriptor's size is the caller's version, and the array's stride. */
  const uint32_t struct_bytes = num_maps > 0 ? maps[0].struct_bytes : 0;
  for (int32_t m = 0; m < num_maps; ++m) {
    tune_gpurt_tensor_map* map = &descriptors[m];
    uint32_t own_bytes;
    /* A later version's descriptors may carry fields this runtime would ignore: refused. */
    if (!tune_tensor_map_read(maps, struct_bytes, m, map, &own_bytes)) {
      return gpurt_fail(
          TUNE_GPURT_ERROR_BAD_ARGUMENT,
          "'%s': tensor map %d is a %u-byte descriptor (map 0: %u bytes), this "
          "libtune_gpurt.so reads %u-byte (version 1) and %u-byte (version 2) ones, the "
          "same for every map of a launch: rebuild the library with the matching "
          "tune-compile, or use the libtune_gpurt.so it came with",
          kernel_name, (int)m, own_bytes, struct_bytes, (unsigned)TUNE_GPURT_TENSOR_MAP_V1_BYTES,
          (unsigned)sizeof(tune_gpurt_tensor_map));
    }
    /* args[arg] points at the device pointer; an argument out of range is gpurt_prepare's refusal.
     */
    uint64_t address = 0;
    if (map->arg < (uint32_t)num_args) {
      if (args[map->arg] == NULL) {
        return gpurt_fail(TUNE_GPURT_ERROR_BAD_ARGUMENT,
                          "'%s': tensor map %d is over argument %u, whose args entry is NULL",
                          kernel_name, (int)m, map->arg);
      }
      address = (uint64_t)(uintptr_t)*(void**)args[map->arg];
    }
    if (!tune_tensor_map_prepare(map, (uint32_t)num_args, address, &encodings[m], error,
                                 sizeof error)) {
      return gpurt_fail(TUNE_GPURT_ERROR_BAD_ARGUMENT, "'%s': %s", kernel_name, error);
    }
  }
  return TUNE_GPURT_OK;
}

int32_t tune_gpurt_launch_ex(tune_gpurt_module* module, const char* kernel_name,
                             const uint32_t grid[3], const uint32_t block[3],
                             const uint32_t cluster[3], uint32_t shared_bytes, void* stream,
                             void** args, int32_t num_args, const tune_gpurt_tensor_map* maps,
                             int32_t num_maps) {
  gpurt_error[0] = '\0';
  if (module == NULL || kernel_name == NULL || grid == NULL || block == NULL ||
      (args == NULL && num_args > 0) || num_args < 0) {
    return gpurt_fail(
        TUNE_GPURT_ERROR_BAD_ARGUMENT,
        "tune_gpurt_launch_ex: module, kernel_name, grid and block must not be NULL, and "
        "args must hold num_args >= 0 pointers");
  }
  const int clustered = cluster != NULL && (cluster[0] != 1 || cluster[1] != 1 || cluster[2] != 1);
  if (!clustered && num_maps == 0) {
    return tune_gpurt_launch(module, kernel_name, grid, block, shared_bytes, stream, args,
                             num_args);
  }
  tune_gpurt_tensor_map descriptors[LAUNCH_EX_MAX_MAPS];
  tune_tensor_map_encoding encodings[LAUNCH_EX_MAX_MAPS];
  int32_t rc = check_launch_ex(module, kernel_name, grid, clustered ? cluster : NULL, args,
                               num_args, maps, num_maps, descriptors, encodings);
  drv_handle function = NULL;
  if (rc == TUNE_GPURT_OK) {
    rc = gpurt_find_kernel(module, kernel_name, stream, &function);
  }
  if (rc == TUNE_GPURT_OK) {
    rc = gpurt_allow_shared(function, kernel_name, shared_bytes);
  }
  if (rc != TUNE_GPURT_OK) {
    return rc;
  }
  for (int32_t m = 0; m < num_maps; ++m) {
    if (!tune_tensor_map_can_encode(&gpurt_cuda, &encodings[m])) {
      return gpurt_fail(
          TUNE_GPURT_ERROR_DRIVER_NOT_FOUND,
          "'%s' passes tensor map %d, and the CUDA driver has no %s (CUDA 12 and newer)",
          kernel_name, (int)m, tune_tensor_map_encoder(&encodings[m]));
    }
  }
  if (clustered && gpurt_cuda.cuLaunchKernelEx == NULL) {
    return gpurt_fail(
        TUNE_GPURT_ERROR_DRIVER_NOT_FOUND,
        "'%s' is launched in clusters, and the CUDA driver has no cuLaunchKernelEx (CUDA "
        "12 and newer)",
        kernel_name);
  }

  /* Encoded on every call: the arguments' pointers may differ from the last call's. */
  char buf[256];
  tune_cu_tensor_map encoded[LAUNCH_EX_MAX_MAPS];
  for (int32_t m = 0; m < num_maps; ++m) {
    drv_result encode = tune_tensor_map_encode(&gpurt_cuda, &encodings[m], &encoded[m]);
    if (encode != 0) {
      char described[512];
      tune_tensor_map_describe(&descriptors[m], described, sizeof described);
      return gpurt_fail(TUNE_GPURT_ERROR_BAD_ARGUMENT,
                        "'%s': %s refused the tensor map over %s at %p: %s (%s)", kernel_name,
                        tune_tensor_map_encoder(&encodings[m]), described,
                        encodings[m].global_address, gpurt_cuda_error_text(encode, buf, sizeof buf),
                        TUNE_TENSOR_MAP_RULES);
    }
  }

  /* The parameters: the arguments, then each map by value. */
  void* stack_params[LAUNCH_EX_STACK_PARAMS];
  const size_t num_params = (size_t)num_args + (size_t)num_maps;
  void** params =
      num_params <= LAUNCH_EX_STACK_PARAMS ? stack_params : malloc(num_params * sizeof(void*));
  if (params == NULL) {
    return gpurt_fail(TUNE_GPURT_ERROR_LAUNCH, "out of memory for %zu kernel parameters",
                      num_params);
  }
  for (int32_t a = 0; a < num_args; ++a) {
    params[a] = args[a];
  }
  for (int32_t m = 0; m < num_maps; ++m) {
    params[num_args + m] = &encoded[m];
  }
  drv_result launched;
  if (clustered) {
    tune_cu_launch_attribute attribute;
    memset(&attribute, 0, sizeof attribute);
    attribute.id = TUNE_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attribute.value.cluster_dim.x = cluster[0];
    attribute.value.cluster_dim.y = cluster[1];
    attribute.value.cluster_dim.z = cluster[2];
    tune_cu_launch_config config;
    memset(&config, 0, sizeof config);
    config.grid_x = grid[0];
    config.grid_y = grid[1];
    config.grid_z = grid[2];
    config.block_x = block[0];
    config.block_y = block[1];
    config.block_z = block[2];
    config.shared_bytes = shared_bytes;
    config.stream = (tune_cu_stream)stream;
    config.attrs = &attribute;
    config.num_attrs = 1;
    launched = gpurt_cuda.cuLaunchKernelEx(&config, (tune_cu_function)function, params, NULL);
  } else {
    launched = gpurt_cuda.cuLaunchKernel((tune_cu_function)function, grid[0], grid[1], grid[2],
                                         block[0], block[1], block[2], shared_bytes,
                                         (tune_cu_stream)stream, params, NULL);
  }
  if (params != stack_params) {
    free(params);
  }
  if (launched != 0) {
    return gpurt_launch_failed(kernel_name, grid, block, clustered ? cluster : NULL, shared_bytes,
                               1, launched);
  }
  return TUNE_GPURT_OK;
}
