// A library candidate with the GPU host ABI (int32_t entry(float*..., void* stream)) that
// fails the way a library does: it returns the library's error code.
#include <stdint.h>

int32_t gpu_entry_fails(float* a, float* b, float* c, void* stream) {
  (void)a;
  (void)b;
  (void)c;
  (void)stream;
  return 7;
}
