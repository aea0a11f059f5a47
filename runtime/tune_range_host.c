/* libtune_range.so's host memory (a plan's `memory` NULL): the zero-padded copies of CPU
 * libraries. Each thread keeps the blocks its calls released, up to SCRATCH_SLOTS of them (the
 * largest), and hands them out again: a size that always runs padded then asks malloc for
 * nothing after its first call. Without the cache every call would take fresh pages from the
 * kernel, since glibc gives a freed block back to it once the free memory at the top of the heap
 * passes 128 KiB (M_TRIM_THRESHOLD), and a page fault under a hypervisor costs microseconds. A
 * thread's blocks are freed when it exits; the cache holds at most what the thread's largest
 * padded call needed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tune_range_internal.h"

/* At least the most tensors a plan pads at once (a GEMM: A and C; a conv2d: input and output). */
#define SCRATCH_SLOTS 4
/* Every block starts with a header of this size holding its usable bytes; callers get the
 * 64-byte-aligned address after it. */
#define HEADER 64

typedef struct scratch {
  void* block[SCRATCH_SLOTS]; /* as malloc returned them (header first); NULL: empty slot */
} scratch;

static pthread_key_t g_scratch_key;
static pthread_once_t g_scratch_once = PTHREAD_ONCE_INIT;
static _Thread_local scratch t_scratch;
static _Thread_local int t_registered; /* this thread's cache is freed at its exit */

static uint64_t block_bytes(void* block) {
  uint64_t bytes;
  memcpy(&bytes, block, sizeof bytes);
  return bytes;
}

static void free_scratch(void* unused) {
  (void)unused;
  for (int i = 0; i < SCRATCH_SLOTS; ++i) {
    free(t_scratch.block[i]);
    t_scratch.block[i] = NULL;
  }
}

static void create_key(void) { pthread_key_create(&g_scratch_key, free_scratch); }

static int32_t host_alloc(void* ctx, uint64_t bytes, void* stream, void** out) {
  (void)ctx, (void)stream;
  /* The smallest cached block that holds `bytes`. */
  int best = -1;
  for (int i = 0; i < SCRATCH_SLOTS; ++i) {
    void* b = t_scratch.block[i];
    if (b != NULL && block_bytes(b) >= bytes &&
        (best < 0 || block_bytes(b) < block_bytes(t_scratch.block[best]))) {
      best = i;
    }
  }
  void* block;
  if (best >= 0) {
    block = t_scratch.block[best];
    t_scratch.block[best] = NULL;
  } else {
    block = aligned_alloc(64, (size_t)(bytes + HEADER)); /* bytes: a multiple of 64 */
    if (block == NULL) {
      *out = NULL;
      return -1;
    }
    memcpy(block, &bytes, sizeof bytes);
  }
  *out = (char*)block + HEADER;
  return 0;
}

static int32_t host_release(void* ctx, void* ptr, void* stream) {
  (void)ctx, (void)stream;
  void* block = (char*)ptr - HEADER;
  /* Keep it in an empty slot, or in place of the smallest cached block when it is larger. */
  int slot = -1;
  for (int i = 0; i < SCRATCH_SLOTS && slot < 0; ++i) {
    if (t_scratch.block[i] == NULL) {
      slot = i;
    }
  }
  if (slot < 0) {
    slot = 0;
    for (int i = 1; i < SCRATCH_SLOTS; ++i) {
      if (block_bytes(t_scratch.block[i]) < block_bytes(t_scratch.block[slot])) {
        slot = i;
      }
    }
    if (block_bytes(t_scratch.block[slot]) >= block_bytes(block)) {
      free(block);
      return 0;
    }
    free(t_scratch.block[slot]);
  }
  if (!t_registered) { /* a key's destructor runs only for a non-NULL value */
    pthread_once(&g_scratch_once, create_key);
    t_registered = pthread_setspecific(g_scratch_key, &t_scratch) == 0;
  }
  t_scratch.block[slot] = block;
  return 0;
}

static int32_t host_zero(void* ctx, void* ptr, uint64_t bytes, void* stream) {
  (void)ctx, (void)stream;
  memset(ptr, 0, (size_t)bytes);
  return 0;
}

static int32_t host_copy_2d(void* ctx, void* dst, uint64_t dst_pitch, const void* src,
                            uint64_t src_pitch, uint64_t width, uint64_t height, void* stream) {
  (void)ctx, (void)stream;
  if (dst_pitch == width && src_pitch == width) {
    memcpy(dst, src, (size_t)(width * height));
    return 0;
  }
  for (uint64_t row = 0; row < height; ++row) {
    memcpy((char*)dst + row * dst_pitch, (const char*)src + row * src_pitch, (size_t)width);
  }
  return 0;
}

static const char* host_last_error(void) { return "out of host memory"; }

const tune_range_memory tune_range_host_memory = {host_alloc, host_release, host_zero, host_copy_2d,
                                                  host_last_error};
