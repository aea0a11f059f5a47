/* GPU probe timers, run on a GPU host from bench/gpu_probe/run.sh (no CUDA headers: the driver
 * and cuBLAS are loaded with dlopen, like tune's own runtime).
 *
 *   probe-timer kernel LIB.so FUNC M N K REPS   a tune-compile'd SGEMM (row-major A[M][K] x B[K][N])
 *   probe-timer cublas M N K REPS               the same product through cublasSgemm (TF32 off:
 *                                               a fresh handle's default math mode)
 *
 * Inputs are filled with ones. Each rep times back-to-back calls on the default stream with
 * device events, enough of them to last >= 10 ms (TVM's rule, as tune-server times); prints
 * the median rep in microseconds and GFLOPS. REPS 0: one call only (for ncu). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long DevPtr;
typedef int (*GemmFn)(const float*, const float*, float*, void*);
typedef int (*SgemmFn)(void*, int, int, int, int, int, const float*, const float*, int,
                       const float*, int, const float*, float*, int);

static void* Sym(void* lib, const char* name) {
  void* p = dlsym(lib, name);
  if (p == NULL) {
    fprintf(stderr, "probe-timer: missing symbol %s\n", name);
    exit(1);
  }
  return p;
}

static int (*cuEventRecord_)(void*, void*);
static int (*cuEventSynchronize_)(void*);
static int (*cuEventElapsedTime_)(float*, void*, void*);

struct Call {
  GemmFn fn;
  SgemmFn sgemm;
  void* handle;
  int m, n, k;
  DevPtr a, b, c;
};

static int Invoke(const struct Call* call) {
  static const float one = 1.0f, zero = 0.0f;
  if (call->fn != NULL) {
    return call->fn((const float*)call->a, (const float*)call->b, (float*)call->c, NULL);
  }
  /* Row-major C = A B is column-major C^T = B^T A^T. */
  return call->sgemm(call->handle, 0, 0, call->n, call->m, call->k, &one, (const float*)call->b,
                     call->n, (const float*)call->a, call->k, &zero, (float*)call->c, call->n);
}

static float TimeMs(const struct Call* call, void* e0, void* e1, int number) {
  float ms = 0;
  cuEventRecord_(e0, NULL);
  for (int i = 0; i < number; ++i) {
    Invoke(call);
  }
  cuEventRecord_(e1, NULL);
  cuEventSynchronize_(e1);
  cuEventElapsedTime_(&ms, e0, e1);
  return ms;
}

static int CompareFloats(const void* x, const void* y) {
  float a = *(const float*)x, b = *(const float*)y;
  return (a > b) - (a < b);
}

int main(int argc, char** argv) {
  const int is_kernel = argc == 8 && strcmp(argv[1], "kernel") == 0;
  const int is_cublas = argc == 6 && strcmp(argv[1], "cublas") == 0;
  if (!is_kernel && !is_cublas) {
    fprintf(stderr,
            "usage: probe-timer kernel LIB.so FUNC M N K REPS | probe-timer cublas M N K REPS\n");
    return 2;
  }
  void* cu = dlopen("libcuda.so.1", RTLD_NOW);
  if (cu == NULL) {
    fprintf(stderr, "probe-timer: %s\n", dlerror());
    return 1;
  }
  int (*cuInit)(unsigned) = Sym(cu, "cuInit");
  int (*cuDeviceGet)(int*, int) = Sym(cu, "cuDeviceGet");
  int (*cuDevicePrimaryCtxRetain)(void**, int) = Sym(cu, "cuDevicePrimaryCtxRetain");
  int (*cuCtxSetCurrent)(void*) = Sym(cu, "cuCtxSetCurrent");
  int (*cuMemAlloc)(DevPtr*, size_t) = Sym(cu, "cuMemAlloc_v2");
  int (*cuMemsetD32)(DevPtr, unsigned, size_t) = Sym(cu, "cuMemsetD32_v2");
  int (*cuCtxSynchronize)(void) = Sym(cu, "cuCtxSynchronize");
  int (*cuEventCreate)(void**, unsigned) = Sym(cu, "cuEventCreate");
  cuEventRecord_ = Sym(cu, "cuEventRecord");
  cuEventSynchronize_ = Sym(cu, "cuEventSynchronize");
  cuEventElapsedTime_ = Sym(cu, "cuEventElapsedTime");
  int device = 0;
  void* ctx = NULL;
  if (cuInit(0) != 0 || cuDeviceGet(&device, 0) != 0 ||
      cuDevicePrimaryCtxRetain(&ctx, device) != 0 || cuCtxSetCurrent(ctx) != 0) {
    fprintf(stderr, "probe-timer: no CUDA device\n");
    return 1;
  }

  struct Call call = {0};
  const char* label;
  int arg = 2;
  if (is_kernel) {
    void* lib = dlopen(argv[2], RTLD_NOW);
    if (lib == NULL) {
      fprintf(stderr, "probe-timer: %s\n", dlerror());
      return 1;
    }
    call.fn = (GemmFn)Sym(lib, argv[3]);
    label = argv[3];
    arg = 4;
  } else {
    void* blas = dlopen("libcublas.so.13", RTLD_NOW);
    if (blas == NULL) {
      blas = dlopen("libcublas.so.12", RTLD_NOW);
    }
    if (blas == NULL) {
      fprintf(stderr, "probe-timer: %s\n", dlerror());
      return 1;
    }
    int (*create)(void**) = Sym(blas, "cublasCreate_v2");
    call.sgemm = (SgemmFn)Sym(blas, "cublasSgemm_v2");
    if (create(&call.handle) != 0) {
      fprintf(stderr, "probe-timer: cublasCreate failed\n");
      return 1;
    }
    label = "cublas";
  }
  call.m = atoi(argv[arg]);
  call.n = atoi(argv[arg + 1]);
  call.k = atoi(argv[arg + 2]);
  int reps = atoi(argv[arg + 3]);
  const size_t m = call.m, n = call.n, k = call.k;
  if (cuMemAlloc(&call.a, 4 * m * k) != 0 || cuMemAlloc(&call.b, 4 * k * n) != 0 ||
      cuMemAlloc(&call.c, 4 * m * n) != 0) {
    fprintf(stderr, "probe-timer: cuMemAlloc failed\n");
    return 1;
  }
  cuMemsetD32(call.a, 0x3f800000u, m * k);
  cuMemsetD32(call.b, 0x3f800000u, k * n);
  int rc = Invoke(&call);
  if (cuCtxSynchronize() != 0 || rc != 0) {
    fprintf(stderr, "probe-timer: %s failed (%d)\n", label, rc);
    return 1;
  }
  if (reps <= 0) {
    return 0;
  }
  void *e0 = NULL, *e1 = NULL;
  cuEventCreate(&e0, 0);
  cuEventCreate(&e1, 0);
  int number = 1;
  while (TimeMs(&call, e0, e1, number) < 10 && number < (1 << 20)) {
    number *= 2;
  }
  float* us = malloc(sizeof(float) * reps);
  for (int r = 0; r < reps; ++r) {
    us[r] = TimeMs(&call, e0, e1, number) * 1000 / number;
  }
  qsort(us, reps, sizeof(float), CompareFloats);
  const float median = us[reps / 2];
  printf("%s %dx%dx%d %.2f us %.0f GFLOPS\n", label, call.m, call.n, call.k, median,
         2.0 * m * n * k / median / 1e3);
  free(us);
  return 0;
}
