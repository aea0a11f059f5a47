/* Calls tune-compile's kernels through their C headers from a C program and checks each one
 * against a naive loop nest: default function names, every epilogue, a dilated conv, kernels
 * built for two threads and a library built from a workloads file. Exit status 0 when every
 * kernel matches. */
#include "c_abi_kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "c_abi_model_kernels.h"
#include "c_abi_parallel_kernels.h"

enum { kNone, kBias, kRelu, kBiasRelu };

static float* random_array(int n, unsigned seed) {
  float* x = malloc(sizeof(float) * (n > 0 ? n : 1));
  for (int i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)((seed >> 8) % 4001) / 2000.0f - 1.0f;
  }
  return x;
}

static double epilogue(double v, const float* bias, int channel, int kind) {
  if (kind == kBias || kind == kBiasRelu) {
    v += bias[channel];
  }
  if ((kind == kRelu || kind == kBiasRelu) && v < 0) {
    v = 0;
  }
  return v;
}

static int compare(const char* name, const float* got, const double* want, int n) {
  for (int i = 0; i < n; ++i) {
    if (!(fabs(got[i] - want[i]) <= 1e-4 * (1.0 + fabs(want[i])))) {
      fprintf(stderr, "%s: element %d is %g, expected %g\n", name, i, got[i], want[i]);
      return 0;
    }
  }
  printf("%s: ok\n", name);
  return 1;
}

typedef int (*gemm3)(const float*, const float*, float*);
typedef int (*gemm4)(const float*, const float*, const float*, float*);

static int check_gemm(const char* name, int m, int n, int k, int kind, gemm3 f3, gemm4 f4) {
  float* a = random_array(m * k, 1);
  float* b = random_array(k * n, 2);
  float* bias = random_array(n, 3);
  float* c = random_array(m * n, 4); /* garbage that must be overwritten */
  double* want = malloc(sizeof(double) * m * n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) {
        acc += (double)a[i * k + p] * b[p * n + j];
      }
      want[i * n + j] = epilogue(acc, bias, j, kind);
    }
  }
  int rc = f3 ? f3(a, b, c) : f4(a, b, bias, c);
  int ok = rc == 0 && compare(name, c, want, m * n);
  free(a), free(b), free(bias), free(c), free(want);
  return ok;
}

typedef int (*conv3)(const float*, const float*, float*);
typedef int (*conv4)(const float*, const float*, const float*, float*);

static int check_conv(const char* name, int N, int C, int H, int W, int K, int R, int S, int stride,
                      int pad, int dil, int kind, conv3 f3, conv4 f4) {
  int P = (H + 2 * pad - dil * (R - 1) - 1) / stride + 1;
  int Q = (W + 2 * pad - dil * (S - 1) - 1) / stride + 1;
  float* in = random_array(N * C * H * W, 5);
  float* w = random_array(K * C * R * S, 6);
  float* bias = random_array(K, 7);
  float* out = random_array(N * K * P * Q, 8);
  double* want = malloc(sizeof(double) * N * K * P * Q);
  for (int n = 0; n < N; ++n) {
    for (int k = 0; k < K; ++k) {
      for (int p = 0; p < P; ++p) {
        for (int q = 0; q < Q; ++q) {
          double acc = 0;
          for (int c = 0; c < C; ++c) {
            for (int r = 0; r < R; ++r) {
              for (int s = 0; s < S; ++s) {
                int h = p * stride - pad + r * dil, x = q * stride - pad + s * dil;
                if (h >= 0 && h < H && x >= 0 && x < W) {
                  acc +=
                      (double)in[((n * C + c) * H + h) * W + x] * w[((k * C + c) * R + r) * S + s];
                }
              }
            }
          }
          want[((n * K + k) * P + p) * Q + q] = epilogue(acc, bias, k, kind);
        }
      }
    }
  }
  int rc = f3 ? f3(in, w, out) : f4(in, w, bias, out);
  int ok = rc == 0 && compare(name, out, want, N * K * P * Q);
  free(in), free(w), free(bias), free(out), free(want);
  return ok;
}

int main(void) {
  int ok = 1;
  ok &= check_gemm("tune_gemm_M7_N13_K5", 7, 13, 5, kNone, tune_gemm_M7_N13_K5, NULL);
  ok &=
      check_gemm("tune_gemm_M64_N48_K33_bias", 64, 48, 33, kBias, NULL, tune_gemm_M64_N48_K33_bias);
  ok &= check_conv("tune_conv2d_N1_C3_H12_W14_K7_R3_S3_s1_p2_d2_bias_relu", 1, 3, 12, 14, 7, 3, 3,
                   1, 2, 2, kBiasRelu, NULL, tune_conv2d_N1_C3_H12_W14_K7_R3_S3_s1_p2_d2_bias_relu);
  ok &= check_gemm("par_gemm", 130, 70, 40, kRelu, par_gemm, NULL);
  ok &= check_conv("par_conv", 2, 4, 10, 10, 20, 3, 3, 1, 1, 1, kNone, par_conv, NULL);
  ok &= check_gemm("model_gemm_relu", 6, 10, 4, kRelu, model_gemm_relu, NULL);
  ok &= check_gemm("tune_gemm_M9_N5_K3", 9, 5, 3, kNone, tune_gemm_M9_N5_K3, NULL);
  ok &= check_conv("tune_conv2d_N1_C2_H5_W5_K4_R1_S1_s1_p0", 1, 2, 5, 5, 4, 1, 1, 1, 0, 1, kNone,
                   tune_conv2d_N1_C2_H5_W5_K4_R1_S1_s1_p0, NULL);
  return ok ? 0 : 1;
}
