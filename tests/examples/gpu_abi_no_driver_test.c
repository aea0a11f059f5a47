/* GPU kernel libraries from tune_add_kernel_library used by a C program on a machine that may
 * have no GPU driver: the CUDA library is linked (its header's prototypes, return codes and
 * tune_gpurt_last_error), the ROCm library is opened with dlopen. A call without the driver
 * returns TUNE_GPURT_ERROR_DRIVER_NOT_FOUND with a message naming the driver library; where the
 * driver exists but no device does, TUNE_GPURT_ERROR_NO_DEVICE is the documented answer too.
 * On a machine with a device only the forced "driver not found" case runs (the gpu-labelled
 * gpu_kernels_test calls the kernels for real). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_abi_cuda_kernels.h"

static int failures = 0;

#define EXPECT(cond, ...)                                     \
  do {                                                        \
    if (!(cond)) {                                            \
      fprintf(stderr, "%s:%d: FAILED: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                           \
      fprintf(stderr, "\n");                                  \
      ++failures;                                             \
    }                                                         \
  } while (0)

/* 1 when `library` loads and has a device (cuInit / hipInit succeed and count devices > 0). */
static int HasDevice(const char* library, const char* init_name, const char* count_name) {
  void* lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    return 0;
  }
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(lib, init_name);
  int (*count)(int*) = (int (*)(int*))dlsym(lib, count_name);
  int n = 0;
  /* An initialised driver stays loaded (unloading it under its own threads is not safe). */
  return init != NULL && count != NULL && init(0) == 0 && count(&n) == 0 && n > 0;
}

static int DriverLoads(const char* library) {
  void* lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (lib != NULL) {
    dlclose(lib);
  }
  return lib != NULL;
}

typedef int (*GemmFn)(const float*, const float*, float*, void*);
typedef const char* (*LastErrorFn)(void);

/* 1 when a HIP runtime is installed: a child process tries to load it, since some installs abort
 * while loading (e.g. two copies of LLVM's option registry); that counts as installed. */
static int HipInstalled(void) {
  fflush(stdout);
  fflush(stderr);
  pid_t child = fork();
  if (child == 0) {
    _exit(DriverLoads("libamdhip64.so") || DriverLoads("libamdhip64.so.6") ||
                  DriverLoads("libamdhip64.so.5")
              ? 1
              : 0);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child) {
    return 1;
  }
  return !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The ROCm library, opened at run time: without a HIP runtime its kernels return the
 * documented code. Where one is installed there is no AMD device on the machines this runs on
 * (no AMD GPU is available to tune's tests), and loading it is the vendor's business. */
static void CheckRocm(void) {
  /* (GPU_ABI_ROCM_LIBRARY names it where the build tree is not: a copied test.) */
  const char* rocm_path = getenv("GPU_ABI_ROCM_LIBRARY");
  if (rocm_path == NULL || *rocm_path == '\0') {
    rocm_path = TUNE_ROCM_LIBRARY;
  }
  void* rocm = dlopen(rocm_path, RTLD_NOW | RTLD_LOCAL);
  EXPECT(rocm != NULL, "dlopen %s: %s", rocm_path, dlerror());
  if (rocm == NULL) {
    return;
  }
  GemmFn rocm_gemm = (GemmFn)dlsym(rocm, "rocm_gemm");
  LastErrorFn last_error = (LastErrorFn)dlsym(rocm, "tune_gpurt_last_error");
  EXPECT(rocm_gemm != NULL && last_error != NULL, "rocm_gemm / tune_gpurt_last_error");
  if (rocm_gemm != NULL && last_error != NULL) {
    if (!HipInstalled()) {
      int rc = rocm_gemm(NULL, NULL, NULL, NULL);
      EXPECT(rc == TUNE_GPURT_ERROR_DRIVER_NOT_FOUND, "no libamdhip64.so: rc %d", rc);
      EXPECT(strstr(last_error(), "HIP runtime library not found") != NULL &&
                 strstr(last_error(), "libamdhip64.so") != NULL,
             "message: %s", last_error());
    } else {
      printf("a HIP runtime is installed: the ROCm no-driver check does not apply\n");
    }
  }
  dlclose(rocm);
}

int main(void) {
  CheckRocm();

  /* A driver that exists nowhere: the same answer on every machine. */
  setenv("TUNE_GPURT_DRIVER", "libtune_no_such_driver.so.1", 1);
  int rc = gpu_gemm(NULL, NULL, NULL, NULL);
  EXPECT(rc == TUNE_GPURT_ERROR_DRIVER_NOT_FOUND, "forced missing driver: rc %d", rc);
  EXPECT(strstr(tune_gpurt_last_error(), "CUDA driver library not found") != NULL &&
             strstr(tune_gpurt_last_error(), "libtune_no_such_driver.so.1") != NULL,
         "message: %s", tune_gpurt_last_error());
  unsetenv("TUNE_GPURT_DRIVER");

  /* The real driver lookup. */
  if (!DriverLoads("libcuda.so.1")) {
    rc = gpu_gemm_bias(NULL, NULL, NULL, NULL, NULL);
    EXPECT(rc == TUNE_GPURT_ERROR_DRIVER_NOT_FOUND, "no libcuda.so.1: rc %d", rc);
    EXPECT(strstr(tune_gpurt_last_error(), "libcuda.so.1") != NULL, "message: %s",
           tune_gpurt_last_error());
  } else if (!HasDevice("libcuda.so.1", "cuInit", "cuDeviceGetCount")) {
    rc = gpu_gemm_bias(NULL, NULL, NULL, NULL, NULL);
    EXPECT(rc == TUNE_GPURT_ERROR_NO_DEVICE, "libcuda.so.1 without a device: rc %d (%s)", rc,
           tune_gpurt_last_error());
  } else {
    printf("a CUDA device is present: gpu_kernels_test calls the kernels\n");
  }

  if (failures != 0) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
