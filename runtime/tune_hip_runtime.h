/* The HIP runtime API as tune opens it: one list of the entry points (libamdhip64.so, opened with
 * dlopen at run time), their signatures and the symbols they are resolved by, shared by the GPU
 * runtime (tune_gpurt.c), the rocBLAS/MIOpen shims (gpu_shim_util.h) and tune-server's
 * measurement child (rpc_server/gpu/hip_api.h). Nothing of ROCm is needed to build: the types are
 * the runtime's ABI (ROCm 5 and newer; handles are pointers, hipError_t an int) under tune's
 * names. Plain C, header only, like tune_cuda_driver.h.
 *
 * Each consumer opens the library its own way (which file names, which error message), then
 * calls tune_hip_runtime_resolve to fill the table. */
#ifndef TUNE_HIP_RUNTIME_H_
#define TUNE_HIP_RUNTIME_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tune_dl_table.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int tune_hip_error; /* hipError_t: 0 is hipSuccess */
typedef struct ihipModule_t* tune_hip_module;
typedef struct ihipModuleSymbol_t* tune_hip_function;
typedef struct ihipStream_t* tune_hip_stream;
typedef struct ihipEvent_t* tune_hip_event;
typedef struct ihipGraph* tune_hip_graph;
typedef struct hipGraphExec* tune_hip_graph_exec;
typedef struct hipGraphNode* tune_hip_graph_node;

/* Whether a consumer can work without the entry point. */
#define TUNE_HIP_REQUIRED 1
#define TUNE_HIP_OPTIONAL 0 /* stream capture and graphs: graph timing is refused without them */
/* Entries only some calls need (stream-ordered allocation, ROCm 5.3 and newer, and the 2-D
 * copy, for the padded copies of libtune_range.so): null on an older runtime and not reported by
 * tune_hip_runtime_resolve; only a call that needs one fails. */
#define TUNE_HIP_WHEN_USED 2

/* X(field, return type, (parameters), symbol, fallback symbol or NULL, TUNE_HIP_REQUIRED,
 * TUNE_HIP_OPTIONAL or TUNE_HIP_WHEN_USED). hipGetDeviceProperties is ROCm 6's
 * hipGetDevicePropertiesR0600, else ROCm 5's; its struct is never declared (its layout changed
 * between releases): callers pass a buffer larger than either. */
#define TUNE_HIP_RUNTIME_API(X)                                                                    \
  X(hipInit, tune_hip_error, (unsigned int flags), "hipInit", NULL, TUNE_HIP_REQUIRED)             \
  X(hipDriverGetVersion, tune_hip_error, (int* version), "hipDriverGetVersion", NULL,              \
    TUNE_HIP_REQUIRED)                                                                             \
  X(hipGetErrorName, const char*, (tune_hip_error error), "hipGetErrorName", NULL,                 \
    TUNE_HIP_REQUIRED)                                                                             \
  X(hipGetErrorString, const char*, (tune_hip_error error), "hipGetErrorString", NULL,             \
    TUNE_HIP_REQUIRED)                                                                             \
  X(hipGetDeviceCount, tune_hip_error, (int* count), "hipGetDeviceCount", NULL, TUNE_HIP_REQUIRED) \
  X(hipGetDevice, tune_hip_error, (int* device), "hipGetDevice", NULL, TUNE_HIP_REQUIRED)          \
  X(hipSetDevice, tune_hip_error, (int device), "hipSetDevice", NULL, TUNE_HIP_REQUIRED)           \
  X(hipDeviceGetName, tune_hip_error, (char* name, int len, int device), "hipDeviceGetName", NULL, \
    TUNE_HIP_REQUIRED)                                                                             \
  X(hipDeviceGetAttribute, tune_hip_error, (int* value, int attribute, int device),                \
    "hipDeviceGetAttribute", NULL, TUNE_HIP_REQUIRED)                                              \
  X(hipDeviceTotalMem, tune_hip_error, (size_t* bytes, int device), "hipDeviceTotalMem", NULL,     \
    TUNE_HIP_REQUIRED)                                                                             \
  X(hipGetDeviceProperties, tune_hip_error, (void* props, int device),                             \
    "hipGetDevicePropertiesR0600", "hipGetDeviceProperties", TUNE_HIP_REQUIRED)                    \
  X(hipDeviceSynchronize, tune_hip_error, (void), "hipDeviceSynchronize", NULL, TUNE_HIP_REQUIRED) \
  X(hipMalloc, tune_hip_error, (void** ptr, size_t bytes), "hipMalloc", NULL, TUNE_HIP_REQUIRED)   \
  X(hipFree, tune_hip_error, (void* ptr), "hipFree", NULL, TUNE_HIP_REQUIRED)                      \
  X(hipMemcpy, tune_hip_error, (void* dst, const void* src, size_t bytes, int kind), "hipMemcpy",  \
    NULL, TUNE_HIP_REQUIRED)                                                                       \
  X(hipMemsetAsync, tune_hip_error, (void* dst, int value, size_t bytes, tune_hip_stream stream),  \
    "hipMemsetAsync", NULL, TUNE_HIP_REQUIRED)                                                     \
  X(hipMemsetD32Async, tune_hip_error,                                                             \
    (void* dst, int value, size_t count, tune_hip_stream stream), "hipMemsetD32Async", NULL,       \
    TUNE_HIP_REQUIRED)                                                                             \
  X(hipModuleLoadData, tune_hip_error, (tune_hip_module * module, const void* image),              \
    "hipModuleLoadData", NULL, TUNE_HIP_REQUIRED)                                                  \
  X(hipModuleUnload, tune_hip_error, (tune_hip_module module), "hipModuleUnload", NULL,            \
    TUNE_HIP_REQUIRED)                                                                             \
  X(hipModuleGetFunction, tune_hip_error,                                                          \
    (tune_hip_function * function, tune_hip_module module, const char* name),                      \
    "hipModuleGetFunction", NULL, TUNE_HIP_REQUIRED)                                               \
  X(hipFuncGetAttribute, tune_hip_error, (int* value, int attribute, tune_hip_function function),  \
    "hipFuncGetAttribute", NULL, TUNE_HIP_REQUIRED)                                                \
  X(hipModuleLaunchKernel, tune_hip_error,                                                         \
    (tune_hip_function function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,    \
     unsigned int block_x, unsigned int block_y, unsigned int block_z, unsigned int shared_bytes,  \
     tune_hip_stream stream, void** params, void** extra),                                         \
    "hipModuleLaunchKernel", NULL, TUNE_HIP_REQUIRED)                                              \
  X(hipStreamCreateWithFlags, tune_hip_error, (tune_hip_stream * stream, unsigned int flags),      \
    "hipStreamCreateWithFlags", NULL, TUNE_HIP_REQUIRED)                                           \
  X(hipStreamDestroy, tune_hip_error, (tune_hip_stream stream), "hipStreamDestroy", NULL,          \
    TUNE_HIP_REQUIRED)                                                                             \
  X(hipStreamSynchronize, tune_hip_error, (tune_hip_stream stream), "hipStreamSynchronize", NULL,  \
    TUNE_HIP_REQUIRED)                                                                             \
  X(hipEventCreate, tune_hip_error, (tune_hip_event * event), "hipEventCreate", NULL,              \
    TUNE_HIP_REQUIRED)                                                                             \
  X(hipEventDestroy, tune_hip_error, (tune_hip_event event), "hipEventDestroy", NULL,              \
    TUNE_HIP_REQUIRED)                                                                             \
  X(hipEventRecord, tune_hip_error, (tune_hip_event event, tune_hip_stream stream),                \
    "hipEventRecord", NULL, TUNE_HIP_REQUIRED)                                                     \
  X(hipEventSynchronize, tune_hip_error, (tune_hip_event event), "hipEventSynchronize", NULL,      \
    TUNE_HIP_REQUIRED)                                                                             \
  X(hipEventElapsedTime, tune_hip_error, (float* ms, tune_hip_event start, tune_hip_event end),    \
    "hipEventElapsedTime", NULL, TUNE_HIP_REQUIRED)                                                \
  X(hipStreamBeginCapture, tune_hip_error, (tune_hip_stream stream, int mode),                     \
    "hipStreamBeginCapture", NULL, TUNE_HIP_OPTIONAL)                                              \
  X(hipStreamEndCapture, tune_hip_error, (tune_hip_stream stream, tune_hip_graph * graph),         \
    "hipStreamEndCapture", NULL, TUNE_HIP_OPTIONAL)                                                \
  X(hipGraphInstantiate, tune_hip_error,                                                           \
    (tune_hip_graph_exec * exec, tune_hip_graph graph, tune_hip_graph_node * error_node,           \
     char* log, size_t log_bytes),                                                                 \
    "hipGraphInstantiate", NULL, TUNE_HIP_OPTIONAL)                                                \
  X(hipGraphLaunch, tune_hip_error, (tune_hip_graph_exec exec, tune_hip_stream stream),            \
    "hipGraphLaunch", NULL, TUNE_HIP_OPTIONAL)                                                     \
  X(hipGraphExecDestroy, tune_hip_error, (tune_hip_graph_exec exec), "hipGraphExecDestroy", NULL,  \
    TUNE_HIP_OPTIONAL)                                                                             \
  X(hipGraphDestroy, tune_hip_error, (tune_hip_graph graph), "hipGraphDestroy", NULL,              \
    TUNE_HIP_OPTIONAL)                                                                             \
  X(hipMallocAsync, tune_hip_error, (void** ptr, size_t bytes, tune_hip_stream stream),            \
    "hipMallocAsync", NULL, TUNE_HIP_WHEN_USED)                                                    \
  X(hipFreeAsync, tune_hip_error, (void* ptr, tune_hip_stream stream), "hipFreeAsync", NULL,       \
    TUNE_HIP_WHEN_USED)                                                                            \
  X(hipMemcpy2DAsync, tune_hip_error,                                                              \
    (void* dst, size_t dst_pitch, const void* src, size_t src_pitch, size_t width, size_t height,  \
     int kind, tune_hip_stream stream),                                                            \
    "hipMemcpy2DAsync", NULL, TUNE_HIP_WHEN_USED)

/* The table: one function pointer per entry of the list (NULL until resolved, and for an
 * optional entry the runtime lacks). */
typedef struct tune_hip_runtime {
#define TUNE_HIP_FIELD_(field, ret, params, symbol, fallback, need) ret(*field) params;
  TUNE_HIP_RUNTIME_API(TUNE_HIP_FIELD_)
#undef TUNE_HIP_FIELD_
} tune_hip_runtime;

/* Fills `table` from the opened library `lib` (each field by its symbol, else its fallback).
 * Returns NULL when every required entry was found, else the symbol of the first required
 * entry that is missing. `*missing_optional` (when not NULL) is set to the symbol of the first
 * TUNE_HIP_OPTIONAL entry that is missing, or NULL (a missing TUNE_HIP_WHEN_USED entry is only a
 * null field). */
static inline const char* tune_hip_runtime_resolve(void* lib, tune_hip_runtime* table,
                                                   const char** missing_optional) {
  const char* missing = NULL;
  if (missing_optional != NULL) {
    *missing_optional = NULL;
  }
  memset(table, 0, sizeof *table);
#define TUNE_HIP_RESOLVE_(field, ret, params, symbol, fallback, need)                    \
  tune_dl_table_resolve_entry(lib, &table->field, sizeof table->field, symbol, fallback, \
                              (need) == TUNE_HIP_REQUIRED, &missing,                     \
                              (need) == TUNE_HIP_OPTIONAL ? missing_optional : NULL);
  TUNE_HIP_RUNTIME_API(TUNE_HIP_RESOLVE_)
#undef TUNE_HIP_RESOLVE_
  return missing;
}

#ifdef __cplusplus
}
#endif

#endif /* TUNE_HIP_RUNTIME_H_ */
