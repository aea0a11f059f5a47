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

#include "tune_cuda_driver.h"
#include "tune_hip_runtime.h"
#include "tune_launch_ex.h"

/* ---- Driver tables (tune_cuda_driver.h, tune_hip_runtime.h). ------------------------------ */

typedef int drv_result; /* CUresult / hipError_t: 0 is success */
typedef void* drv_handle;

/* CUjit_option values (cuda.h) */
#define CU_JIT_INFO_LOG_BUFFER 3
#define CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES 4
#define CU_JIT_ERROR_LOG_BUFFER 5
#define CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES 6

/* ---- Process state. ------------------------------------------------------------------------- */

/* One lock for every load: loading is rare (once per module and context), launches never take
 * it. Published pointers are read with acquire loads and written with release stores. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static tune_cuda_driver g_cuda;
static int g_cuda_ready; /* 1 once g_cuda is loaded and cuInit succeeded (under g_lock) */
static tune_hip_runtime g_hip;
static int g_hip_ready;

static uint64_t g_module_loads; /* written under g_lock, read atomically */

static _Thread_local char t_error[2048];

static int32_t fail(int32_t code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(t_error, sizeof t_error, format, args);
  va_end(args);
  return code;
}

const char* tune_gpurt_last_error(void) { return t_error; }

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

static const char* cuda_error_text(drv_result code, char* buf, size_t size) {
  const char* name = NULL;
  const char* text = NULL;
  if (g_cuda.cuGetErrorName != NULL) {
    g_cuda.cuGetErrorName(code, &name);
  }
  if (g_cuda.cuGetErrorString != NULL) {
    g_cuda.cuGetErrorString(code, &text);
  }
  snprintf(buf, size, "%s (%d): %s", name ? name : "CUDA error", code, text ? text : "");
  return buf;
}

static const char* hip_error_text(drv_result code, char* buf, size_t size) {
  const char* name = g_hip.hipGetErrorName ? g_hip.hipGetErrorName(code) : NULL;
  const char* text = g_hip.hipGetErrorString ? g_hip.hipGetErrorString(code) : NULL;
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
    return fail(TUNE_GPURT_ERROR_DRIVER_NOT_FOUND,
                "CUDA driver library not found (libcuda.so.1, from the NVIDIA driver; "
                "TUNE_GPURT_DRIVER names another): %s",
                tried);
  }
  tune_cuda_driver api;
  const char* missing = tune_cuda_driver_resolve(lib, &api, NULL);
  if (missing != NULL) {
    return fail(TUNE_GPURT_ERROR_DRIVER_NOT_FOUND, "GPU driver %s has no function %s",
                "libcuda.so.1", missing);
  }
  g_cuda = api; /* the library stays loaded for the life of the process */
  drv_result rc = g_cuda.cuInit(0);
  if (rc != 0) {
    char buf[256];
    return fail(TUNE_GPURT_ERROR_NO_DEVICE, "cuInit failed: %s",
                cuda_error_text(rc, buf, sizeof buf));
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
    return fail(TUNE_GPURT_ERROR_DRIVER_NOT_FOUND,
                "HIP runtime library not found (libamdhip64.so, from ROCm; TUNE_GPURT_DRIVER "
                "names another): %s",
                tried);
  }
  tune_hip_runtime api;
  const char* missing = tune_hip_runtime_resolve(lib, &api, NULL);
  if (missing != NULL) {
    return fail(TUNE_GPURT_ERROR_DRIVER_NOT_FOUND, "GPU driver %s has no function %s",
                "libamdhip64.so", missing);
  }
  g_hip = api;
  drv_result rc = g_hip.hipInit(0);
  if (rc != 0) {
    char buf[256];
    return fail(TUNE_GPURT_ERROR_NO_DEVICE, "hipInit failed: %s",
                hip_error_text(rc, buf, sizeof buf));
  }
  STORE_RELEASE(g_hip_ready, 1);
  return TUNE_GPURT_OK;
}

/* ---- Contexts and modules. ------------------------------------------------------------------ */

/* The CUDA context to load in and launch on (see tune_gpurt.h); made current. Under no lock:
 * the driver's own calls are thread-safe, and g_cuda is published before g_cuda_ready. */
static int32_t cuda_context(void* stream, drv_handle* key) {
  char buf[256];
  tune_cu_context ctx = NULL;
  *key = NULL;
  drv_result rc = g_cuda.cuCtxGetCurrent(&ctx);
  if (rc != 0) {
    return fail(TUNE_GPURT_ERROR_NO_DEVICE, "cuCtxGetCurrent failed: %s",
                cuda_error_text(rc, buf, sizeof buf));
  }
  if (ctx != NULL) {
    *key = ctx;
    return TUNE_GPURT_OK;
  }
  if (stream != NULL) {
    rc = g_cuda.cuStreamGetCtx((tune_cu_stream)stream, &ctx);
    if (rc != 0) {
      return fail(TUNE_GPURT_ERROR_NO_DEVICE, "cuStreamGetCtx of the given stream failed: %s",
                  cuda_error_text(rc, buf, sizeof buf));
    }
  } else {
    int device = 0;
    rc = g_cuda.cuDeviceGet(&device, 0);
    if (rc == 0) {
      rc = g_cuda.cuDevicePrimaryCtxRetain(&ctx, device);
    }
    if (rc != 0) {
      return fail(TUNE_GPURT_ERROR_NO_DEVICE,
                  "no CUDA context is current and the primary context of device 0 is not "
                  "available: %s",
                  cuda_error_text(rc, buf, sizeof buf));
    }
  }
  rc = g_cuda.cuCtxSetCurrent(ctx);
  if (rc != 0) {
    return fail(TUNE_GPURT_ERROR_NO_DEVICE, "cuCtxSetCurrent failed: %s",
                cuda_error_text(rc, buf, sizeof buf));
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
    drv_result rc = g_cuda.cuModuleLoadDataEx(&cu_module, module->image, 4, options, values);
    handle = cu_module;
    if (rc != 0) {
      return fail(TUNE_GPURT_ERROR_MODULE_LOAD,
                  "cuModuleLoadDataEx rejected the library's PTX (%llu bytes): %s%s%s",
                  (unsigned long long)module->image_size, cuda_error_text(rc, buf, sizeof buf),
                  error_log[0] ? "; JIT log: " : "", error_log);
    }
  } else {
    tune_hip_module hip_module = NULL;
    drv_result rc = g_hip.hipModuleLoadData(&hip_module, module->image);
    handle = hip_module;
    if (rc != 0) {
      return fail(TUNE_GPURT_ERROR_MODULE_LOAD,
                  "hipModuleLoadData rejected the library's code object (%llu bytes): %s",
                  (unsigned long long)module->image_size, hip_error_text(rc, buf, sizeof buf));
    }
  }
  loaded_module* loaded = calloc(1, sizeof *loaded);
  if (loaded == NULL) {
    return fail(TUNE_GPURT_ERROR_MODULE_LOAD, "out of memory");
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
    rc = g_cuda.cuModuleGetFunction(&cu_function, (tune_cu_module)loaded->module, name);
    f = cu_function;
  } else {
    tune_hip_function hip_function = NULL;
    rc = g_hip.hipModuleGetFunction(&hip_function, (tune_hip_module)loaded->module, name);
    f = hip_function;
  }
  if (rc != 0 || f == NULL) {
    return fail(TUNE_GPURT_ERROR_KERNEL_NOT_FOUND, "the library's module has no kernel '%s': %s",
                name,
                module->api == TUNE_GPURT_API_CUDA ? cuda_error_text(rc, buf, sizeof buf)
                                                   : hip_error_text(rc, buf, sizeof buf));
  }
  function_entry* entry = calloc(1, sizeof *entry);
  char* copy = strdup(name);
  if (entry == NULL || copy == NULL) {
    free(entry);
    free(copy);
    return fail(TUNE_GPURT_ERROR_KERNEL_NOT_FOUND, "out of memory");
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
static int32_t prepare(tune_gpurt_module* module, void* stream, drv_handle* key) {
  if (module->abi_version != TUNE_GPURT_ABI_VERSION) {
    return fail(TUNE_GPURT_ERROR_BAD_ARGUMENT,
                "the library was built for GPU runtime ABI version %d, this libtune_gpurt.so "
                "implements version %d: rebuild it with the matching tune-compile",
                module->abi_version, TUNE_GPURT_ABI_VERSION);
  }
  if (module->api != TUNE_GPURT_API_CUDA && module->api != TUNE_GPURT_API_HIP) {
    return fail(TUNE_GPURT_ERROR_BAD_ARGUMENT, "unknown GPU api %d (1 = CUDA, 2 = HIP)",
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
  drv_result rc = g_hip.hipGetDevice(&device);
  if (rc != 0) {
    return fail(TUNE_GPURT_ERROR_NO_DEVICE, "hipGetDevice failed: %s",
                hip_error_text(rc, buf, sizeof buf));
  }
  *key = (drv_handle)(uintptr_t)(device + 1);
  return TUNE_GPURT_OK;
}

/* ---- Launch. -------------------------------------------------------------------------------- */

/* The function `kernel_name` of `module` in the calling thread's context (CUDA) or device (HIP),
 * loading the module and resolving the function the first time. */
static int32_t find_kernel(tune_gpurt_module* module, const char* kernel_name, void* stream,
                           drv_handle* function) {
  drv_handle key = NULL;
  int32_t prepared = prepare(module, stream, &key);
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
static int32_t allow_shared(drv_handle function, const char* kernel_name, uint32_t shared_bytes) {
  if (shared_bytes <= 48 * 1024) {
    return TUNE_GPURT_OK;
  }
  char buf[256];
  drv_result set = g_cuda.cuFuncSetAttribute((tune_cu_function)function,
                                             TUNE_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             (int)shared_bytes);
  if (set != 0) {
    return fail(TUNE_GPURT_ERROR_LAUNCH,
                "'%s' asks for %u bytes of dynamic shared memory, which the device refuses: %s",
                kernel_name, shared_bytes, cuda_error_text(set, buf, sizeof buf));
  }
  return TUNE_GPURT_OK;
}

static int32_t launch_failed(const char* kernel_name, const uint32_t grid[3],
                             const uint32_t block[3], const uint32_t cluster[3],
                             uint32_t shared_bytes, int cuda, drv_result rc) {
  char buf[256];
  char clustered[64] = "";
  if (cluster != NULL) {
    snprintf(clustered, sizeof clustered, ", clusters of (%u,%u,%u)", cluster[0], cluster[1],
             cluster[2]);
  }
  return fail(TUNE_GPURT_ERROR_LAUNCH,
              "launching '%s' with grid (%u,%u,%u), block (%u,%u,%u)%s, %u shared bytes "
              "failed: %s",
              kernel_name, grid[0], grid[1], grid[2], block[0], block[1], block[2], clustered,
              shared_bytes,
              cuda ? cuda_error_text(rc, buf, sizeof buf) : hip_error_text(rc, buf, sizeof buf));
}

int32_t tune_gpurt_launch(tune_gpurt_module* module, const char* kernel_name,
                          const uint32_t grid[3], const uint32_t block[3], uint32_t shared_bytes,
                          void* stream, void** args, int32_t num_args) {
  t_error[0] = '\0';
  if (module == NULL || kernel_name == NULL || grid == NULL || block == NULL ||
      (args == NULL && num_args > 0) || num_args < 0) {
    return fail(TUNE_GPURT_ERROR_BAD_ARGUMENT,
                "tune_gpurt_launch: module, kernel_name, grid and block must not be NULL, and "
                "args must hold num_args >= 0 pointers");
  }
  const int cuda = module->api == TUNE_GPURT_API_CUDA;
  drv_handle function = NULL;
  int32_t rc = find_kernel(module, kernel_name, stream, &function);
  if (rc == TUNE_GPURT_OK && cuda) {
    rc = allow_shared(function, kernel_name, shared_bytes);
  }
  if (rc != TUNE_GPURT_OK) {
    return rc;
  }
  drv_result launched =
      cuda ? g_cuda.cuLaunchKernel((tune_cu_function)function, grid[0], grid[1], grid[2], block[0],
                                   block[1], block[2], shared_bytes, (tune_cu_stream)stream, args,
                                   NULL)
           : g_hip.hipModuleLaunchKernel((tune_hip_function)function, grid[0], grid[1], grid[2],
                                         block[0], block[1], block[2], shared_bytes,
                                         (tune_hip_stream)stream, args, NULL);
  if (launched != 0) {
    return launch_failed(kernel_name, grid, block, NULL, shared_bytes, cuda, launched);
  }
  return TUNE_GPURT_OK;
}

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
    return fail(TUNE_GPURT_ERROR_BAD_ARGUMENT,
                "tune_gpurt_launch_ex: maps must hold num_maps descriptors, 0..%d (got %d)",
                LAUNCH_EX_MAX_MAPS, (int)num_maps);
  }
  if (module->api != TUNE_GPURT_API_CUDA) {
    return fail(TUNE_GPURT_ERROR_BAD_ARGUMENT,
                "tune_gpurt_launch_ex: '%s' has thread-block clusters or tensor maps, which are "
                "CUDA-only; this library's module is for api %d (CUDA is 1)",
                kernel_name, module->api);
  }
  char error[2048];
  if (cluster != NULL && !tune_cluster_check(grid, cluster, error, sizeof error)) {
    return fail(TUNE_GPURT_ERROR_BAD_ARGUMENT, "'%s': %s", kernel_name, error);
  }
  /* The first descriptor's size is the caller's version, and the array's stride. */
  const uint32_t struct_bytes = num_maps > 0 ? maps[0].struct_bytes : 0;
  for (int32_t m = 0; m < num_maps; ++m) {
    tune_gpurt_tensor_map* map = &descriptors[m];
    uint32_t own_bytes;
    /* A later version's descriptors may carry fields this runtime would ignore: refused. */
    if (!tune_tensor_map_read(maps, struct_bytes, m, map, &own_bytes)) {
      return fail(TUNE_GPURT_ERROR_BAD_ARGUMENT,
                  "'%s': tensor map %d is a %u-byte descriptor (map 0: %u bytes), this "
                  "libtune_gpurt.so reads %u-byte (version 1) and %u-byte (version 2) ones, the "
                  "same for every map of a launch: rebuild the library with the matching "
                  "tune-compile, or use the libtune_gpurt.so it came with",
                  kernel_name, (int)m, own_bytes, struct_bytes,
                  (unsigned)TUNE_GPURT_TENSOR_MAP_V1_BYTES,
                  (unsigned)sizeof(tune_gpurt_tensor_map));
    }
    /* args[arg] points at the device pointer; an argument out of range is prepare's refusal. */
    uint64_t address = 0;
    if (map->arg < (uint32_t)num_args) {
      if (args[map->arg] == NULL) {
        return fail(TUNE_GPURT_ERROR_BAD_ARGUMENT,
                    "'%s': tensor map %d is over argument %u, whose args entry is NULL",
                    kernel_name, (int)m, map->arg);
      }
      address = (uint64_t)(uintptr_t)*(void**)args[map->arg];
    }
    if (!tune_tensor_map_prepare(map, (uint32_t)num_args, address, &encodings[m], error,
                                 sizeof error)) {
      return fail(TUNE_GPURT_ERROR_BAD_ARGUMENT, "'%s': %s", kernel_name, error);
    }
  }
  return TUNE_GPURT_OK;
}

int32_t tune_gpurt_launch_ex(tune_gpurt_module* module, const char* kernel_name,
                             const uint32_t grid[3], const uint32_t block[3],
                             const uint32_t cluster[3], uint32_t shared_bytes, void* stream,
                             void** args, int32_t num_args, const tune_gpurt_tensor_map* maps,
                             int32_t num_maps) {
  t_error[0] = '\0';
  if (module == NULL || kernel_name == NULL || grid == NULL || block == NULL ||
      (args == NULL && num_args > 0) || num_args < 0) {
    return fail(TUNE_GPURT_ERROR_BAD_ARGUMENT,
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
    rc = find_kernel(module, kernel_name, stream, &function);
  }
  if (rc == TUNE_GPURT_OK) {
    rc = allow_shared(function, kernel_name, shared_bytes);
  }
  if (rc != TUNE_GPURT_OK) {
    return rc;
  }
  for (int32_t m = 0; m < num_maps; ++m) {
    if (!tune_tensor_map_can_encode(&g_cuda, &encodings[m])) {
      return fail(TUNE_GPURT_ERROR_DRIVER_NOT_FOUND,
                  "'%s' passes tensor map %d, and the CUDA driver has no %s (CUDA 12 and newer)",
                  kernel_name, (int)m, tune_tensor_map_encoder(&encodings[m]));
    }
  }
  if (clustered && g_cuda.cuLaunchKernelEx == NULL) {
    return fail(TUNE_GPURT_ERROR_DRIVER_NOT_FOUND,
                "'%s' is launched in clusters, and the CUDA driver has no cuLaunchKernelEx (CUDA "
                "12 and newer)",
                kernel_name);
  }

  /* Encoded on every call: the arguments' pointers may differ from the last call's. */
  char buf[256];
  tune_cu_tensor_map encoded[LAUNCH_EX_MAX_MAPS];
  for (int32_t m = 0; m < num_maps; ++m) {
    drv_result encode = tune_tensor_map_encode(&g_cuda, &encodings[m], &encoded[m]);
    if (encode != 0) {
      char described[512];
      tune_tensor_map_describe(&descriptors[m], described, sizeof described);
      return fail(TUNE_GPURT_ERROR_BAD_ARGUMENT,
                  "'%s': %s refused the tensor map over %s at %p: %s (%s)", kernel_name,
                  tune_tensor_map_encoder(&encodings[m]), described, encodings[m].global_address,
                  cuda_error_text(encode, buf, sizeof buf), TUNE_TENSOR_MAP_RULES);
    }
  }

  /* The parameters: the arguments, then each map by value. */
  void* stack_params[LAUNCH_EX_STACK_PARAMS];
  const size_t num_params = (size_t)num_args + (size_t)num_maps;
  void** params =
      num_params <= LAUNCH_EX_STACK_PARAMS ? stack_params : malloc(num_params * sizeof(void*));
  if (params == NULL) {
    return fail(TUNE_GPURT_ERROR_LAUNCH, "out of memory for %zu kernel parameters", num_params);
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
    launched = g_cuda.cuLaunchKernelEx(&config, (tune_cu_function)function, params, NULL);
  } else {
    launched = g_cuda.cuLaunchKernel((tune_cu_function)function, grid[0], grid[1], grid[2],
                                     block[0], block[1], block[2], shared_bytes,
                                     (tune_cu_stream)stream, params, NULL);
  }
  if (params != stack_params) {
    free(params);
  }
  if (launched != 0) {
    return launch_failed(kernel_name, grid, block, clustered ? cluster : NULL, shared_bytes, 1,
                         launched);
  }
  return TUNE_GPURT_OK;
}

int32_t tune_gpurt_zero(tune_gpurt_module* module, void* device_ptr, uint64_t bytes, void* stream) {
  t_error[0] = '\0';
  if (module == NULL || (device_ptr == NULL && bytes > 0) || bytes % 4 != 0) {
    return fail(TUNE_GPURT_ERROR_BAD_ARGUMENT,
                "tune_gpurt_zero: module must not be NULL, device_ptr must not be NULL when bytes "
                "> 0, and bytes must be a multiple of 4 (got %llu)",
                (unsigned long long)bytes);
  }
  drv_handle key = NULL;
  int32_t prepared = prepare(module, stream, &key);
  if (prepared != TUNE_GPURT_OK || bytes == 0) {
    return prepared;
  }
  char buf[256];
  const int cuda = module->api == TUNE_GPURT_API_CUDA;
  drv_result rc = cuda ? g_cuda.cuMemsetD32Async((tune_cu_deviceptr)(uintptr_t)device_ptr, 0,
                                                 bytes / 4, (tune_cu_stream)stream)
                       : g_hip.hipMemsetD32Async(device_ptr, 0, bytes / 4, (tune_hip_stream)stream);
  if (rc != 0) {
    return fail(TUNE_GPURT_ERROR_LAUNCH, "zeroing %llu bytes at %p failed: %s",
                (unsigned long long)bytes, device_ptr,
                cuda ? cuda_error_text(rc, buf, sizeof buf) : hip_error_text(rc, buf, sizeof buf));
  }
  return TUNE_GPURT_OK;
}

/* ---- Device memory of libtune_range.so (tune_gpurt_device_memory). ------------------------- */

/* Checks `ctx` (the library's module), loads the driver and makes the context current. */
static int32_t range_prepare(void* ctx, void* stream, const char* op) {
  t_error[0] = '\0';
  if (ctx == NULL) {
    return fail(TUNE_GPURT_ERROR_BAD_ARGUMENT,
                "tune_gpurt_device_memory.%s: the context is NULL (it must be the library's "
                "tune_gpurt_module)",
                op);
  }
  drv_handle key = NULL;
  return prepare((tune_gpurt_module*)ctx, stream, &key);
}

static int32_t range_missing(const char* function, const char* since) {
  return fail(TUNE_GPURT_ERROR_DRIVER_NOT_FOUND,
              "the GPU driver has no %s (%s and newer), which the padded copies of a shape range "
              "need",
              function, since);
}

static int32_t range_alloc(void* ctx, uint64_t bytes, void* stream, void** out) {
  *out = NULL;
  int32_t prepared = range_prepare(ctx, stream, "alloc");
  if (prepared != TUNE_GPURT_OK) {
    return prepared;
  }
  const tune_gpurt_module* module = (const tune_gpurt_module*)ctx;
  char buf[256];
  if (module->api == TUNE_GPURT_API_CUDA) {
    if (g_cuda.cuMemAllocAsync == NULL) {
      return range_missing("cuMemAllocAsync", "CUDA 11.2");
    }
    tune_cu_deviceptr ptr = 0;
    drv_result rc = g_cuda.cuMemAllocAsync(&ptr, (size_t)bytes, (tune_cu_stream)stream);
    if (rc != 0) {
      return fail(TUNE_GPURT_ERROR_LAUNCH, "cuMemAllocAsync of %llu bytes failed: %s",
                  (unsigned long long)bytes, cuda_error_text(rc, buf, sizeof buf));
    }
    *out = (void*)(uintptr_t)ptr;
    return TUNE_GPURT_OK;
  }
  if (g_hip.hipMallocAsync == NULL) {
    return range_missing("hipMallocAsync", "ROCm 5.3");
  }
  drv_result rc = g_hip.hipMallocAsync(out, (size_t)bytes, (tune_hip_stream)stream);
  if (rc != 0) {
    *out = NULL;
    return fail(TUNE_GPURT_ERROR_LAUNCH, "hipMallocAsync of %llu bytes failed: %s",
                (unsigned long long)bytes, hip_error_text(rc, buf, sizeof buf));
  }
  return TUNE_GPURT_OK;
}

static int32_t range_release(void* ctx, void* ptr, void* stream) {
  int32_t prepared = range_prepare(ctx, stream, "release");
  if (prepared != TUNE_GPURT_OK) {
    return prepared;
  }
  const tune_gpurt_module* module = (const tune_gpurt_module*)ctx;
  char buf[256];
  if (module->api == TUNE_GPURT_API_CUDA) {
    if (g_cuda.cuMemFreeAsync == NULL) {
      return range_missing("cuMemFreeAsync", "CUDA 11.2");
    }
    drv_result rc =
        g_cuda.cuMemFreeAsync((tune_cu_deviceptr)(uintptr_t)ptr, (tune_cu_stream)stream);
    if (rc != 0) {
      return fail(TUNE_GPURT_ERROR_LAUNCH, "cuMemFreeAsync of %p failed: %s", ptr,
                  cuda_error_text(rc, buf, sizeof buf));
    }
    return TUNE_GPURT_OK;
  }
  if (g_hip.hipFreeAsync == NULL) {
    return range_missing("hipFreeAsync", "ROCm 5.3");
  }
  drv_result rc = g_hip.hipFreeAsync(ptr, (tune_hip_stream)stream);
  if (rc != 0) {
    return fail(TUNE_GPURT_ERROR_LAUNCH, "hipFreeAsync of %p failed: %s", ptr,
                hip_error_text(rc, buf, sizeof buf));
  }
  return TUNE_GPURT_OK;
}

static int32_t range_zero(void* ctx, void* ptr, uint64_t bytes, void* stream) {
  return tune_gpurt_zero((tune_gpurt_module*)ctx, ptr, bytes, stream);
}

/* hipMemcpyKind hipMemcpyDeviceToDevice (hip_runtime_api.h). */
#define HIP_MEMCPY_DEVICE_TO_DEVICE 3

static int32_t range_copy_2d(void* ctx, void* dst, uint64_t dst_pitch, const void* src,
                             uint64_t src_pitch, uint64_t width, uint64_t height, void* stream) {
  int32_t prepared = range_prepare(ctx, stream, "copy_2d");
  if (prepared != TUNE_GPURT_OK) {
    return prepared;
  }
  const tune_gpurt_module* module = (const tune_gpurt_module*)ctx;
  char buf[256];
  drv_result rc;
  if (module->api == TUNE_GPURT_API_CUDA) {
    if (g_cuda.cuMemcpy2DAsync == NULL) {
      return range_missing("cuMemcpy2DAsync_v2", "CUDA 3.2");
    }
    tune_cu_memcpy_2d copy;
    memset(&copy, 0, sizeof copy);
    copy.src_memory_type = TUNE_CU_MEMORYTYPE_DEVICE;
    copy.src_device = (tune_cu_deviceptr)(uintptr_t)src;
    copy.src_pitch = (size_t)src_pitch;
    copy.dst_memory_type = TUNE_CU_MEMORYTYPE_DEVICE;
    copy.dst_device = (tune_cu_deviceptr)(uintptr_t)dst;
    copy.dst_pitch = (size_t)dst_pitch;
    copy.width_bytes = (size_t)width;
    copy.height = (size_t)height;
    rc = g_cuda.cuMemcpy2DAsync(&copy, (tune_cu_stream)stream);
  } else {
    if (g_hip.hipMemcpy2DAsync == NULL) {
      return range_missing("hipMemcpy2DAsync", "ROCm 5");
    }
    rc = g_hip.hipMemcpy2DAsync(dst, (size_t)dst_pitch, src, (size_t)src_pitch, (size_t)width,
                                (size_t)height, HIP_MEMCPY_DEVICE_TO_DEVICE,
                                (tune_hip_stream)stream);
  }
  if (rc != 0) {
    const int cuda = module->api == TUNE_GPURT_API_CUDA;
    return fail(TUNE_GPURT_ERROR_LAUNCH,
                "%s of %llu rows of %llu bytes from %p (pitch %llu) to %p (pitch %llu) failed: %s",
                cuda ? "cuMemcpy2DAsync" : "hipMemcpy2DAsync", (unsigned long long)height,
                (unsigned long long)width, src, (unsigned long long)src_pitch, dst,
                (unsigned long long)dst_pitch,
                cuda ? cuda_error_text(rc, buf, sizeof buf) : hip_error_text(rc, buf, sizeof buf));
  }
  return TUNE_GPURT_OK;
}

const tune_range_memory tune_gpurt_device_memory = {range_alloc, range_release, range_zero,
                                                    range_copy_2d, tune_gpurt_last_error};
