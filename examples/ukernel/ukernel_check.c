/* Checks example_sgemm_ukernel (ukernel.c) against a naive triple loop, for kc in {0, 1, 3, 16,
 * 257}, accumulate in {0, 1} and ldc in {32, 45}, on random data and deliberately misaligned
 * pointers. It links libtune_example_ukernel.so directly. The library picks its implementation
 * once per process, so one run checks one path: CMakeLists.txt runs this program three times, with
 * TUNE_EXAMPLE_UKERNEL_ISA=native, avx2 and scalar. Exit status 0 when every case matches. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The library has no header: the manifest's "signature" is its interface. */
void example_sgemm_ukernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                           int32_t accumulate);

enum { MR = 8, NR = 32, MAX_KC = 257, MAX_LDC = 45, GUARD = 16 };

static const float kSentinel = -12345.0f;

/* The path the library picks: the same rules as choose_ukernel in ukernel.c. */
static const char* expected_isa(void) {
  __builtin_cpu_init();
  const char* forced = getenv("TUNE_EXAMPLE_UKERNEL_ISA");
  int scalar = forced != NULL && strcmp(forced, "scalar") == 0;
  int avx2 = forced != NULL && strcmp(forced, "avx2") == 0;
  if (!scalar && !avx2 && __builtin_cpu_supports("avx512f")) {
    return "avx512f";
  }
  if (!scalar && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return "avx2";
  }
  return "scalar";
}

static void fill(float* x, int n, unsigned* seed) {
  for (int i = 0; i < n; ++i) {
    *seed = *seed * 1103515245u + 12345u;
    x[i] = (float)((*seed >> 9) % 2001) / 1000.0f - 1.0f;
  }
}

/* One call with the given shape; returns 1 when it matches, else prints the first mismatch. */
static int check_case(int kc, int accumulate, int ldc, unsigned* seed) {
  /* One float past an aligned start, so no vector load or store is aligned by accident. */
  static float a_buf[1 + MAX_KC * MR], b_buf[1 + MAX_KC * NR];
  static float c_buf[1 + GUARD + MR * MAX_LDC + GUARD], c_in[MR * MAX_LDC];
  float* a = a_buf + 1;
  float* b = b_buf + 1;
  float* c = c_buf + 1 + GUARD;
  const int c_len = MR * ldc;

  fill(a, kc * MR, seed);
  fill(b, kc * NR, seed);
  for (int i = 0; i < GUARD; ++i) {
    c[-GUARD + i] = kSentinel;
    c[c_len + i] = kSentinel;
  }
  fill(c, c_len, seed);
  for (int i = 0; i < MR; ++i) { /* the columns j >= NR of each row are not the kernel's */
    for (int j = NR; j < ldc; ++j) {
      c[i * ldc + j] = kSentinel;
    }
  }
  memcpy(c_in, c, c_len * sizeof(float));

  example_sgemm_ukernel(kc, a, b, c, ldc, accumulate);

  char what[96];
  snprintf(what, sizeof(what), "kc=%d accumulate=%d ldc=%d", kc, accumulate, ldc);
  for (int i = 0; i < GUARD; ++i) {
    if (c[-GUARD + i] != kSentinel || c[c_len + i] != kSentinel) {
      fprintf(stderr, "ukernel_check: %s: wrote outside c[0 .. %d)\n", what, c_len);
      return 0;
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < ldc; ++j) {
      const float got = c[i * ldc + j];
      if (j >= NR) {
        if (got != kSentinel) {
          fprintf(stderr, "ukernel_check: %s: wrote c[%d][%d], outside the %dx%d block\n", what, i,
                  j, MR, NR);
          return 0;
        }
        continue;
      }
      /* The tolerance is relative to the magnitude of the terms summed, so cancellation in the
       * sum does not make it fail. */
      const double before = accumulate ? c_in[i * ldc + j] : 0.0;
      double want = before, magnitude = fabs(before);
      for (int p = 0; p < kc; ++p) {
        const double term = (double)a[p * MR + i] * b[p * NR + j];
        want += term;
        magnitude += fabs(term);
      }
      int ok;
      if (kc == 0 && accumulate) { /* an empty sum leaves c exactly as it was */
        ok = memcmp(&got, &c_in[i * ldc + j], sizeof(float)) == 0;
      } else if (kc == 0) {
        ok = got == 0.0f;
      } else {
        ok = fabs(got - want) <= 1e-4 * (1.0 + magnitude);
      }
      if (!ok) {
        fprintf(stderr, "ukernel_check: %s: c[%d][%d] is %.9g, expected %.9g\n", what, i, j, got,
                want);
        return 0;
      }
    }
  }
  return 1;
}

int main(void) {
  static const int kcs[] = {0, 1, 3, 16, 257};
  static const int ldcs[] = {32, 45};
  unsigned seed = 1;
  int failures = 0;
  for (size_t k = 0; k < sizeof(kcs) / sizeof(kcs[0]); ++k) {
    for (int accumulate = 0; accumulate <= 1; ++accumulate) {
      for (size_t l = 0; l < sizeof(ldcs) / sizeof(ldcs[0]); ++l) {
        failures += !check_case(kcs[k], accumulate, ldcs[l], &seed);
      }
    }
  }
  if (failures != 0) {
    fprintf(stderr, "ukernel_check: FAILED %d case(s) (%s)\n", failures, expected_isa());
    return 1;
  }
  printf("ukernel_check: OK (%s)\n", expected_isa());
  return 0;
}
