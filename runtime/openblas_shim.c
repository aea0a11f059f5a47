/* libtune_openblas.so: tune's shim over OpenBLAS (runtime/tune_runtime.h). */
#include <cblas.h>
#include <stdio.h>
#include <string.h>

#include "runtime/tune_runtime.h"

static int32_t SetThreads(int32_t threads) {
  if (threads < 1) {
    return TUNE_RUNTIME_BAD_ARGUMENT;
  }
  /* Cheap when unchanged; OpenBLAS resizes its pool otherwise. */
  if (openblas_get_num_threads() != threads) {
    openblas_set_num_threads(threads);
  }
  return 0;
}

int32_t tune_openblas_sgemm(const float* A, const float* B, float* C, int64_t M, int64_t N,
                            int64_t K, int64_t lda, int64_t ldb, int64_t ldc, float beta,
                            int32_t threads) {
  if (M < 1 || N < 1 || K < 1 || lda < K || ldb < N || ldc < N || M > 0x7fffffff ||
      N > 0x7fffffff || K > 0x7fffffff || lda > 0x7fffffff || ldb > 0x7fffffff ||
      ldc > 0x7fffffff) {
    return TUNE_RUNTIME_BAD_ARGUMENT;
  }
  int32_t rc = SetThreads(threads);
  if (rc != 0) {
    return rc;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)M, (blasint)N, (blasint)K, 1.0f,
              A, (blasint)lda, B, (blasint)ldb, beta, C, (blasint)ldc);
  return 0;
}

int32_t tune_openblas_version(char* buf, int64_t size) {
  if (buf == NULL || size < 1) {
    return TUNE_RUNTIME_BAD_ARGUMENT;
  }
  /* The second word of openblas_get_config ("OpenBLAS 0.3.21 DYNAMIC_ARCH ..."). */
  const char* config = openblas_get_config();
  const char* version = strchr(config, ' ');
  version = version != NULL ? version + 1 : config;
  size_t length = strcspn(version, " ");
  if (length >= (size_t)size) {
    length = (size_t)size - 1;
  }
  memcpy(buf, version, length);
  buf[length] = '\0';
  return 0;
}

int32_t tune_openblas_describe(char* buf, int64_t size) {
  if (buf == NULL || size < 1) {
    return TUNE_RUNTIME_BAD_ARGUMENT;
  }
  /* openblas_get_config: "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Haswell MAX_THREADS=64";
   * the core name is the kernel set it chose at run time (OPENBLAS_CORETYPE overrides it). */
  snprintf(buf, (size_t)size, "%s; core=%s; threads=%d", openblas_get_config(),
           openblas_get_corename(), openblas_get_num_threads());
  return 0;
}
