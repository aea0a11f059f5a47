/* libtune_range.so (see tune_range.h): the dispatch of a shape range's sizes onto the kernels
 * compiled for some of them (exact, zero-padded or split into pieces); tune_range_record.c counts
 * the sizes the log did not measure. Plain C11 with POSIX threads; no GPU code: a GPU
 * library's plan brings the GPU runtime's memory operations (tune_gpurt_device_memory). */
#define _GNU_SOURCE
#include "tune_range.h"

#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_range_internal.h"

/* The most arguments a kernel has (tune_range_plan.num_args). */
#define MAX_ARGS 16
/* The most pieces one call runs: a split needing more is not considered (a pad always fits). */
#define MAX_PIECES 64
/* Padded copies are allocated in multiples of this many bytes (a multiple of 4 for zero()). */
#define PAD_ALIGN 256
/* What a padded piece's copies are priced at, in bytes moved per second: host copies that miss
 * the caches (an Emerald Rapids core under KVM moved about 8 GB/s in the range bench's padded
 * rows; a Zen 5 core whose copies stayed in L2, about 40), and device copies. */
#define HOST_COPY_BYTES_PER_SECOND 1e10
#define DEVICE_COPY_BYTES_PER_SECOND 1e12

static _Thread_local char t_error[1024];

int32_t tune_range_fail(int32_t code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(t_error, sizeof t_error, format, args);
  va_end(args);
  return code;
}

void tune_range_clear_error(void) { t_error[0] = '\0'; }

const char* tune_range_last_error(void) { return t_error; }

const char* tune_range_text_or_empty(const char* text) { return text != NULL ? text : ""; }

/* "gemm:M=1..4096,N=4096,K=4096" */
static const char* range_text(const tune_range_plan* plan, char* buf, size_t size) {
  snprintf(buf, size, "%s%lld..%lld%s", tune_range_text_or_empty(plan->text_before),
           (long long)plan->lo, (long long)plan->hi, tune_range_text_or_empty(plan->text_after));
  return buf;
}

/* ---- Plan checks. ---------------------------------------------------------------------------- */

#define BAD_PLAN_PREFIX "bad range plan %s (a bug of the library's generator): "

static int32_t check_kernels(const tune_range_plan* plan, const char* range) {
  if (plan->num_kernels < 1 || plan->kernels == NULL) {
    return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN,
                           BAD_PLAN_PREFIX
                           "num_kernels is %d with kernels %s (accepted: at least 1 kernel)",
                           range, (int)plan->num_kernels, plan->kernels == NULL ? "NULL" : "given");
  }
  for (int32_t i = 0; i < plan->num_kernels; ++i) {
    const tune_range_kernel* kernel = &plan->kernels[i];
    if (kernel->call == NULL) {
      return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN, BAD_PLAN_PREFIX "kernels[%d].call is NULL",
                             range, (int)i);
    }
    if (kernel->size < plan->lo || kernel->size > plan->hi) {
      return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN,
                             BAD_PLAN_PREFIX
                             "kernels[%d].size %lld is outside [lo, hi] = [%lld, %lld] "
                             "(accepted: ascending sizes within [lo, hi], the largest hi)",
                             range, (int)i, (long long)kernel->size, (long long)plan->lo,
                             (long long)plan->hi);
    }
    if (i > 0 && kernel->size <= plan->kernels[i - 1].size) {
      return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN,
                             BAD_PLAN_PREFIX
                             "kernels[%d].size %lld does not ascend past kernels[%d].size "
                             "%lld (accepted: strictly ascending sizes within [lo, hi], the "
                             "largest hi)",
                             range, (int)i, (long long)kernel->size, (int)(i - 1),
                             (long long)plan->kernels[i - 1].size);
    }
    if (!(kernel->seconds >= 0 && kernel->seconds <= DBL_MAX)) {
      return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN,
                             BAD_PLAN_PREFIX
                             "kernels[%d].seconds is %g (accepted: a finite median >= 0, "
                             "0 when unknown)",
                             range, (int)i, kernel->seconds);
    }
  }
  const tune_range_kernel* largest = &plan->kernels[plan->num_kernels - 1];
  if (largest->size != plan->hi) {
    return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN,
                           BAD_PLAN_PREFIX
                           "the largest kernel, kernels[%d].size %lld, is not hi %lld "
                           "(accepted: the largest kernel's size is hi, so every size fits "
                           "a kernel)",
                           range, (int)(plan->num_kernels - 1), (long long)largest->size,
                           (long long)plan->hi);
  }
  return TUNE_RANGE_OK;
}

static int32_t check_tensors(const tune_range_plan* plan, const char* range) {
  if (plan->num_tensors < 0 || plan->num_tensors > plan->num_args ||
      (plan->num_tensors > 0 && plan->tensors == NULL)) {
    return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN,
                           BAD_PLAN_PREFIX
                           "num_tensors is %d with tensors %s (accepted: 0 to num_args = %d, "
                           "tensors holding them)",
                           range, (int)plan->num_tensors, plan->tensors == NULL ? "NULL" : "given",
                           (int)plan->num_args);
  }
  for (int32_t t = 0; t < plan->num_tensors; ++t) {
    const tune_range_tensor* tensor = &plan->tensors[t];
    if (tensor->arg < 0 || tensor->arg >= plan->num_args) {
      return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN,
                             BAD_PLAN_PREFIX
                             "tensors[%d].arg is %d (accepted: an argument index, 0 to "
                             "num_args - 1 = %d)",
                             range, (int)t, (int)tensor->arg, (int)(plan->num_args - 1));
    }
    for (int32_t u = 0; u < t; ++u) {
      if (plan->tensors[u].arg == tensor->arg) {
        return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN,
                               BAD_PLAN_PREFIX
                               "tensors[%d].arg %d repeats tensors[%d].arg (accepted: each "
                               "argument described once)",
                               range, (int)t, (int)tensor->arg, (int)u);
      }
    }
    if (tensor->outer < 1) {
      return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN,
                             BAD_PLAN_PREFIX
                             "tensors[%d].outer is %lld (accepted: >= 1 rows before the "
                             "ranged dimension)",
                             range, (int)t, (long long)tensor->outer);
    }
    if (tensor->inner_bytes < 1) {
      return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN,
                             BAD_PLAN_PREFIX
                             "tensors[%d].inner_bytes is %lld (accepted: >= 1 byte after "
                             "the ranged dimension, element size included)",
                             range, (int)t, (long long)tensor->inner_bytes);
    }
    if (plan->splittable && tensor->outer != 1) {
      return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN,
                             BAD_PLAN_PREFIX
                             "tensors[%d].outer is %lld in a splittable plan (accepted: 1, "
                             "a splittable dimension being every tensor's outermost)",
                             range, (int)t, (long long)tensor->outer);
    }
    int64_t bytes = 0;
    if (__builtin_mul_overflow(tensor->outer, plan->hi, &bytes) ||
        __builtin_mul_overflow(bytes, tensor->inner_bytes, &bytes) || bytes > INT64_MAX / 2) {
      return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN,
                             BAD_PLAN_PREFIX
                             "tensors[%d]: outer %lld * hi %lld * inner_bytes %lld bytes "
                             "overflows",
                             range, (int)t, (long long)tensor->outer, (long long)plan->hi,
                             (long long)tensor->inner_bytes);
    }
  }
  return TUNE_RANGE_OK;
}

static int32_t check_plan(const tune_range_plan* plan, const char* function) {
  if (plan == NULL) {
    return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN, "%s: the plan is NULL", function);
  }
  char range[256];
  range_text(plan, range, sizeof range);
  if (plan->abi_version != TUNE_RANGE_ABI_VERSION) {
    return tune_range_fail(
        TUNE_RANGE_ERROR_BAD_PLAN,
        "the library of range %s was built for range runtime ABI version %d, this "
        "libtune_range.so implements version %d: rebuild it with the matching "
        "tune-compile (abi_version)",
        range, (int)plan->abi_version, TUNE_RANGE_ABI_VERSION);
  }
  if (plan->lo < 1 || plan->lo > plan->hi) {
    return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN,
                           BAD_PLAN_PREFIX "lo %lld, hi %lld (accepted: 1 <= lo <= hi)", range,
                           (long long)plan->lo, (long long)plan->hi);
  }
  if (plan->num_args < 1 || plan->num_args > MAX_ARGS) {
    return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN,
                           BAD_PLAN_PREFIX "num_args is %d (accepted: 1 to %d)", range,
                           (int)plan->num_args, MAX_ARGS);
  }
  int32_t rc = check_kernels(plan, range);
  if (rc == TUNE_RANGE_OK) {
    rc = check_tensors(plan, range);
  }
  if (rc != TUNE_RANGE_OK) {
    return rc;
  }
  const tune_range_memory* memory = plan->memory;
  if (memory != NULL) {
    const char* missing = memory->alloc == NULL     ? "alloc"
                          : memory->release == NULL ? "release"
                          : memory->zero == NULL    ? "zero"
                          : memory->copy_2d == NULL ? "copy_2d"
                                                    : NULL;
    if (missing != NULL) {
      return tune_range_fail(TUNE_RANGE_ERROR_BAD_PLAN,
                             BAD_PLAN_PREFIX
                             "memory->%s is NULL (accepted: memory NULL for host memory, "
                             "or every operation given)",
                             range, missing);
    }
  }
  return TUNE_RANGE_OK;
}

static int32_t check_size(const tune_range_plan* plan, int64_t size) {
  if (size >= plan->lo && size <= plan->hi) {
    return TUNE_RANGE_OK;
  }
  char range[256];
  return tune_range_fail(TUNE_RANGE_ERROR_OUT_OF_RANGE,
                         "size %lld is outside the range %s (accepted: %lld to %lld)",
                         (long long)size, range_text(plan, range, sizeof range),
                         (long long)plan->lo, (long long)plan->hi);
}

/* ---- Planning. ------------------------------------------------------------------------------- */

typedef struct piece {
  int32_t kernel; /* index into plan->kernels */
  int64_t offset; /* rows into the ranged dimension */
  int64_t length; /* rows of the size it covers: the kernel's size, or fewer (padded) */
} piece;

/* The index of the kernel of `size`, or -1. */
static int32_t exact_kernel(const tune_range_plan* plan, int64_t size) {
  int32_t lo = 0, hi = plan->num_kernels - 1;
  while (lo <= hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (plan->kernels[mid].size == size) {
      return mid;
    }
    if (plan->kernels[mid].size < size) {
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return -1;
}

/* The index of the smallest kernel of size >= v (v <= hi: there is one). */
static int32_t ceil_kernel(const tune_range_plan* plan, int64_t v) {
  int32_t lo = 0, hi = plan->num_kernels - 1;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (plan->kernels[mid].size >= v) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

/* The index of the largest kernel of size <= v, or -1 when every kernel is larger. */
static int32_t floor_kernel(const tune_range_plan* plan, int64_t v) {
  int32_t c = ceil_kernel(plan, v);
  if (plan->kernels[c].size == v) {
    return c;
  }
  return c - 1;
}

/* Whether (cost, pieces) beats (best_cost, best_pieces): cheaper beyond rounding, or as cheap
 * in fewer pieces. */
static int better(double cost, int32_t pieces, double best_cost, int32_t best_pieces) {
  const double larger = cost > best_cost ? cost : best_cost; /* costs are >= 0 */
  const double tolerance = 1e-12 * larger;
  if (cost < best_cost - tolerance) {
    return 1;
  }
  return cost <= best_cost + tolerance && pieces < best_pieces;
}

/* The seconds a padded piece on kernel `k` spends copying: every tensor that carries the
 * dimension written and read once at the kernel's size (copied in and zeroed, or copied out). */
static double copy_seconds(const tune_range_plan* plan, int32_t k) {
  double bytes = 0;
  for (int32_t t = 0; t < plan->num_tensors; ++t) {
    const tune_range_tensor* tensor = &plan->tensors[t];
    bytes +=
        2.0 * (double)tensor->outer * (double)plan->kernels[k].size * (double)tensor->inner_bytes;
  }
  return bytes / (plan->memory == NULL ? HOST_COPY_BYTES_PER_SECOND : DEVICE_COPY_BYTES_PER_SECOND);
}

/* The pieces `size` (within [lo, hi] of a checked plan) runs as: fills out[MAX_PIECES] and
 * returns their count. A size with a kernel is that kernel. Otherwise the cheapest of the
 * chains: q_0 pieces of the largest kernel s_0 <= size, q_1 of the largest s_1 <= the rest, ...
 * ending when nothing is left or in one padded piece (the first chain being the padded size
 * alone). Each chain's cost sums its kernels' costs: their seconds when every kernel has some
 * (a padded piece's with its copies, copy_seconds), else their sizes. */
static int32_t plan_pieces(const tune_range_plan* plan, int64_t size, piece out[MAX_PIECES]) {
  int32_t exact = exact_kernel(plan, size);
  if (exact >= 0) {
    out[0] = (piece){exact, 0, size};
    return 1;
  }
  int use_seconds = 1;
  for (int32_t i = 0; i < plan->num_kernels; ++i) {
    use_seconds = use_seconds && plan->kernels[i].seconds > 0;
  }
#define COST(i) (use_seconds ? plan->kernels[i].seconds : (double)plan->kernels[i].size)
#define PADDED_COST(i) (COST(i) + (use_seconds ? copy_seconds(plan, i) : 0.0))

  /* The steps of the split chain: steps[j] pieces of kernel step_kernel[j]. */
  int32_t step_kernel[MAX_PIECES];
  int64_t steps[MAX_PIECES];
  int32_t num_steps = 0;
  /* The best chain: its first best_steps steps, then a padded piece when best_pad. */
  double best_cost = PADDED_COST(ceil_kernel(plan, size));
  int32_t best_pieces = 1;
  int32_t best_steps = 0;
  int best_pad = 1;

  if (plan->splittable) {
    double cost = 0;
    int32_t pieces = 0;
    int64_t rest = size;
    while (rest > 0) {
      int32_t k = floor_kernel(plan, rest);
      if (k < 0) {
        break;
      }
      int64_t q = rest / plan->kernels[k].size;
      if (q > MAX_PIECES - pieces) {
        break;
      }
      cost += (double)q * COST(k);
      pieces += (int32_t)q;
      rest -= q * plan->kernels[k].size;
      step_kernel[num_steps] = k;
      steps[num_steps] = q;
      ++num_steps;
      if (rest == 0) {
        if (better(cost, pieces, best_cost, best_pieces)) {
          best_cost = cost, best_pieces = pieces, best_steps = num_steps, best_pad = 0;
        }
      } else if (pieces < MAX_PIECES) {
        double padded = cost + PADDED_COST(ceil_kernel(plan, rest));
        if (better(padded, pieces + 1, best_cost, best_pieces)) {
          best_cost = padded, best_pieces = pieces + 1, best_steps = num_steps, best_pad = 1;
        }
      }
    }
  }
#undef PADDED_COST
#undef COST

  int32_t count = 0;
  int64_t offset = 0;
  for (int32_t j = 0; j < best_steps; ++j) {
    int32_t k = step_kernel[j];
    for (int64_t q = 0; q < steps[j]; ++q) {
      out[count++] = (piece){k, offset, plan->kernels[k].size};
      offset += plan->kernels[k].size;
    }
  }
  if (best_pad) {
    out[count++] = (piece){ceil_kernel(plan, size - offset), offset, size - offset};
  }
  return count;
}

static const char* memory_error(const tune_range_memory* memory) {
  const char* text = memory->last_error != NULL ? memory->last_error() : NULL;
  return text != NULL && text[0] != '\0' ? text : "no reason given";
}

/* ---- Running pieces. ------------------------------------------------------------------------- */

static int32_t kernel_failed(const tune_range_plan* plan, const piece* p, int64_t size,
                             int32_t rc) {
  char range[256];
  return tune_range_fail(
      rc,
      "the kernel of size %lld returned %d, running rows %lld..%lld of size %lld of the "
      "range %s",
      (long long)plan->kernels[p->kernel].size, (int)rc, (long long)p->offset,
      (long long)(p->offset + p->length - 1), (long long)size,
      range_text(plan, range, sizeof range));
}

/* A piece as long as its kernel: the kernel on the tensors themselves, `offset` rows in. */
static int32_t run_in_place(const tune_range_plan* plan, const piece* p, int64_t size,
                            void* const* user_args, void* stream) {
  void* args[MAX_ARGS];
  memcpy(args, user_args, (size_t)plan->num_args * sizeof(void*));
  for (int32_t t = 0; t < plan->num_tensors; ++t) {
    const tune_range_tensor* tensor = &plan->tensors[t];
    args[tensor->arg] = (char*)user_args[tensor->arg] + p->offset * tensor->inner_bytes;
  }
  int32_t rc = plan->kernels[p->kernel].call(args, stream);
  return rc != 0 ? kernel_failed(plan, p, size, rc) : TUNE_RANGE_OK;
}

/* A piece shorter than its kernel: the kernel on zero-padded copies of the tensors. */
static int32_t run_padded(const tune_range_plan* plan, const piece* p, int64_t size,
                          void* const* user_args, void* stream) {
  const tune_range_memory* memory = plan->memory != NULL ? plan->memory : &tune_range_host_memory;
  void* ctx = plan->memory_ctx;
  const int64_t s = plan->kernels[p->kernel].size;
  void* args[MAX_ARGS];
  memcpy(args, user_args, (size_t)plan->num_args * sizeof(void*));
  void* temporaries[MAX_ARGS] = {NULL};
  int32_t rc = TUNE_RANGE_OK;
  char range[256];

  for (int32_t t = 0; t < plan->num_tensors && rc == TUNE_RANGE_OK; ++t) {
    const tune_range_tensor* tensor = &plan->tensors[t];
    /* Within INT64_MAX / 2 (check_tensors), so rounding up cannot overflow. */
    const uint64_t bytes = ((uint64_t)(tensor->outer * s * tensor->inner_bytes) + PAD_ALIGN - 1) /
                           PAD_ALIGN * PAD_ALIGN;
    if (memory->alloc(ctx, bytes, stream, &temporaries[t]) != 0 || temporaries[t] == NULL) {
      temporaries[t] = NULL;
      rc = tune_range_fail(
          TUNE_RANGE_ERROR_NO_MEMORY,
          "allocating %llu bytes for the zero-padded copy of argument %d (size %lld of the "
          "range %s, padded to the kernel of size %lld) failed: %s",
          (unsigned long long)bytes, (int)tensor->arg, (long long)size,
          range_text(plan, range, sizeof range), (long long)s, memory_error(memory));
      break;
    }
    args[tensor->arg] = temporaries[t];
    if (tensor->is_output) {
      continue;
    }
    /* Zeros where the copy writes nothing: past the piece's rows when the dimension is the
     * tensor's outermost (from a multiple of 4 bytes, as zero() needs), else everywhere. */
    const uint64_t head =
        tensor->outer == 1 ? (uint64_t)(p->length * tensor->inner_bytes) / 4 * 4 : 0;
    const char* op = "zeroing";
    int32_t copied = memory->zero(ctx, (char*)temporaries[t] + head, bytes - head, stream);
    if (copied == 0) {
      op = "copying in";
      copied = memory->copy_2d(
          ctx, temporaries[t], (uint64_t)(s * tensor->inner_bytes),
          (const char*)user_args[tensor->arg] + p->offset * tensor->inner_bytes,
          (uint64_t)(size * tensor->inner_bytes), (uint64_t)(p->length * tensor->inner_bytes),
          (uint64_t)tensor->outer, stream);
    }
    if (copied != 0) {
      rc = tune_range_fail(
          TUNE_RANGE_ERROR_COPY,
          "%s the zero-padded copy of argument %d (size %lld of the range %s, padded to "
          "the kernel of size %lld) failed: %s",
          op, (int)tensor->arg, (long long)size, range_text(plan, range, sizeof range),
          (long long)s, memory_error(memory));
    }
  }

  if (rc == TUNE_RANGE_OK) {
    int32_t called = plan->kernels[p->kernel].call(args, stream);
    if (called != 0) {
      rc = kernel_failed(plan, p, size, called);
    }
  }

  for (int32_t t = 0; t < plan->num_tensors && rc == TUNE_RANGE_OK; ++t) {
    const tune_range_tensor* tensor = &plan->tensors[t];
    if (!tensor->is_output) {
      continue;
    }
    if (memory->copy_2d(ctx, (char*)user_args[tensor->arg] + p->offset * tensor->inner_bytes,
                        (uint64_t)(size * tensor->inner_bytes), temporaries[t],
                        (uint64_t)(s * tensor->inner_bytes),
                        (uint64_t)(p->length * tensor->inner_bytes), (uint64_t)tensor->outer,
                        stream) != 0) {
      rc = tune_range_fail(
          TUNE_RANGE_ERROR_COPY,
          "copying out the zero-padded copy of output argument %d (size %lld of the range "
          "%s, padded to the kernel of size %lld) failed: %s",
          (int)tensor->arg, (long long)size, range_text(plan, range, sizeof range), (long long)s,
          memory_error(memory));
    }
  }

  /* Released in every case (queued after the kernel on the stream). */
  for (int32_t t = 0; t < plan->num_tensors; ++t) {
    if (temporaries[t] == NULL) {
      continue;
    }
    if (memory->release(ctx, temporaries[t], stream) != 0 && rc == TUNE_RANGE_OK) {
      rc = tune_range_fail(
          TUNE_RANGE_ERROR_NO_MEMORY,
          "releasing the zero-padded copy of argument %d (size %lld of the range %s) "
          "failed: %s",
          (int)plan->tensors[t].arg, (long long)size, range_text(plan, range, sizeof range),
          memory_error(memory));
    }
  }
  return rc;
}

/* ---- Entry points. --------------------------------------------------------------------------- */

int32_t tune_range_call(const tune_range_plan* plan, int64_t size, void* const* args,
                        void* stream) {
  t_error[0] = '\0';
  int32_t rc = check_plan(plan, "tune_range_call");
  if (rc == TUNE_RANGE_OK && args == NULL) {
    rc = tune_range_fail(
        TUNE_RANGE_ERROR_BAD_PLAN,
        "tune_range_call: args is NULL (it must hold the plan's %d kernel arguments)",
        (int)plan->num_args);
  }
  if (rc == TUNE_RANGE_OK) {
    rc = check_size(plan, size);
  }
  if (rc != TUNE_RANGE_OK) {
    return rc;
  }
  const int32_t exact = exact_kernel(plan, size);
  if (exact >= 0) {
    if (!plan->kernels[exact].measured) {
      tune_range_record(plan, size); /* its kernel's config was measured at another size */
    }
    const piece whole = {exact, 0, size};
    return run_in_place(plan, &whole, size, args, stream);
  }
  tune_range_record(plan, size);
  for (int32_t t = 0; t < plan->num_tensors; ++t) {
    if (args[plan->tensors[t].arg] == NULL) {
      char range[256];
      return tune_range_fail(
          TUNE_RANGE_ERROR_COPY,
          "argument %d, a tensor of size %lld of the range %s, is NULL (it is padded or "
          "cut into pieces: a size without its own kernel needs its tensors)",
          (int)plan->tensors[t].arg, (long long)size, range_text(plan, range, sizeof range));
    }
  }
  piece pieces[MAX_PIECES];
  const int32_t count = plan_pieces(plan, size, pieces);
  for (int32_t i = 0; i < count; ++i) {
    const piece* p = &pieces[i];
    rc = p->length == plan->kernels[p->kernel].size ? run_in_place(plan, p, size, args, stream)
                                                    : run_padded(plan, p, size, args, stream);
    if (rc != TUNE_RANGE_OK) {
      return rc;
    }
  }
  return TUNE_RANGE_OK;
}

int32_t tune_range_plan_pieces(const tune_range_plan* plan, int64_t size, int64_t* sizes,
                               int32_t capacity) {
  t_error[0] = '\0';
  int32_t rc = check_plan(plan, "tune_range_plan_pieces");
  if (rc == TUNE_RANGE_OK && (capacity < 0 || (sizes == NULL && capacity > 0))) {
    rc = tune_range_fail(
        TUNE_RANGE_ERROR_BAD_PLAN,
        "tune_range_plan_pieces: sizes must hold capacity >= 0 pairs (capacity %d, sizes "
        "%s)",
        (int)capacity, sizes == NULL ? "NULL" : "given");
  }
  if (rc == TUNE_RANGE_OK) {
    rc = check_size(plan, size);
  }
  if (rc != TUNE_RANGE_OK) {
    return rc;
  }
  piece pieces[MAX_PIECES];
  const int32_t count = plan_pieces(plan, size, pieces);
  for (int32_t i = 0; i < count && i < capacity; ++i) {
    sizes[2 * i] = plan->kernels[pieces[i].kernel].size;
    sizes[2 * i + 1] = pieces[i].length;
  }
  return count;
}
