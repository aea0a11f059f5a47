/* Test fixtures: small kernels with tune's CPU ABI, int32_t fn(float* a, float* b, float* c),
 * for gemm:M=TUNE_TEST_M,N=TUNE_TEST_N,K=TUNE_TEST_K (row-major A[M][K], B[K][N], C[M][N]).
 * Each entry behaves in one way a real candidate can: right, wrong, crashing, hanging. */
#include <stdint.h>
#include <stdlib.h>

#define M TUNE_TEST_M
#define N TUNE_TEST_N
#define K TUNE_TEST_K

static void naive_gemm(const float* a, const float* b, float* c) {
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) {
        acc += a[i * K + k] * b[k * N + j];
      }
      c[i * N + j] = acc;
    }
  }
}

int32_t tune_test_gemm_correct(float* a, float* b, float* c) {
  naive_gemm(a, b, c);
  return 0;
}

/* Off by a little in one element: enough to fail the tolerance. */
int32_t tune_test_gemm_wrong(float* a, float* b, float* c) {
  naive_gemm(a, b, c);
  c[(M / 2) * N + N / 2] += 0.5f;
  return 0;
}

/* Off by three times the standard bound (common/reference.h) in one element: the rounding of
 * an algorithm that states a tolerance of 4 (Winograd F(4,3)), wrong for any other. */
int32_t tune_test_gemm_three_bounds_off(float* a, float* b, float* c) {
  naive_gemm(a, b, c);
  float* e = &c[(M / 2) * N + N / 2];
  const float magnitude = *e < 0 ? -*e : *e;
  *e += 3.0f * (1e-6f * (K + 1) + 1e-5f * magnitude);
  return 0;
}

int32_t tune_test_gemm_segv(float* a, float* b, float* c) {
  (void)a;
  (void)b;
  (void)c;
  *(volatile float*)0 = 1.0f;
  return 0;
}

int32_t tune_test_gemm_abort(float* a, float* b, float* c) {
  (void)a;
  (void)b;
  (void)c;
  abort();
}

int32_t tune_test_gemm_hang(float* a, float* b, float* c) {
  (void)a;
  (void)b;
  (void)c;
  volatile int spin = 1;
  while (spin) {
  }
  return 0;
}

int32_t tune_test_gemm_returns3(float* a, float* b, float* c) {
  naive_gemm(a, b, c);
  return 3;
}

/* What an AMX kernel returns where Linux refuses it the tile data (TUNE_CPU_ERROR_AMX_DENIED,
 * common/cpu_amx.h's kAmxDeniedStatus), having computed nothing. */
int32_t tune_test_gemm_amx_denied(float* a, float* b, float* c) {
  (void)a;
  (void)b;
  (void)c;
  return -20;
}

/* Prepared weights (weights=prepared, common/workload.h): the preparation stores B transposed,
 * and the kernel reads B^T[N][K]. Given B as it is, the kernel computes a wrong answer. */
const int64_t tune_test_gemm_transposed_prepared_floats = (int64_t)K * N;

int32_t tune_test_gemm_transposed_prepare(const float* b, float* b_t) {
  for (int k = 0; k < K; ++k) {
    for (int j = 0; j < N; ++j) {
      b_t[j * K + k] = b[k * N + j];
    }
  }
  return 0;
}

int32_t tune_test_gemm_transposed(float* a, float* b_t, float* c) {
  for (int i = 0; i < M; ++i) {
    for (int j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) {
        acc += a[i * K + k] * b_t[j * K + k];
      }
      c[i * N + j] = acc;
    }
  }
  return 0;
}

/* A preparation that fails. */
const int64_t tune_test_gemm_prepare_fails_prepared_floats = (int64_t)K * N;

int32_t tune_test_gemm_prepare_fails_prepare(const float* b, float* prepared) {
  (void)b;
  (void)prepared;
  return 5;
}

int32_t tune_test_gemm_prepare_fails(float* a, float* b, float* c) {
  naive_gemm(a, b, c);
  return 0;
}
