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

/* Whether a consumer can work without the entry point. */
#define TUNE_CU_REQUIRED 1
#define TUNE_CU_OPTIONAL 0 /* stream capture and graphs: graph timing is refused without them */

/* X(field, return type, (parameters), symbol, fallback symbol or NULL, TUNE_CU_REQUIRED or
 * TUNE_CU_OPTIONAL). The symbol is the versioned name that cuda.h maps the field to; the
 * fallback is the older name a driver may export instead. */
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
  X(cuGraphDestroy, tune_cu_result, (tune_cu_graph graph), "cuGraphDestroy", NULL, TUNE_CU_OPTIONAL)

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
 * optional entry that is missing, or NULL. */
static inline const char* tune_cuda_driver_resolve(void* lib, tune_cuda_driver* table,
                                                   const char** missing_optional) {
  const char* missing = NULL;
  if (missing_optional != NULL) {
    *missing_optional = NULL;
  }
  memset(table, 0, sizeof *table);
#define TUNE_CU_RESOLVE_(field, ret, params, symbol, fallback, need)                     \
  tune_dl_table_resolve_entry(lib, &table->field, sizeof table->field, symbol, fallback, \
                              (need) == TUNE_CU_REQUIRED, &missing, missing_optional);
  TUNE_CUDA_DRIVER_API(TUNE_CU_RESOLVE_)
#undef TUNE_CU_RESOLVE_
  return missing;
}

#ifdef __cplusplus
}
#endif

#endif /* TUNE_CUDA_DRIVER_H_ */
