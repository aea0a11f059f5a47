/* Test fixture: a kernel that calls a micro-kernel it does not define. It loads only where
 * tune_test_microkernel was preloaded RTLD_GLOBAL (see microkernel.c). */
#include <stdint.h>

int32_t tune_test_microkernel(const float* a, const float* b, float* c, int m, int n, int k);

int32_t tune_test_gemm_extern(float* a, float* b, float* c) {
  return tune_test_microkernel(a, b, c, TUNE_TEST_M, TUNE_TEST_N, TUNE_TEST_K);
}
