/* The CUDA driver API as tune opens it: one list of the entry points (libcuda.so.1, opened with
 * dlopen at run time), their signatures and the symbols they are resolved by, shared by the GPU
 * runtime (tune_gpurt.c), the cuBLAS/cuDNN shims (gpu_shim_util.h) and tune-server's measurement
 * child (rpc_server/gpu/cuda_api.h). Nothing of CUDA is needed to build: the types are the
 * driver's ABI (CUDA 11 and newer; handles are pointers, CUresult an int) under tune's names.
 * Plain C, header only, so that it compiles into the runtime that ships inside users' kernel
 * libraries as well as into C++ code.
 *
 * Each consumer opens the library its own way (which file names, which error message), then
 * calls tune_cuda_driver_resolve to fill the table. */
#ifndef TUNE_CUDA_DRIVER_H_
#define TUNE_CUDA_DRIVER_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tune_dl_table.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int tune_cu_result; /* CUresult: 0 is CUDA_SUCCESS */
typedef int tune_cu_device;
typedef unsigned long long tune_cu_deviceptr;
typedef struct CUctx_st* tune_cu_context;
typedef struct CUmod_st* tune_cu_module;
typedef struct CUfunc_st* tune_cu_function;
typedef struct CUstream_st* tune_cu_stream;
typedef struct CUevent_st* tune_cu_event;
typedef struct CUgraph_st* tune_cu_graph;
typedef struct CUgraphExec_st* tune_cu_graph_exec;

/* CUfunction_attribute CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (cuda.h). */
#define TUNE_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8

/* CUtensorMap: the 128 opaque bytes cuTensorMapEncodeTiled writes. The driver wants the address
 * 64-byte aligned; cuda.h's own type is 128-byte aligned, and so is this one. */
#if defined(__cplusplus)
#define TUNE_CU_ALIGN_(n) alignas(n)
#else
#define TUNE_CU_ALIGN_(n) _Alignas(n)
#endif
typedef struct tune_cu_tensor_map {
  TUNE_CU_ALIGN_(128) uint64_t opaque[16];
} tune_cu_tensor_map;

/* The enum values cuTensorMapEncodeTiled takes (cuda.h: CUtensorMapDataType,
 * CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
 * only those tune uses. C enums are passed as int. */
#define TUNE_CU_TENSOR_MAP_DATA_TYPE_UINT8 0
#define TUNE_CU_TENSOR_MAP_DATA_TYPE_UINT16 1
#define TUNE_CU_TENSOR_MAP_DATA_TYPE_UINT32 2
#define TUNE_CU_TENSOR_MAP_INTERLEAVE_NONE 0
#define TUNE_CU_TENSOR_MAP_SWIZZLE_NONE 0
#define TUNE_CU_TENSOR_MAP_SWIZZLE_128B 3
#define TUNE_CU_TENSOR_MAP_L2_PROMOTION_L2_128B 2
#define TUNE_CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE 0

/* CUlaunchAttributeID CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION (cuda.h). */
#define TUNE_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION 4

/* CUlaunchAttribute: the id, padding to 8 bytes, then CUlaunchAttributeValue, a union padded to
 * 64 bytes whose widest members hold pointers (so 8-byte aligned): 72 bytes in all. */
typedef struct tune_cu_launch_attribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    uint64_t align_; /* the union's pointer members make it 8-byte aligned */
    struct {
      unsigned int x;
      unsigned int y;
      unsigned int z;
    } cluster_dim; /* for TUNE_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION */
  } value;
} tune_cu_launch_attribute;

/* CUlaunchConfig: what cuLaunchKernelEx launches (cuda.h's field order; 56 bytes). */
typedef struct tune_cu_launch_config {
  unsigned int grid_x;
  unsigned int grid_y;
  unsigned int grid_z;
  unsigned int block_x;
  unsigned int block_y;
  unsigned int block_z;
  unsigned int shared_bytes;
  tune_cu_stream stream;
  tune_cu_launch_attribute* attrs; /* NULL when num_attrs is 0 */
  unsigned int num_attrs;
} tune_cu_launch_config;

/* CUmemorytype CU_MEMORYTYPE_DEVICE (cuda.h). */
#define TUNE_CU_MEMORYTYPE_DEVICE 2

/* CUDA_MEMCPY2D (cuda.h's CUDA_MEMCPY2D_v2, what cuMemcpy2DAsync_v2 copies; 128 bytes): each
 * side's origin (x in bytes, y in rows), memory type, host pointer, device pointer, array (a
 * CUarray) and pitch, then the width in bytes and the height in rows. */
typedef struct tune_cu_memcpy_2d {
  size_t src_x_bytes;
  size_t src_y;
  int src_memory_type; /* TUNE_CU_MEMORYTYPE_DEVICE: src_device is read */
  const void* src_host;
  tune_cu_deviceptr src_device;
  void* src_array;
  size_t src_pitch;
  size_t dst_x_bytes;
  size_t dst_y;
  int dst_memory_type;
  void* dst_host;
  tune_cu_deviceptr dst_device;
  void* dst_array;
  size_t dst_pitch;
  size_t width_bytes;
  size_t height;
} tune_cu_memcpy_2d;

#if defined(__cplusplus)
#define TUNE_CU_STATIC_ASSERT_(cond, msg) static_assert(cond, msg)
#else
#define TUNE_CU_STATIC_ASSERT_(cond, msg) _Static_assert(cond, msg)
#endif
TUNE_CU_STATIC_ASSERT_(sizeof(tune_cu_tensor_map) == 128, "CUtensorMap is 128 bytes");
TUNE_CU_STATIC_ASSERT_(sizeof(tune_cu_launch_attribute) == 72, "CUlaunchAttribute is 72 bytes");
TUNE_CU_STATIC_ASSERT_(offsetof(tune_cu_launch_attribute, value) == 8,
                       "CUlaunchAttribute's value follows 8 bytes of id");
TUNE_CU_STATIC_ASSERT_(sizeof(tune_cu_launch_config) == 56, "CUlaunchConfig is 56 bytes");
TUNE_CU_STATIC_ASSERT_(offsetof(tune_cu_launch_config, stream) == 32 &&
                           offsetof(tune_cu_launch_config, attrs) == 40 &&
                           offsetof(tune_cu_launch_config, num_attrs) == 48,
                       "CUlaunchConfig's layout");
TUNE_CU_STATIC_ASSERT_(sizeof(tune_cu_memcpy_2d) == 128 &&
                           offsetof(tune_cu_memcpy_2d, src_host) == 24 &&
                           offsetof(tune_cu_memcpy_2d, dst_x_bytes) == 56 &&
                           offsetof(tune_cu_memcpy_2d, dst_host) == 80 &&
                           offsetof(tune_cu_memcpy_2d, width_bytes) == 112,
                       "CUDA_MEMCPY2D's layout");

/* Whether a consumer can work without the entry point. */
#define TUNE_CU_REQUIRED 1
#define TUNE_CU_OPTIONAL 0 /* stream capture and graphs: graph timing is refused without them */
/* Entries only some calls need (CUDA 12's tensor maps and launches with attributes such as
 * clusters; CUDA 11.2's stream-ordered allocation and the 2-D copy, for the padded copies of
 * libtune_range.so): null on an older driver and not reported by tune_cuda_driver_resolve; only
 * a call that needs one fails. */
#define TUNE_CU_WHEN_USED 2

/* X(field, return type, (parameters), symbol, fallback symbol or NULL, TUNE_CU_REQUIRED,
 * TUNE_CU_OPTIONAL or TUNE_CU_WHEN_USED). The symbol is the versioned name that cuda.h maps the
 * field to; the fallback is the older name a driver may export instead. */
#define TUNE_CUDA_DRIVER_API(X)                                                                    \
  X(cuInit, tune_cu_result, (unsigned int flags), "cuInit", NULL, TUNE_CU_REQUIRED)                \
  X(cuDriverGetVersion, tune_cu_result, (int* version), "cuDriverGetVersion", NULL,                \
    TUNE_CU_REQUIRED)                                                                              \
  X(cuGetErrorName, tune_cu_result, (tune_cu_result error, const char** name), "cuGetErrorName",   \
    NULL, TUNE_CU_REQUIRED)                                                                        \
  X(cuGetErrorString, tune_cu_result, (tune_cu_result error, const char** text),                   \
    "cuGetErrorString", NULL, TUNE_CU_REQUIRED)                                                    \
  X(cuDeviceGetCount, tune_cu_result, (int* count), "cuDeviceGetCount", NULL, TUNE_CU_REQUIRED)    \
  X(cuDeviceGet, tune_cu_result, (tune_cu_device * device, int ordinal), "cuDeviceGet", NULL,      \
    TUNE_CU_REQUIRED)                                                                              \
  X(cuDeviceGetName, tune_cu_result, (char* name, int len, tune_cu_device device),                 \
    "cuDeviceGetName", NULL, TUNE_CU_REQUIRED)                                                     \
  X(cuDeviceGetAttribute, tune_cu_result, (int* value, int attribute, tune_cu_device device),      \
    "cuDeviceGetAttribute", NULL, TUNE_CU_REQUIRED)                                                \
  X(cuDeviceTotalMem, tune_cu_result, (size_t* bytes, tune_cu_device device),                      \
    "cuDeviceTotalMem_v2", NULL, TUNE_CU_REQUIRED)                                                 \
  X(cuDevicePrimaryCtxRetain, tune_cu_result, (tune_cu_context * context, tune_cu_device device),  \
    "cuDevicePrimaryCtxRetain", NULL, TUNE_CU_REQUIRED)                                            \
  X(cuDevicePrimaryCtxRelease, tune_cu_result, (tune_cu_device device),                            \
    "cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease", TUNE_CU_REQUIRED)                 \
  X(cuCtxGetCurrent, tune_cu_result, (tune_cu_context * context), "cuCtxGetCurrent", NULL,         \
    TUNE_CU_REQUIRED)                                                                              \
  X(cuCtxSetCurrent, tune_cu_result, (tune_cu_context context), "cuCtxSetCurrent", NULL,           \
    TUNE_CU_REQUIRED)                                                                              \
  X(cuCtxGetDevice, tune_cu_result, (tune_cu_device * device), "cuCtxGetDevice", NULL,             \
    TUNE_CU_REQUIRED)                                                                              \
  X(cuCtxSynchronize, tune_cu_result, (void), "cuCtxSynchronize", NULL, TUNE_CU_REQUIRED)          \
  X(cuMemAlloc, tune_cu_result, (tune_cu_deviceptr * ptr, size_t bytes), "cuMemAlloc_v2", NULL,    \
    TUNE_CU_REQUIRED)                                                                              \
  X(cuMemFree, tune_cu_result, (tune_cu_deviceptr ptr), "cuMemFree_v2", NULL, TUNE_CU_REQUIRED)    \
  X(cuMemcpyHtoD, tune_cu_result, (tune_cu_deviceptr dst, const void* src, size_t bytes),          \
    "cuMemcpyHtoD_v2", NULL, TUNE_CU_REQUIRED)                                                     \
  X(cuMemcpyDtoH, tune_cu_result, (void* dst, tune_cu_deviceptr src, size_t bytes),                \
    "cuMemcpyDtoH_v2", NULL, TUNE_CU_REQUIRED)                                                     \
  X(cuMemsetD8Async, tune_cu_result,                                                               \
    (tune_cu_deviceptr dst, unsigned char value, size_t count, tune_cu_stream stream),             \
    "cuMemsetD8Async", NULL, TUNE_CU_REQUIRED)                                                     \
  X(cuMemsetD32Async, tune_cu_result,                                                              \
    (tune_cu_deviceptr dst, unsigned int value, size_t count, tune_cu_stream stream),              \
    "cuMemsetD32Async", NULL, TUNE_CU_REQUIRED)                                                    \
  X(cuModuleLoadData, tune_cu_result, (tune_cu_module * module, const void* image),                \
    "cuModuleLoadData", NULL, TUNE_CU_REQUIRED)                                                    \
  X(cuModuleLoadDataEx, tune_cu_result,                                                            \
    (tune_cu_module * module, const void* image, unsigned int num_options, int* options,           \
     void** values),                                                                               \
    "cuModuleLoadDataEx", NULL, TUNE_CU_REQUIRED)                                                  \
  X(cuModuleUnload, tune_cu_result, (tune_cu_module module), "cuModuleUnload", NULL,               \
    TUNE_CU_REQUIRED)                                                                              \
  X(cuModuleGetFunction, tune_cu_result,                                                           \
    (tune_cu_function * function, tune_cu_module module, const char* name), "cuModuleGetFunction", \
    NULL, TUNE_CU_REQUIRED)                                                                        \
  X(cuFuncGetAttribute, tune_cu_result, (int* value, int attribute, tune_cu_function function),    \
    "cuFuncGetAttribute", NULL, TUNE_CU_REQUIRED)                                                  \
  X(cuFuncSetAttribute, tune_cu_result, (tune_cu_function function, int attribute, int value),     \
    "cuFuncSetAttribute", NULL, TUNE_CU_REQUIRED)                                                  \
  X(cuLaunchKernel, tune_cu_result,                                                                \
    (tune_cu_function function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,     \
     unsigned int block_x, unsigned int block_y, unsigned int block_z, unsigned int shared_bytes,  \
     tune_cu_stream stream, void** params, void** extra),                                          \
    "cuLaunchKernel", NULL, TUNE_CU_REQUIRED)                                                      \
  X(cuStreamCreate, tune_cu_result, (tune_cu_stream * stream, unsigned int flags),                 \
    "cuStreamCreate", NULL, TUNE_CU_REQUIRED)                                                      \
  X(cuStreamDestroy, tune_cu_result, (tune_cu_stream stream), "cuStreamDestroy_v2", NULL,          \
    TUNE_CU_REQUIRED)                                                                              \
  X(cuStreamSynchronize, tune_cu_result, (tune_cu_stream stream), "cuStreamSynchronize", NULL,     \
    TUNE_CU_REQUIRED)                                                                              \
  X(cuStreamGetCtx, tune_cu_result, (tune_cu_stream stream, tune_cu_context * context),            \
    "cuStreamGetCtx", NULL, TUNE_CU_REQUIRED)                                                      \
  X(cuEventCreate, tune_cu_result, (tune_cu_event * event, unsigned int flags), "cuEventCreate",   \
    NULL, TUNE_CU_REQUIRED)                                                                        \
  X(cuEventDestroy, tune_cu_result, (tune_cu_event event), "cuEventDestroy_v2", NULL,              \
    TUNE_CU_REQUIRED)                                                                              \
  X(cuEventRecord, tune_cu_result, (tune_cu_event event, tune_cu_stream stream), "cuEventRecord",  \
    NULL, TUNE_CU_REQUIRED)                                                                        \
  X(cuEventSynchronize, tune_cu_result, (tune_cu_event event), "cuEventSynchronize", NULL,         \
    TUNE_CU_REQUIRED)                                                                              \
  X(cuEventElapsedTime, tune_cu_result, (float* ms, tune_cu_event start, tune_cu_event end),       \
    "cuEventElapsedTime_v2", "cuEventElapsedTime", TUNE_CU_REQUIRED)                               \
  X(cuStreamBeginCapture, tune_cu_result, (tune_cu_stream stream, int mode),                       \
    "cuStreamBeginCapture_v2", NULL, TUNE_CU_OPTIONAL)                                             \
  X(cuStreamEndCapture, tune_cu_result, (tune_cu_stream stream, tune_cu_graph * graph),            \
    "cuStreamEndCapture", NULL, TUNE_CU_OPTIONAL)                                                  \
  X(cuGraphInstantiateWithFlags, tune_cu_result,                                                   \
    (tune_cu_graph_exec * exec, tune_cu_graph graph, unsigned long long flags),                    \
    "cuGraphInstantiateWithFlags", NULL, TUNE_CU_OPTIONAL)                                         \
  X(cuGraphLaunch, tune_cu_result, (tune_cu_graph_exec exec, tune_cu_stream stream),               \
    "cuGraphLaunch", NULL, TUNE_CU_OPTIONAL)                                                       \
  X(cuGraphExecDestroy, tune_cu_result, (tune_cu_graph_exec exec), "cuGraphExecDestroy", NULL,     \
    TUNE_CU_OPTIONAL)                                                                              \
  X(cuGraphDestroy, tune_cu_result, (tune_cu_graph graph), "cuGraphDestroy", NULL,                 \
    TUNE_CU_OPTIONAL)                                                                              \
  X(cuTensorMapEncodeTiled, tune_cu_result,                                                        \
    (tune_cu_tensor_map * map, int data_type, uint32_t rank, void* global_address,                 \
     const uint64_t* global_dims, const uint64_t* global_strides, const uint32_t* box,             \
     const uint32_t* element_strides, int interleave, int swizzle, int l2_promotion,               \
     int oob_fill),                                                                                \
    "cuTensorMapEncodeTiled", NULL, TUNE_CU_WHEN_USED)                                             \
  X(cuTensorMapEncodeIm2col, tune_cu_result,                                                       \
    (tune_cu_tensor_map * map, int data_type, uint32_t rank, void* global_address,                 \
     const uint64_t* global_dims, const uint64_t* global_strides, const int* lower_corner,         \
     const int* upper_corner, uint32_t channels_per_pixel, uint32_t pixels_per_column,             \
     const uint32_t* element_strides, int interleave, int swizzle, int l2_promotion,               \
     int oob_fill),                                                                                \
    "cuTensorMapEncodeIm2col", NULL, TUNE_CU_WHEN_USED)                                            \
  X(cuLaunchKernelEx, tune_cu_result,                                                              \
    (const tune_cu_launch_config* config, tune_cu_function function, void** params, void** extra), \
    "cuLaunchKernelEx", NULL, TUNE_CU_WHEN_USED)                                                   \
  X(cuMemAllocAsync, tune_cu_result,                                                               \
    (tune_cu_deviceptr * ptr, size_t bytes, tune_cu_stream stream), "cuMemAllocAsync", NULL,       \
    TUNE_CU_WHEN_USED)                                                                             \
  X(cuMemFreeAsync, tune_cu_result, (tune_cu_deviceptr ptr, tune_cu_stream stream),                \
    "cuMemFreeAsync", NULL, TUNE_CU_WHEN_USED)                                                     \
  X(cuMemcpy2DAsync, tune_cu_result, (const tune_cu_memcpy_2d* copy, tune_cu_stream stream),       \
    "cuMemcpy2DAsync_v2", NULL, TUNE_CU_WHEN_USED)

/* The table: one function pointer per entry of the list (NULL until resolved, and for an
 * optional entry the driver lacks). */
typedef struct tune_cuda_driver {
#define TUNE_CU_FIELD_(field, ret, params, symbol, fallback, need) ret(*field) params;
  TUNE_CUDA_DRIVER_API(TUNE_CU_FIELD_)
#undef TUNE_CU_FIELD_
} tune_cuda_driver;

/* Fills `table` from the opened library `lib` (each field by its symbol, else its fallback).
 * Returns NULL when every required entry was found, else the symbol of the first required
 * entry that is missing. `*missing_optional` (when not NULL) is set to the symbol of the first
 * TUNE_CU_OPTIONAL entry that is missing, or NULL (a missing TUNE_CU_WHEN_USED entry is only a
 * null field). */
static inline const char* tune_cuda_driver_resolve(void* lib, tune_cuda_driver* table,
                                                   const char** missing_optional) {
  const char* missing = NULL;
  if (missing_optional != NULL) {
    *missing_optional = NULL;
  }
  memset(table, 0, sizeof *table);
#define TUNE_CU_RESOLVE_(field, ret, params, symbol, fallback, need)                     \
  tune_dl_table_resolve_entry(lib, &table->field, sizeof table->field, symbol, fallback, \
                              (need) == TUNE_CU_REQUIRED, &missing,                      \
                              (need) == TUNE_CU_OPTIONAL ? missing_optional : NULL);
  TUNE_CUDA_DRIVER_API(TUNE_CU_RESOLVE_)
#undef TUNE_CU_RESOLVE_
  return missing;
}

#ifdef __cplusplus
}
#endif

#endif /* TUNE_CUDA_DRIVER_H_ */
