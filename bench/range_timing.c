/* Times one GEMM kernel function of a library built by tune-compile: a fixed-size kernel
 * `int f(const float* A, const float* B, float* C)` or a shape range's entry
 * `int f(int64_t M, const float* A, const float* B, float* C)` (bench/range_dispatch.py).
 *
 *   range_timing LIB SYMBOL ranged|fixed M N K SAMPLES
 *
 * Prints the median seconds per call over SAMPLES samples, each timing as many calls as take
 * at least 20 ms (after a warm-up of the same length). */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*fixed_fn)(const float*, const float*, float*);
typedef int (*ranged_fn)(int64_t, const float*, const float*, float*);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: range_timing LIB SYMBOL ranged|fixed M N K SAMPLES\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "range_timing: %s\n", dlerror());
    return 1;
  }
  void* fn = dlsym(lib, argv[2]);
  if (fn == NULL) {
    fprintf(stderr, "range_timing: no %s in %s\n", argv[2], argv[1]);
    return 1;
  }
  const int ranged = strcmp(argv[3], "ranged") == 0;
  const int64_t m = atoll(argv[4]), n = atoll(argv[5]), k = atoll(argv[6]);
  const int samples = atoi(argv[7]);
  float* a = aligned_alloc(64, (size_t)((m * k * 4 + 63) / 64 * 64));
  float* b = aligned_alloc(64, (size_t)((k * n * 4 + 63) / 64 * 64));
  float* c = aligned_alloc(64, (size_t)((m * n * 4 + 63) / 64 * 64));
  double* secs = malloc(sizeof(double) * (size_t)samples);
  if (a == NULL || b == NULL || c == NULL || secs == NULL || samples < 1) {
    return 1;
  }
  for (int64_t i = 0; i < m * k; ++i) {
    a[i] = (float)(i % 17) / 17.0f - 0.5f;
  }
  for (int64_t i = 0; i < k * n; ++i) {
    b[i] = (float)(i % 13) / 13.0f - 0.5f;
  }
  int64_t calls = 1;
  for (int s = -1; s < samples; ++s) {
    const double start = now();
    for (int64_t i = 0; i < calls; ++i) {
      const int rc = ranged ? ((ranged_fn)fn)(m, a, b, c) : ((fixed_fn)fn)(a, b, c);
      if (rc != 0) {
        fprintf(stderr, "range_timing: %s returned %d\n", argv[2], rc);
        return 1;
      }
    }
    const double took = now() - start;
    if (s < 0) { /* warm-up: size the samples to 20 ms */
      calls = took > 0.02 ? 1 : (int64_t)(0.02 / (took > 1e-7 ? took : 1e-7)) + 1;
      continue;
    }
    secs[s] = took / (double)calls;
  }
  qsort(secs, (size_t)samples, sizeof(double), compare);
  printf("%.9g\n", secs[samples / 2]);
  return 0;
}
