/* libtune_gpurt.so (see tune_gpurt.h): module loading and kernel launches through the CUDA driver
 * API or the HIP module API, both opened with dlopen. Their entry points are the tables of
 * tune_cuda_driver.h and tune_hip_runtime.h (shared with the library shims); no CUDA or ROCm
 * header is needed. */
#define _GNU_SOURCE
#include "tune_gpurt.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_gpurt_internal.h"

/* CUjit_option values (cuda.h) */
#define CU_JIT_INFO_LOG_BUFFER 3
#define CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES 4
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

/* ---- Process state. ------------------------------------------------------------------------- */

/* One lock for every load: loading is rare (once per module and context), launches never take
 * it. Published pointers are read with acquire loads and written with release stores. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
tune_cuda_driver gpurt_cuda;
static int g_cuda_ready; /* 1 once gpurt_cuda is loaded and cuInit succeeded (under g_lock) */
tune_hip_runtime gpurt_hip;
static int g_hip_ready;

static uint64_t g_module_loads; /* written under g_lock, read atomically */

_Thread_local char gpurt_error[2048];

int32_t gpurt_fail(int32_t code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(gpurt_error, sizeof gpurt_error, format, args);
  va_end(args);
  return code;
}

const char* tune_gpurt_last_error(void) { return gpurt_error; }

uint64_t tune_gpurt_module_loads(void) {
  return __atomic_load_n(&g_module_loads, __ATOMIC_RELAXED);
}

/* A cached function handle of one loaded module. */
typedef struct function_entry {
  struct function_entry* next;
  const char* name_ptr; /* the caller's pointer (a constant of the generated library) */
  char* name;           /* its copy */
  drv_handle function;
} function_entry;

/* The module loaded in one context (CUDA) or on one device (HIP). */
typedef struct loaded_module {
  struct loaded_module* next;
  drv_handle key; /* CUcontext, or the HIP device number + 1 */
  drv_handle module;
  function_entry* functions;
} loaded_module;

#define LOAD_ACQUIRE(p) __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define STORE_RELEASE(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)

/* ---- Driver loading. ------------------------------------------------------------------------ */

/* dlopen of the first library of `names` that loads (TUNE_GPURT_DRIVER overrides them). */
static void* open_driver(const char* const* names, char* tried, size_t tried_size) {
  const char* override = getenv("TUNE_GPURT_DRIVER");
  const char* one[2] = {override, NULL};
  if (override != NULL && *override != '\0') {
    names = one;
  }
  tried[0] = '\0';
  for (const char* const* name = names; *name != NULL; ++name) {
    void* handle = dlopen(*name, RTLD_NOW | RTLD_LOCAL);
    if (handle != NULL) {
      return handle;
    }
    size_t used = strlen(tried);
    snprintf(tried + used, tried_size - used, "%s%s", used ? "; " : "", dlerror());
  }
  return NULL;
}

const char* gpurt_cuda_error_text(drv_result code, char* buf, size_t size) {
  const char* name = NULL;
  const char* text = NULL;
  if (gpurt_cuda.cuGetErrorName != NULL) {
    gpurt_cuda.cuGetErrorName(code, &name);
  }
  if (gpurt_cuda.cuGetErrorString != NULL) {
    gpurt_cuda.cuGetErrorString(code, &text);
  }
  snprintf(buf, size, "%s (%d): %s", name ? name : "CUDA error", code, text ? text : "");
  return buf;
}

const char* gpurt_hip_error_text(drv_result code, char* buf, size_t size) {
  const char* name = gpurt_hip.hipGetErrorName ? gpurt_hip.hipGetErrorName(code) : NULL;
  const char* text = gpurt_hip.hipGetErrorString ? gpurt_hip.hipGetErrorString(code) : NULL;
  snprintf(buf, size, "%s (%d): %s", name ? name : "HIP error", code, text ? text : "");
  return buf;
}

/* Under g_lock. */
static int32_t load_cuda(void) {
  if (g_cuda_ready) {
    return TUNE_GPURT_OK;
  }
  static const char* const names[] = {"libcuda.so.1", "libcuda.so", NULL};
  char tried[768];
  void* lib = open_driver(names, tried, sizeof tried);
  if (lib == NULL) {
    return gpurt_fail(TUNE_GPURT_ERROR_DRIVER_NOT_FOUND,
                      "CUDA driver library not found (libcuda.so.1, from the NVIDIA driver; "
                      "TUNE_GPURT_DRIVER names another): %s",
                      tried);
  }
  tune_cuda_driver api;
  const char* missing = tune_cuda_driver_resolve(lib, &api, NULL);
  if (missing != NULL) {
    return gpurt_fail(TUNE_GPURT_ERROR_DRIVER_NOT_FOUND, "GPU driver %s has no function %s",
                      "libcuda.so.1", missing);
  }
  gpurt_cuda = api; /* the library stays loaded for the life of the process */
  drv_result rc = gpurt_cuda.cuInit(0);
  if (rc != 0) {
    char buf[256];
    return gpurt_fail(TUNE_GPURT_ERROR_NO_DEVICE, "cuInit failed: %s",
                      gpurt_cuda_error_text(rc, buf, sizeof buf));
  }
  STORE_RELEASE(g_cuda_ready, 1);
  return TUNE_GPURT_OK;
}

/* Under g_lock. */
static int32_t load_hip(void) {
  if (g_hip_ready) {
    return TUNE_GPURT_OK;
  }
  static const char* const names[] = {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5",
                                      NULL};
  char tried[768];
  void* lib = open_driver(names, tried, sizeof tried);
  if (lib == NULL) {
    return gpurt_fail(TUNE_GPURT_ERROR_DRIVER_NOT_FOUND,
                      "HIP runtime library not found (libamdhip64.so, from ROCm; TUNE_GPURT_DRIVER "
                      "names another): %s",
                      tried);
  }
  tune_hip_runtime api;
  const char* missing = tune_hip_runtime_resolve(lib, &api, NULL);
  if (missing != NULL) {
    return gpurt_fail(TUNE_GPURT_ERROR_DRIVER_NOT_FOUND, "GPU driver %s has no function %s",
                      "libamdhip64.so", missing);
  }
  gpurt_hip = api;
  drv_result rc = gpurt_hip.hipInit(0);
  if (rc != 0) {
    char buf[256];
    return gpurt_fail(TUNE_GPURT_ERROR_NO_DEVICE, "hipInit failed: %s",
                      gpurt_hip_error_text(rc, buf, sizeof buf));
  }
  STORE_RELEASE(g_hip_ready, 1);
  return TUNE_GPURT_OK;
}

/* ---- Contexts and modules. ------------------------------------------------------------------ */

/* The CUDA context to load in and launch on (see tune_gpurt.h); made current. Under no lock:
 * the driver's own calls are thread-safe, and gpurt_cuda is published before g_cuda_ready. */
static int32_t cuda_context(void* stream, drv_handle* key) {
  char buf[256];
  tune_cu_context ctx = NULL;
  *key = NULL;
  drv_result rc = gpurt_cuda.cuCtxGetCurrent(&ctx);
  if (rc != 0) {
    return gpurt_fail(TUNE_GPURT_ERROR_NO_DEVICE, "cuCtxGetCurrent failed: %s",
                      gpurt_cuda_error_text(rc, buf, sizeof buf));
  }
  if (ctx != NULL) {
    *key = ctx;
    return TUNE_GPURT_OK;
  }
  if (stream != NULL) {
    rc = gpurt_cuda.cuStreamGetCtx((tune_cu_stream)stream, &ctx);
    if (rc != 0) {
      return gpurt_fail(TUNE_GPURT_ERROR_NO_DEVICE, "cuStreamGetCtx of the given stream failed: %s",
                        gpurt_cuda_error_text(rc, buf, sizeof buf));
    }
  } else {
    int device = 0;
    rc = gpurt_cuda.cuDeviceGet(&device, 0);
    if (rc == 0) {
      rc = gpurt_cuda.cuDevicePrimaryCtxRetain(&ctx, device);
    }
    if (rc != 0) {
      return gpurt_fail(TUNE_GPURT_ERROR_NO_DEVICE,
                        "no CUDA context is current and the primary context of device 0 is not "
                        "available: %s",
                        gpurt_cuda_error_text(rc, buf, sizeof buf));
    }
  }
  rc = gpurt_cuda.cuCtxSetCurrent(ctx);
  if (rc != 0) {
    return gpurt_fail(TUNE_GPURT_ERROR_NO_DEVICE, "cuCtxSetCurrent failed: %s",
                      gpurt_cuda_error_text(rc, buf, sizeof buf));
  }
  *key = ctx;
  return TUNE_GPURT_OK;
}

static loaded_module* find_loaded(tune_gpurt_module* module, drv_handle key) {
  for (loaded_module* m = (loaded_module*)LOAD_ACQUIRE(module->state); m != NULL;
       m = LOAD_ACQUIRE(m->next)) {
    if (m->key == key) {
      return m;
    }
  }
  return NULL;
}

/* Under g_lock: loads the image in the current context / on the current device. */
static int32_t load_module(tune_gpurt_module* module, drv_handle key, loaded_module** out) {
  char buf[256];
  drv_handle handle = NULL;
  if (module->api == TUNE_GPURT_API_CUDA) {
    char error_log[4096] = "";
    char info_log[1024] = "";
    int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                     CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {error_log, (void*)(uintptr_t)sizeof error_log, info_log,
                      (void*)(uintptr_t)sizeof info_log};
    tune_cu_module cu_module = NULL;
    drv_result rc = gpurt_cuda.cuModuleLoadDataEx(&cu_module, module->image, 4, options, values);
    handle = cu_module;
    if (rc != 0) {
      return gpurt_fail(TUNE_GPURT_ERROR_MODULE_LOAD,
                        "cuModuleLoadDataEx rejected the library's PTX (%llu bytes): %s%s%s",
                        (unsigned long long)module->image_size,
                        gpurt_cuda_error_text(rc, buf, sizeof buf),
                        error_log[0] ? "; JIT log: " : "", error_log);
    }
  } else {
    tune_hip_module hip_module = NULL;
    drv_result rc = gpurt_hip.hipModuleLoadData(&hip_module, module->image);
    handle = hip_module;
    if (rc != 0) {
      return gpurt_fail(TUNE_GPURT_ERROR_MODULE_LOAD,
                        "hipModuleLoadData rejected the library's code object (%llu bytes): %s",
                        (unsigned long long)module->image_size,
                        gpurt_hip_error_text(rc, buf, sizeof buf));
    }
  }
  loaded_module* loaded = calloc(1, sizeof *loaded);
  if (loaded == NULL) {
    return gpurt_fail(TUNE_GPURT_ERROR_MODULE_LOAD, "out of memory");
  }
  loaded->key = key;
  loaded->module = handle;
  loaded->next = (loaded_module*)module->state;
  STORE_RELEASE(module->state, (void*)loaded);
  __atomic_add_fetch(&g_module_loads, 1, __ATOMIC_RELAXED);
  *out = loaded;
  return TUNE_GPURT_OK;
}

static drv_handle find_function(loaded_module* loaded, const char* name) {
  for (function_entry* f = LOAD_ACQUIRE(loaded->functions); f != NULL; f = LOAD_ACQUIRE(f->next)) {
    if (f->name_ptr == name || strcmp(f->name, name) == 0) {
      return f->function;
    }
  }
  return NULL;
}

/* Under g_lock. */
static int32_t resolve_function(tune_gpurt_module* module, loaded_module* loaded, const char* name,
                                drv_handle* function) {
  char buf[256];
  drv_handle f = find_function(loaded, name);
  if (f != NULL) {
    *function = f;
    return TUNE_GPURT_OK;
  }
  drv_result rc;
  if (module->api == TUNE_GPURT_API_CUDA) {
    tune_cu_function cu_function = NULL;
    rc = gpurt_cuda.cuModuleGetFunction(&cu_function, (tune_cu_module)loaded->module, name);
    f = cu_function;
  } else {
    tune_hip_function hip_function = NULL;
    rc = gpurt_hip.hipModuleGetFunction(&hip_function, (tune_hip_module)loaded->module, name);
    f = hip_function;
  }
  if (rc != 0 || f == NULL) {
    return gpurt_fail(
        TUNE_GPURT_ERROR_KERNEL_NOT_FOUND, "the library's module has no kernel '%s': %s", name,
        module->api == TUNE_GPURT_API_CUDA ? gpurt_cuda_error_text(rc, buf, sizeof buf)
                                           : gpurt_hip_error_text(rc, buf, sizeof buf));
  }
  function_entry* entry = calloc(1, sizeof *entry);
  char* copy = strdup(name);
  if (entry == NULL || copy == NULL) {
    free(entry);
    free(copy);
    return gpurt_fail(TUNE_GPURT_ERROR_KERNEL_NOT_FOUND, "out of memory");
  }
  entry->name_ptr = name;
  entry->name = copy;
  entry->function = f;
  entry->next = loaded->functions;
  STORE_RELEASE(loaded->functions, entry);
  *function = f;
  return TUNE_GPURT_OK;
}

/* Checks the module's header, loads the driver (once; a failure is retried by the next call)
 * and finds the context (CUDA, made current) or device (HIP) that `key` names for the module
 * cache. */
int32_t gpurt_prepare(tune_gpurt_module* module, void* stream, drv_handle* key) {
  if (module->abi_version != TUNE_GPURT_ABI_VERSION) {
    return gpurt_fail(TUNE_GPURT_ERROR_BAD_ARGUMENT,
                      "the library was built for GPU runtime ABI version %d, this libtune_gpurt.so "
                      "implements version %d: rebuild it with the matching tune-compile",
                      module->abi_version, TUNE_GPURT_ABI_VERSION);
  }
  if (module->api != TUNE_GPURT_API_CUDA && module->api != TUNE_GPURT_API_HIP) {
    return gpurt_fail(TUNE_GPURT_ERROR_BAD_ARGUMENT, "unknown GPU api %d (1 = CUDA, 2 = HIP)",
                      module->api);
  }
  const int cuda = module->api == TUNE_GPURT_API_CUDA;
  if (!(cuda ? LOAD_ACQUIRE(g_cuda_ready) : LOAD_ACQUIRE(g_hip_ready))) {
    pthread_mutex_lock(&g_lock);
    int32_t rc = cuda ? load_cuda() : load_hip();
    pthread_mutex_unlock(&g_lock);
    if (rc != TUNE_GPURT_OK) {
      return rc;
    }
  }
  *key = NULL;
  if (cuda) {
    return cuda_context(stream, key);
  }
  char buf[256];
  int device = 0;
  drv_result rc = gpurt_hip.hipGetDevice(&device);
  if (rc != 0) {
    return gpurt_fail(TUNE_GPURT_ERROR_NO_DEVICE, "hipGetDevice failed: %s",
                      gpurt_hip_error_text(rc, buf, sizeof buf));
  }
  *key = (drv_handle)(uintptr_t)(device + 1);
  return TUNE_GPURT_OK;
}

/* ---- Launch. -------------------------------------------------------------------------------- */

/* The function `kernel_name` of `module` in the calling thread's context (CUDA) or device (HIP),
 * loading the module and resolving the function the first time. */
int32_t gpurt_find_kernel(tune_gpurt_module* module, const char* kernel_name, void* stream,
                          drv_handle* function) {
  drv_handle key = NULL;
  int32_t prepared = gpurt_prepare(module, stream, &key);
  if (prepared != TUNE_GPURT_OK) {
    return prepared;
  }
  loaded_module* loaded = find_loaded(module, key);
  *function = loaded != NULL ? find_function(loaded, kernel_name) : NULL;
  if (*function != NULL) {
    return TUNE_GPURT_OK;
  }
  pthread_mutex_lock(&g_lock);
  int32_t rc = TUNE_GPURT_OK;
  loaded = find_loaded(module, key);
  if (loaded == NULL) {
    rc = load_module(module, key, &loaded);
  }
  if (rc == TUNE_GPURT_OK) {
    rc = resolve_function(module, loaded, kernel_name, function);
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

/* Shared memory past the 48 KiB every CUDA kernel may have is an opt-in of the function. */
int32_t gpurt_allow_shared(drv_handle function, const char* kernel_name, uint32_t shared_bytes) {
  if (shared_bytes <= 48 * 1024) {
    return TUNE_GPURT_OK;
  }
  char buf[256];
  drv_result set = gpurt_cuda.cuFuncSetAttribute(
      (tune_cu_function)function, TUNE_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
      (int)shared_bytes);
  if (set != 0) {
    return gpurt_fail(
        TUNE_GPURT_ERROR_LAUNCH,
        "'%s' asks for %u bytes of dynamic shared memory, which the device refuses: %s",
        kernel_name, shared_bytes, gpurt_cuda_error_text(set, buf, sizeof buf));
  }
  return TUNE_GPURT_OK;
}

int32_t gpurt_launch_failed(const char* kernel_name, const uint32_t grid[3],
                            const uint32_t block[3], const uint32_t cluster[3],
                            uint32_t shared_bytes, int cuda, drv_result rc) {
  char buf[256];
  char clustered[64] = "";
  if (cluster != NULL) {
    snprintf(clustered, sizeof clustered, ", clusters of (%u,%u,%u)", cluster[0], cluster[1],
             cluster[2]);
  }
  return gpurt_fail(TUNE_GPURT_ERROR_LAUNCH,
                    "launching '%s' with grid (%u,%u,%u), block (%u,%u,%u)%s, %u shared bytes "
                    "failed: %s",
                    kernel_name, grid[0], grid[1], grid[2], block[0], block[1], block[2], clustered,
                    shared_bytes,
                    cuda ? gpurt_cuda_error_text(rc, buf, sizeof buf)
                         : gpurt_hip_error_text(rc, buf, sizeof buf));
}

int32_t tune_gpurt_launch(tune_gpurt_module* module, const char* kernel_name,
                          const uint32_t grid[3], const uint32_t block[3], uint32_t shared_bytes,
                          void* stream, void** args, int32_t num_args) {
  gpurt_error[0] = '\0';
  if (module == NULL || kernel_name == NULL || grid == NULL || block == NULL ||
      (args == NULL && num_args > 0) || num_args < 0) {
    return gpurt_fail(
        TUNE_GPURT_ERROR_BAD_ARGUMENT,
        "tune_gpurt_launch: module, kernel_name, grid and block must not be NULL, and "
        "args must hold num_args >= 0 pointers");
  }
  const int cuda = module->api == TUNE_GPURT_API_CUDA;
  drv_handle function = NULL;
  int32_t rc = gpurt_find_kernel(module, kernel_name, stream, &function);
  if (rc == TUNE_GPURT_OK && cuda) {
    rc = gpurt_allow_shared(function, kernel_name, shared_bytes);
  }
  if (rc != TUNE_GPURT_OK) {
    return rc;
  }
  drv_result launched =
      cuda ? gpurt_cuda.cuLaunchKernel((tune_cu_function)function, grid[0], grid[1], grid[2],
                                       block[0], block[1], block[2], shared_bytes,
                                       (tune_cu_stream)stream, args, NULL)
           : gpurt_hip.hipModuleLaunchKernel((tune_hip_function)function, grid[0], grid[1], grid[2],
                                             block[0], block[1], block[2], shared_bytes,
                                             (tune_hip_stream)stream, args, NULL);
  if (launched != 0) {
    return gpurt_launch_failed(kernel_name, grid, block, NULL, shared_bytes, cuda, launched);
  }
  return TUNE_GPURT_OK;
}

int32_t tune_gpurt_zero(tune_gpurt_module* module, void* device_ptr, uint64_t bytes, void* stream) {
  gpurt_error[0] = '\0';
  if (module == NULL || (device_ptr == NULL && bytes > 0) || bytes % 4 != 0) {
    return gpurt_fail(
        TUNE_GPURT_ERROR_BAD_ARGUMENT,
        "tune_gpurt_zero: module must not be NULL, device_ptr must not be NULL when bytes "
        "> 0, and bytes must be a multiple of 4 (got %llu)",
        (unsigned long long)bytes);
  }
  drv_handle key = NULL;
  int32_t prepared = gpurt_prepare(module, stream, &key);
  if (prepared != TUNE_GPURT_OK || bytes == 0) {
    return prepared;
  }
  char buf[256];
  const int cuda = module->api == TUNE_GPURT_API_CUDA;
  drv_result rc =
      cuda ? gpurt_cuda.cuMemsetD32Async((tune_cu_deviceptr)(uintptr_t)device_ptr, 0, bytes / 4,
                                         (tune_cu_stream)stream)
           : gpurt_hip.hipMemsetD32Async(device_ptr, 0, bytes / 4, (tune_hip_stream)stream);
  if (rc != 0) {
    return gpurt_fail(TUNE_GPURT_ERROR_LAUNCH, "zeroing %llu bytes at %p failed: %s",
                      (unsigned long long)bytes, device_ptr,
                      cuda ? gpurt_cuda_error_text(rc, buf, sizeof buf)
                           : gpurt_hip_error_text(rc, buf, sizeof buf));
  }
  return TUNE_GPURT_OK;
}
