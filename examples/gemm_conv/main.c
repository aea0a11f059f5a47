/* Calls a GEMM and a conv2d kernel that tune-compile generated at build time (see
 * examples/CMakeLists.txt) and checks both against naive loops. Exit status 0 when both match. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gemm_conv_kernels.h"

/* gemm:M=67,N=45,K=31,epilogue=bias_relu */
enum { M = 67, N = 45, K = 31 };
/* conv2d:N=2,C=3,H=17,W=19,K=10,R=3,S=3,stride=2,pad=1 */
enum { CN = 2, CC = 3, CH = 17, CW = 19, CK = 10, CR = 3, CS = 3, STRIDE = 2, PAD = 1 };
enum { CP = (CH + 2 * PAD - CR) / STRIDE + 1, CQ = (CW + 2 * PAD - CS) / STRIDE + 1 };

static void fill(float* x, int n, unsigned seed) {
  for (int i = 0; i < n; ++i) {
    seed = seed * 1103515245u + 12345u;
    x[i] = (float)((seed >> 9) % 2001) / 1000.0f - 1.0f;
  }
}

static int close_enough(const float* got, const float* want, int n, double tol, const char* what) {
  for (int i = 0; i < n; ++i) {
    if (!(fabs((double)got[i] - (double)want[i]) <= tol * (1.0 + fabs((double)want[i])))) {
      fprintf(stderr, "%s: element %d is %g, expected %g\n", what, i, got[i], want[i]);
      return 0;
    }
  }
  return 1;
}

static int check_gemm(void) {
  static float a[M * K], b[K * N], bias[N], c[M * N], want[M * N];
  fill(a, M * K, 1);
  fill(b, K * N, 2);
  fill(bias, N, 3);
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      double acc = bias[j];
      for (int k = 0; k < K; ++k) {
        acc += (double)a[i * K + k] * b[k * N + j];
      }
      want[i * N + j] = acc > 0 ? (float)acc : 0.0f;
    }
  }
  if (example_gemm(a, b, bias, c) != 0) {
    fprintf(stderr, "example_gemm returned an error\n");
    return 0;
  }
  return close_enough(c, want, M * N, 1e-4, "example_gemm");
}

static int check_conv(void) {
  static float in[CN * CC * CH * CW], w[CK * CC * CR * CS], out[CN * CK * CP * CQ],
      want[CN * CK * CP * CQ];
  fill(in, CN * CC * CH * CW, 4);
  fill(w, CK * CC * CR * CS, 5);
  for (int n = 0; n < CN; ++n) {
    for (int k = 0; k < CK; ++k) {
      for (int p = 0; p < CP; ++p) {
        for (int q = 0; q < CQ; ++q) {
          double acc = 0;
          for (int c = 0; c < CC; ++c) {
            for (int r = 0; r < CR; ++r) {
              for (int s = 0; s < CS; ++s) {
                int h = p * STRIDE - PAD + r, x = q * STRIDE - PAD + s;
                if (h < 0 || h >= CH || x < 0 || x >= CW) {
                  continue;
                }
                acc += (double)in[((n * CC + c) * CH + h) * CW + x] *
                       w[((k * CC + c) * CR + r) * CS + s];
              }
            }
          }
          want[((n * CK + k) * CP + p) * CQ + q] = (float)acc;
        }
      }
    }
  }
  if (example_conv(in, w, out) != 0) {
    fprintf(stderr, "example_conv returned an error\n");
    return 0;
  }
  return close_enough(out, want, CN * CK * CP * CQ, 1e-4, "example_conv");
}

int main(void) {
  int ok = check_gemm() & check_conv();
  printf("gemm_conv example: %s\n", ok ? "both kernels match the naive loops" : "MISMATCH");
  return ok ? 0 : 1;
}
