/* Calls the kernels that an installed tune-compile built (CMakeLists.txt) and checks them
 * against naive loops. Exit status 0 when both match. */
#include <math.h>
#include <stdio.h>

#include "consumer_kernels.h"

static void fill(float* x, int n, unsigned seed) {
  for (int i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
  }
}

/* C[M][N] = A[M][K] B[K][N] (+ bias, then ReLU when bias is given) against `got`. */
static int check(const char* name, int m, int n, int k, const float* a, const float* b,
                 const float* bias, const float* got) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double want = bias ? bias[j] : 0.0;
      for (int p = 0; p < k; ++p) {
        want += (double)a[i * k + p] * b[p * n + j];
      }
      if (bias && want < 0) {
        want = 0;
      }
      if (!(fabs(got[i * n + j] - want) <= 1e-4 * (1.0 + fabs(want)))) {
        fprintf(stderr, "%s: C[%d][%d] is %g, expected %g\n", name, i, j, got[i * n + j], want);
        return 0;
      }
    }
  }
  return 1;
}

int main(void) {
  static float a1[37 * 23], b1[23 * 29], bias1[29], c1[37 * 29];
  static float a2[64 * 24], b2[24 * 40], c2[64 * 40];
  fill(a1, 37 * 23, 1);
  fill(b1, 23 * 29, 2);
  fill(bias1, 29, 3);
  fill(a2, 64 * 24, 4);
  fill(b2, 24 * 40, 5);
  if (consumer_gemm_bias_relu(a1, b1, bias1, c1) != 0 || consumer_blas_gemm(a2, b2, c2) != 0) {
    fprintf(stderr, "a kernel returned an error\n");
    return 1;
  }
  int ok = check("consumer_gemm_bias_relu", 37, 29, 23, a1, b1, bias1, c1) &
           check("consumer_blas_gemm", 64, 40, 24, a2, b2, NULL, c2);
  printf("installed tune: %s\n", ok ? "both kernels match the naive loops" : "MISMATCH");
  return ok ? 0 : 1;
}
