/* What the files of libtune_gpurt.so share (tune_gpurt.c: the driver, modules, launches;
 * tune_gpurt_launch_ex.c: launches with clusters and tensor maps; tune_gpurt_memory.c: the device
 * memory of shape ranges). Hidden: the library exports only tune_gpurt.h. */
#ifndef TUNE_GPURT_INTERNAL_H_
#define TUNE_GPURT_INTERNAL_H_

#include <stdint.h>

#include "tune_cuda_driver.h"
#include "tune_gpurt.h"
#include "tune_hip_runtime.h"
#include "tune_launch_ex.h"

typedef int drv_result; /* CUresult / hipError_t: 0 is success */
typedef void* drv_handle;

/* The driver tables, filled once by gpurt_prepare (tune_cuda_driver.h, tune_hip_runtime.h). */
extern tune_cuda_driver gpurt_cuda;
extern tune_hip_runtime gpurt_hip;

/* The calling thread's last error (tune_gpurt_last_error); an entry point clears it first. */
extern _Thread_local char gpurt_error[2048];

/* Formats the thread's error and returns `code`. */
int32_t gpurt_fail(int32_t code, const char* format, ...) __attribute__((format(printf, 2, 3)));

/* A driver status as "NAME (code): description" in `buf`. */
const char* gpurt_cuda_error_text(drv_result code, char* buf, size_t size);
const char* gpurt_hip_error_text(drv_result code, char* buf, size_t size);

/* Checks the module's header, loads the driver (once; a failure is retried by the next call)
 * and finds the context (CUDA, made current) or device (HIP) that `key` names for the module
 * cache. */
int32_t gpurt_prepare(tune_gpurt_module* module, void* stream, drv_handle* key);

/* The function `kernel_name` of `module` in the calling thread's context (CUDA) or device (HIP),
 * loading the module and resolving the function the first time. */
int32_t gpurt_find_kernel(tune_gpurt_module* module, const char* kernel_name, void* stream,
                          drv_handle* function);

/* Shared memory past the 48 KiB every CUDA kernel may have is an opt-in of the function. */
int32_t gpurt_allow_shared(drv_handle function, const char* kernel_name, uint32_t shared_bytes);

/* The error of a refused launch (`cuda`: 1 for the CUDA driver, 0 for HIP), naming its shape. */
int32_t gpurt_launch_failed(const char* kernel_name, const uint32_t grid[3],
                            const uint32_t block[3], const uint32_t cluster[3],
                            uint32_t shared_bytes, int cuda, drv_result rc);

#endif /* TUNE_GPURT_INTERNAL_H_ */
