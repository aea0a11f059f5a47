/* GPU probe timers, run on a GPU host from bench/gpu_probe/run.sh (no CUDA headers: the driver
 * and cuBLAS are loaded with dlopen, like tune's own runtime).
 *
 *   probe-timer kernel LIB.so FUNC M N K REPS [bf16nt]   a tune-compile'd GEMM
 *   probe-timer cublas M N K REPS [bf16nt]               the same product through cuBLAS
 *
 * By default the product is f32, row-major A[M][K] x B[K][N] (layout NN), and cuBLAS runs
 * cublasSgemm (TF32 off: a fresh handle's default math mode). With `bf16nt` every operand is
 * bf16, B is stored [N][K] (layout NT, a Linear layer's weights), the sums are f32, and cuBLAS
 * runs cublasGemmEx (bf16 in and out, CUBLAS_COMPUTE_32F, its default algorithm).
 *
 * Inputs are fixed patterns of small multiples of 1/16; after the first call, 64 sampled
 * elements of C are checked against a double-precision reference (exit 1 naming the first
 * wrong one), so a kernel whose copies race gives an error, not a time. Each rep times back-to-back
 * calls on the default stream with device events, enough of them to last >= 10 ms (TVM's rule, as
 * tune-server times); prints the median rep in microseconds and GFLOPS. REPS 0: one call only (for
 * ncu). */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned long long DevPtr;
typedef int (*GemmFn)(const float*, const float*, float*, void*);
typedef int (*SgemmFn)(void*, int, int, int, int, int, const float*, const float*, int,
                       const float*, int, const float*, float*, int);
/* cublasGemmEx: handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C,
 * Ctype, ldc, computeType, algo. */
typedef int (*GemmExFn)(void*, int, int, int, int, int, const void*, const void*, int, int,
                        const void*, int, int, const void*, void*, int, int, int, int);
enum { kCudaR16BF = 14, kCublasCompute32F = 68, kCublasGemmDefault = -1, kOpN = 0, kOpT = 1 };

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
  GemmExFn gemm_ex;
  void* handle;
  int m, n, k;
  int bf16nt; /* bf16 operands, B stored [N][K] */
  DevPtr a, b, c;
};

/* bf16's bits of x, rounded to nearest even (the inputs here are exact in bf16). */
static unsigned short ToBf16(float x) {
  unsigned u;
  memcpy(&u, &x, 4);
  return (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static float FromBf16(unsigned short h) {
  const unsigned u = (unsigned)h << 16;
  float x;
  memcpy(&x, &u, 4);
  return x;
}

static int Invoke(const struct Call* call) {
  static const float one = 1.0f, zero = 0.0f;
  if (call->fn != NULL) {
    return call->fn((const float*)call->a, (const float*)call->b, (float*)call->c, NULL);
  }
  if (call->bf16nt) {
    /* Row-major C[M][N] = A[M][K] B[N][K]^T is column-major C^T = op_T(B') op_N(A'), where B'
     * (K x N) and A' (K x M) are B and A read column-major. */
    return call->gemm_ex(call->handle, kOpT, kOpN, call->n, call->m, call->k, &one,
                         (const void*)call->b, kCudaR16BF, call->k, (const void*)call->a,
                         kCudaR16BF, call->k, &zero, (void*)call->c, kCudaR16BF, call->n,
                         kCublasCompute32F, kCublasGemmDefault);
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

static size_t Largest(size_t x, size_t y, size_t z) {
  const size_t xy = x > y ? x : y;
  return xy > z ? xy : z;
}

static int CompareFloats(const void* x, const void* y) {
  float a = *(const float*)x, b = *(const float*)y;
  return (a > b) - (a < b);
}

int main(int argc, char** argv) {
  const int is_kernel = (argc == 8 || argc == 9) && strcmp(argv[1], "kernel") == 0;
  const int is_cublas = (argc == 6 || argc == 7) && strcmp(argv[1], "cublas") == 0;
  const int typed = argc == (is_kernel ? 9 : 7);
  if ((!is_kernel && !is_cublas) || (typed && strcmp(argv[argc - 1], "bf16nt") != 0)) {
    fprintf(stderr,
            "usage: probe-timer kernel LIB.so FUNC M N K REPS [bf16nt] | probe-timer cublas M N K "
            "REPS [bf16nt]\n");
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
  int (*cuMemcpyHtoD)(DevPtr, const void*, size_t) = Sym(cu, "cuMemcpyHtoD_v2");
  int (*cuMemcpyDtoH)(void*, DevPtr, size_t) = Sym(cu, "cuMemcpyDtoH_v2");
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
  call.bf16nt = typed;
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
    call.gemm_ex = (GemmExFn)Sym(blas, "cublasGemmEx");
    if (create(&call.handle) != 0) {
      fprintf(stderr, "probe-timer: cublasCreate failed\n");
      return 1;
    }
    label = typed ? "cublas_bf16nt" : "cublas";
  }
  call.m = atoi(argv[arg]);
  call.n = atoi(argv[arg + 1]);
  call.k = atoi(argv[arg + 2]);
  int reps = atoi(argv[arg + 3]);
  const size_t m = call.m, n = call.n, k = call.k;
  const size_t elem = call.bf16nt ? 2 : 4;
  if (cuMemAlloc(&call.a, elem * m * k) != 0 || cuMemAlloc(&call.b, elem * k * n) != 0 ||
      cuMemAlloc(&call.c, elem * m * n) != 0) {
    fprintf(stderr, "probe-timer: cuMemAlloc failed\n");
    return 1;
  }
  /* a[row][p] and b[p][col] (b[col][p] in memory for bf16nt), as floats. */
  float* a = malloc(4 * m * k);
  float* b = malloc(4 * k * n);
  float* c = malloc(4 * m * n);
  /* bf16nt: one bf16 operand at a time, on its way to or from the device. */
  void* staged = call.bf16nt ? malloc(2 * Largest(m * k, k * n, m * n)) : NULL;
  for (size_t i = 0; i < m * k; ++i) {
    a[i] = (float)((int)((i * 37) % 11) - 5) * 0.125f;
  }
  for (size_t i = 0; i < k * n; ++i) {
    b[i] = (float)((int)((i * 53) % 13) - 6) * 0.0625f;
  }
  if (call.bf16nt) {
    unsigned short* h = staged;
    for (size_t i = 0; i < m * k; ++i) {
      h[i] = ToBf16(a[i]);
    }
    cuMemcpyHtoD(call.a, h, 2 * m * k);
    for (size_t col = 0; col < n; ++col) {
      for (size_t p = 0; p < k; ++p) {
        h[col * k + p] = ToBf16(b[p * n + col]);
      }
    }
    cuMemcpyHtoD(call.b, h, 2 * k * n);
  } else {
    cuMemcpyHtoD(call.a, a, 4 * m * k);
    cuMemcpyHtoD(call.b, b, 4 * k * n);
  }
  int rc = Invoke(&call);
  if (cuCtxSynchronize() != 0 || rc != 0) {
    fprintf(stderr, "probe-timer: %s failed (%d)\n", label, rc);
    return 1;
  }
  if (call.bf16nt) {
    unsigned short* h = staged;
    cuMemcpyDtoH(h, call.c, 2 * m * n);
    for (size_t i = 0; i < m * n; ++i) {
      c[i] = FromBf16(h[i]);
    }
  } else {
    cuMemcpyDtoH(c, call.c, 4 * m * n);
  }
  /* f32 sums: 1e-5 of the magnitude; bf16 outputs: one ulp (2^-8) of the value besides. */
  const double rel = call.bf16nt ? 1.0 / 256 : 0;
  for (size_t s = 0; s < 64; ++s) {
    const size_t row = (s * 7919) % m, col = (s * 104729) % n;
    double ref = 0, mag = 0;
    for (size_t p = 0; p < k; ++p) {
      ref += (double)a[row * k + p] * b[p * n + col];
      mag += fabs((double)a[row * k + p] * b[p * n + col]);
    }
    const double got = c[row * n + col];
    if (fabs(got - ref) > 1e-5 * mag + rel * fabs(ref) + 1e-6) {
      fprintf(stderr, "probe-timer: %s: C[%zu][%zu] = %.6g, expected %.6g\n", label, row, col, got,
              ref);
      return 1;
    }
  }
  free(staged);
  free(a);
  free(b);
  free(c);
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
