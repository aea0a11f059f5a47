/* libtune_range.so: the run-time dispatch behind the entry point that tune-compile emits for a
 * shape range (a workload with one ranged dimension, `gemm:M=1..4096,N=4096,K=4096`):
 *
 *   int32_t NAME(int64_t size, <the workload's arguments>[, void* stream]);
 *
 * The library holds one kernel per size the tuning log measured in the range (each compiled
 * for that exact size) and a constant tune_range_plan describing them; NAME packs its arguments
 * and calls tune_range_call, which runs the size on those kernels:
 *   - a size that has its own kernel calls it directly;
 *   - otherwise it takes the cheapest of these plans, priced by the kernels' measured medians
 *     (`seconds`, with a padded piece's copies at 10 GB/s in host memory, 1 TB/s in a GPU's;
 *     where a kernel has no `seconds`, every kernel is priced by its size):
 *       pad:   the smallest kernel s >= size, on copies of the tensors that carry the ranged
 *              dimension, padded with zeros from size to s (outputs copied back, the padding's
 *              results dropped);
 *       split: (only when `splittable`) q = size / s pieces of the largest kernel s <= size,
 *              called on the tensors themselves at row offsets, then the rest (size - q*s),
 *              planned the same way.
 * Every size in [lo, hi] is answered exactly: zero padding adds nothing to a sum over a padded
 * reduction dimension (GEMM K), and the rows or columns it adds elsewhere are not copied back.
 *
 * Recording (the environment variable TUNE_RECORD_SHAPES, read at the first call: a file path):
 * each call with a size the tuning log did not measure (no kernel of its own, or a kernel whose
 * `measured` is 0) is counted, per range, under a
 * process-wide lock; the counts are appended to the file as a workloads file (common/
 * workload_list.h: "WORKLOAD COUNT" lines, one per size, under a comment naming the process) at
 * tune_range_flush_recording() and at exit. Lines of several flushes or processes add up when
 * the file is read, as repeated workloads do there. Tuning that file (tune-client submit
 * --workloads-file) and building again gives those sizes kernels of their own.
 *
 * Errors are return codes: 0 success, a kernel's own code, or the negative codes below;
 * tune_range_last_error() says what went wrong on the calling thread. Every function is
 * thread-safe; the plan is read only. */
#ifndef TUNE_RANGE_H_
#define TUNE_RANGE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TUNE_RANGE_BUILD)
#define TUNE_RANGE_EXPORT __attribute__((visibility("default")))
#else
#define TUNE_RANGE_EXPORT
#endif

/* tune_range_plan.abi_version: the layouts below. */
#define TUNE_RANGE_ABI_VERSION 1

#define TUNE_RANGE_OK 0
#define TUNE_RANGE_ERROR_OUT_OF_RANGE -20 /* size outside [lo, hi] */
#define TUNE_RANGE_ERROR_NO_MEMORY -21    /* a padded copy could not be allocated */
#define TUNE_RANGE_ERROR_BAD_PLAN -22     /* a malformed plan (a bug of its generator) */
#define TUNE_RANGE_ERROR_COPY -23         /* a copy into or out of a padded tensor failed */
#define TUNE_RANGE_ERROR_RECORDING -24    /* the recorded sizes could not be written */

/* Calls one size's kernel: args[i] is the kernel's i-th argument (a tensor pointer), `stream`
 * the GPU stream (NULL for CPU kernels). Returns the kernel's code. */
typedef int32_t (*tune_range_fn)(void* const* args, void* stream);

typedef struct tune_range_kernel {
  int64_t size;   /* the ranged dimension's value this kernel was compiled for */
  double seconds; /* its measured median; 0 when unknown */
  tune_range_fn call;
  int32_t measured; /* 1: the tuning log measured this size; 0: it runs a config measured at
                       another size (or a default), and recording counts its calls */
} tune_range_kernel;

/* One argument that carries the ranged dimension, seen as [outer][size][inner]: `outer`
 * elements-rows before the dimension, `inner_bytes` bytes after it (element size included). */
typedef struct tune_range_tensor {
  int32_t arg;       /* index into args */
  int32_t is_output; /* written by the kernel: copied back from a padded copy, never in */
  int64_t outer;
  int64_t inner_bytes;
} tune_range_tensor;

/* Where the tensors live. NULL in a plan: host memory (malloc, memcpy). A GPU library passes
 * the GPU runtime's (libtune_gpurt.so: tune_gpurt_device_memory), with its module as `ctx`.
 * Each returns 0 or a negative code, work queued on `stream` in order. */
typedef struct tune_range_memory {
  int32_t (*alloc)(void* ctx, uint64_t bytes, void* stream, void** out);
  int32_t (*release)(void* ctx, void* ptr, void* stream);
  int32_t (*zero)(void* ctx, void* ptr, uint64_t bytes, void* stream); /* bytes: multiple of 4 */
  int32_t (*copy_2d)(void* ctx, void* dst, uint64_t dst_pitch, const void* src, uint64_t src_pitch,
                     uint64_t width, uint64_t height, void* stream);
  const char* (*last_error)(void);
} tune_range_memory;

typedef struct tune_range_plan {
  int32_t abi_version; /* TUNE_RANGE_ABI_VERSION */
  /* The range's text around its bounds: a size's workload is text_before + size + text_after
   * ("gemm:M=" and ",N=4096,K=4096" for gemm:M=1..4096,N=4096,K=4096). */
  const char* text_before;
  const char* text_after;
  int64_t lo, hi;
  /* The dimension is the outermost of every tensor that carries it (outer == 1) and no sum runs
   * over it (GEMM M, conv2d N): a size may be cut into pieces. */
  int32_t splittable;
  int32_t num_args; /* the kernels' arguments, 1..16 */
  int32_t num_tensors;
  const tune_range_tensor* tensors;
  int32_t num_kernels; /* >= 1, ascending sizes within [lo, hi], the largest being hi */
  const tune_range_kernel* kernels;
  const tune_range_memory* memory; /* NULL: host memory */
  void* memory_ctx;
} tune_range_plan;

/* Runs `size` (the ranged dimension's value) on the plan's kernels, `args` holding the kernels'
 * num_args arguments at that size. */
TUNE_RANGE_EXPORT int32_t tune_range_call(const tune_range_plan* plan, int64_t size,
                                          void* const* args, void* stream);

/* The pieces tune_range_call runs `size` as: writes up to `capacity` (kernel size, piece
 * length) pairs to sizes[2*i], sizes[2*i+1] (a piece shorter than its kernel is padded) and
 * returns how many there are (more than capacity: only the first capacity written), or a
 * negative code. For people and tests: it says how a size is dispatched. */
TUNE_RANGE_EXPORT int32_t tune_range_plan_pieces(const tune_range_plan* plan, int64_t size,
                                                 int64_t* sizes, int32_t capacity);

/* Appends the counts recorded so far to TUNE_RECORD_SHAPES's file and forgets them; 0 when
 * recording is off or nothing was recorded, else TUNE_RANGE_ERROR_RECORDING (the file could not
 * be written: tune_range_last_error says why; the counts are kept for the next flush). Also run
 * at exit. */
TUNE_RANGE_EXPORT int32_t tune_range_flush_recording(void);

/* What the last failing call of this thread did wrong ("" when none failed). */
TUNE_RANGE_EXPORT const char* tune_range_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* TUNE_RANGE_H_ */
