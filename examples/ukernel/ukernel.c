/* An example GEMM micro-kernel library for tune's *.ukernel templates (README.md beside this file
 * walks through it; ukernel.json is its manifest). It exports one function, which computes one
 * MR x NR = 8 x 32 register block of C from packed panels of A and B:
 *
 *   c[i*ldc + j] = (accumulate ? c[i*ldc + j] : 0) + sum over p < kc of a[p*MR + i] * b[p*NR + j]
 *
 * for i < 8 and j < 32. The A panel is kc x MR floats (a[p*MR + i]), the B panel kc x NR floats
 * (b[p*NR + j]); C is row-major with a leading dimension of ldc floats. No pointer needs more than
 * float alignment.
 *
 * There are three implementations: AVX-512F, AVX2 + FMA and plain C. The fastest one this CPU
 * runs is picked once, when the library is loaded. The environment variable
 * TUNE_EXAMPLE_UKERNEL_ISA forces a slower one, to test the fallbacks:
 *
 *   TUNE_EXAMPLE_UKERNEL_ISA=avx2     AVX2 + FMA (or plain C when the CPU has no AVX2 or FMA)
 *   TUNE_EXAMPLE_UKERNEL_ISA=scalar   plain C
 *   unset, empty, "native" or any other value: the fastest one
 *
 * It is read once per process, at load time. The file compiles with a plain -O3: each vector path
 * carries its own target attribute, and nothing runs an instruction the CPU lacks. */
#include <immintrin.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The library is built with -fvisibility=hidden (CMakeLists.txt): this is its one export. */
#define UKERNEL_EXPORT __attribute__((visibility("default")))

enum { MR = 8, NR = 32 };

/* Every implementation assumes kc >= 1; example_sgemm_ukernel handles kc <= 0 itself. */
typedef void (*ukernel_fn)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                           int32_t accumulate);

/* --- AVX-512F: the whole 8 x 32 tile in 16 zmm accumulators ------------------------------------
 *
 * Each step p loads two 16-float vectors of b and broadcasts a[p*8 + i] for each of the 8 rows
 * (vbroadcastss from memory: a load, no shuffle), for 16 FMAs: 8 rows x 2 vectors. That is 10
 * loads per 16 FMAs, well within what the load ports sustain, and the 16 independent
 * accumulators hide the FMA latency.
 *
 * Every loop over the rows of an accumulator array carries #pragma GCC unroll (clang honours it
 * too): GCC keeps such an array in registers only when those loops are unrolled early, and
 * otherwise stores it to the stack between the p loops (about 20 ns a call with GCC 12 on a
 * Zen 4 core). */

__attribute__((target("avx512f"), always_inline)) static inline void avx512_step(
    const float* a, const float* b, __m512 acc[MR][2]) {
  const __m512 b0 = _mm512_loadu_ps(b);
  const __m512 b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    const __m512 ai = _mm512_set1_ps(a[i]);
    acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
    acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
  }
}

__attribute__((target("avx512f"))) static void ukernel_avx512(int64_t kc, const float* a,
                                                              const float* b, float* c, int64_t ldc,
                                                              int32_t accumulate) {
  __m512 acc[MR][2];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    acc[i][0] = _mm512_setzero_ps();
    acc[i][1] = _mm512_setzero_ps();
  }
  int64_t p = 0;
  for (; p + 4 <= kc; p += 4) { /* unrolled by 4 */
    avx512_step(a + (p + 0) * MR, b + (p + 0) * NR, acc);
    avx512_step(a + (p + 1) * MR, b + (p + 1) * NR, acc);
    avx512_step(a + (p + 2) * MR, b + (p + 2) * NR, acc);
    avx512_step(a + (p + 3) * MR, b + (p + 3) * NR, acc);
  }
  for (; p < kc; ++p) {
    avx512_step(a + p * MR, b + p * NR, acc);
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    float* row = c + i * ldc;
    __m512 lo = acc[i][0];
    __m512 hi = acc[i][1];
    if (accumulate) {
      lo = _mm512_add_ps(_mm512_loadu_ps(row), lo);
      hi = _mm512_add_ps(_mm512_loadu_ps(row + 16), hi);
    }
    _mm512_storeu_ps(row, lo);
    _mm512_storeu_ps(row + 16, hi);
  }
}

/* --- AVX2 + FMA: four 4 x 16 sub-blocks ---------------------------------------------------------
 *
 * The 8 x 32 tile is 32 ymm registers' worth, twice the register file. Each 4 x 16 sub-block keeps
 * 8 ymm accumulators (4 rows x 2 vectors of 8 floats), 2 for the b vectors and 1 for a broadcast:
 * 11 of the 16 registers, so nothing spills. A step is 2 loads + 4 broadcasts + 8 FMAs. The
 * sub-blocks walk the B panel column half by column half, so each half of it (kc x 16 floats) is
 * read twice in a row while it is still in L1. */

__attribute__((target("avx2,fma"), always_inline)) static inline void avx2_step(const float* a,
                                                                                const float* b,
                                                                                __m256 acc[4][2]) {
  const __m256 b0 = _mm256_loadu_ps(b);
  const __m256 b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) {
    const __m256 ar = _mm256_broadcast_ss(a + r);
    acc[r][0] = _mm256_fmadd_ps(ar, b0, acc[r][0]);
    acc[r][1] = _mm256_fmadd_ps(ar, b1, acc[r][1]);
  }
}

/* Rows i0..i0+3 and columns j0..j0+15 of the tile: a = panel + i0, b = panel + j0 and
 * c = tile + i0*ldc + j0; the panels keep their strides MR and NR. */
__attribute__((target("avx2,fma"))) static void avx2_block_4x16(int64_t kc, const float* a,
                                                                const float* b, float* c,
                                                                int64_t ldc, int32_t accumulate) {
  __m256 acc[4][2];
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) {
    acc[r][0] = _mm256_setzero_ps();
    acc[r][1] = _mm256_setzero_ps();
  }
  int64_t p = 0;
  for (; p + 4 <= kc; p += 4) { /* unrolled by 4 */
    avx2_step(a + (p + 0) * MR, b + (p + 0) * NR, acc);
    avx2_step(a + (p + 1) * MR, b + (p + 1) * NR, acc);
    avx2_step(a + (p + 2) * MR, b + (p + 2) * NR, acc);
    avx2_step(a + (p + 3) * MR, b + (p + 3) * NR, acc);
  }
  for (; p < kc; ++p) {
    avx2_step(a + p * MR, b + p * NR, acc);
  }
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) {
    float* row = c + r * ldc;
    __m256 lo = acc[r][0];
    __m256 hi = acc[r][1];
    if (accumulate) {
      lo = _mm256_add_ps(_mm256_loadu_ps(row), lo);
      hi = _mm256_add_ps(_mm256_loadu_ps(row + 8), hi);
    }
    _mm256_storeu_ps(row, lo);
    _mm256_storeu_ps(row + 8, hi);
  }
}

__attribute__((target("avx2,fma"))) static void ukernel_avx2(int64_t kc, const float* a,
                                                             const float* b, float* c, int64_t ldc,
                                                             int32_t accumulate) {
  for (int j0 = 0; j0 < NR; j0 += 16) {
    for (int i0 = 0; i0 < MR; i0 += 4) {
      avx2_block_4x16(kc, a + i0, b + j0, c + i0 * ldc + j0, ldc, accumulate);
    }
  }
}

/* --- Plain C, for CPUs with neither ----------------------------------------------------------- */

static void ukernel_scalar(int64_t kc, const float* a, const float* b, float* c, int64_t ldc,
                           int32_t accumulate) {
  float acc[MR][NR] = {{0}};
  for (int64_t p = 0; p < kc; ++p) {
    for (int i = 0; i < MR; ++i) {
      const float ai = a[p * MR + i];
      for (int j = 0; j < NR; ++j) {
        acc[i][j] += ai * b[p * NR + j];
      }
    }
  }
  for (int i = 0; i < MR; ++i) {
    for (int j = 0; j < NR; ++j) {
      c[i * ldc + j] = (accumulate ? c[i * ldc + j] : 0.0f) + acc[i][j];
    }
  }
}

/* --- Dispatch, once per process -------------------------------------------------------------- */

static ukernel_fn choose_ukernel(void) {
  /* Needed when this runs from a constructor, possibly before libgcc's own has run. */
  __builtin_cpu_init();
  const char* forced = getenv("TUNE_EXAMPLE_UKERNEL_ISA");
  int allow_avx512 = 1;
  int allow_avx2 = 1;
  if (forced != NULL && strcmp(forced, "scalar") == 0) {
    allow_avx512 = 0;
    allow_avx2 = 0;
  } else if (forced != NULL && strcmp(forced, "avx2") == 0) {
    allow_avx512 = 0;
  }
  if (allow_avx512 && __builtin_cpu_supports("avx512f")) {
    return ukernel_avx512;
  }
  if (allow_avx2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    return ukernel_avx2;
  }
  return ukernel_scalar;
}

/* Set when the library is loaded; null only if a caller gets here before the constructors ran
 * (another library's constructor, say), in which case the first call resolves it. Racing
 * resolvers store the same value. */
static _Atomic(ukernel_fn) chosen_ukernel;

__attribute__((constructor)) static void resolve_ukernel(void) {
  atomic_store_explicit(&chosen_ukernel, choose_ukernel(), memory_order_relaxed);
}

UKERNEL_EXPORT void example_sgemm_ukernel(int64_t kc, const float* a, const float* b, float* c,
                                          int64_t ldc, int32_t accumulate) {
  if (kc <= 0) { /* an empty sum: zero the block, or leave it exactly as it is */
    if (!accumulate) {
      for (int i = 0; i < MR; ++i) {
        memset(c + i * ldc, 0, NR * sizeof(float));
      }
    }
    return;
  }
  ukernel_fn fn = atomic_load_explicit(&chosen_ukernel, memory_order_relaxed);
  if (fn == NULL) {
    fn = choose_ukernel();
    atomic_store_explicit(&chosen_ukernel, fn, memory_order_relaxed);
  }
  fn(kc, a, b, c, ldc, accumulate);
}
