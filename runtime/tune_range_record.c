/* libtune_range.so's recording (tune_range.h: TUNE_RECORD_SHAPES): the sizes a range's entry was
 * called with that the tuning log did not measure, counted per range under a process-wide lock
 * and appended to the file as a workloads file at each flush and at exit. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune_range.h"
#include "tune_range_internal.h"

/* ---- Recording. ------------------------------------------------------------------------------ */

/* One counted (range, size): keyed by the plan's address and the size, its texts copied (the
 * library holding the plan may be unloaded before the flush). */
typedef struct record_entry {
  const tune_range_plan* plan; /* NULL: an empty slot */
  int64_t size;
  char* before;
  char* after;
  uint64_t count;
} record_entry;

static pthread_once_t g_record_once = PTHREAD_ONCE_INIT;
static char* g_record_path; /* TUNE_RECORD_SHAPES; NULL: recording off */
static pthread_mutex_t g_record_lock = PTHREAD_MUTEX_INITIALIZER;
/* An open-addressing table, under g_record_lock. */
static record_entry* g_entries;
static size_t g_capacity; /* 0 or a power of two */
static size_t g_used;
static int g_exit_flush_registered;

/* fork: the lock is held across it (no child starts with it taken), and the child forgets the
 * parent's counts (the parent writes them). */
static void record_prepare_fork(void) { pthread_mutex_lock(&g_record_lock); }
static void record_parent_fork(void) { pthread_mutex_unlock(&g_record_lock); }
static void record_child_fork(void) {
  for (size_t i = 0; i < g_capacity; ++i) {
    g_entries[i].count = 0;
  }
  pthread_mutex_unlock(&g_record_lock);
}

static void record_init(void) {
  const char* path = getenv("TUNE_RECORD_SHAPES");
  if (path != NULL && path[0] != '\0') {
    g_record_path = strdup(path);
    if (g_record_path != NULL) {
      pthread_atfork(record_prepare_fork, record_parent_fork, record_child_fork);
    }
  }
}

static size_t record_hash(const tune_range_plan* plan, int64_t size) {
  uint64_t x = (uint64_t)(uintptr_t)plan ^ ((uint64_t)size * 0x9e3779b97f4a7c15ull);
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return (size_t)x;
}

static int record_matches(const record_entry* e, const tune_range_plan* plan, int64_t size) {
  return e->plan == plan && e->size == size &&
         strcmp(e->before, tune_range_text_or_empty(plan->text_before)) == 0 &&
         strcmp(e->after, tune_range_text_or_empty(plan->text_after)) == 0;
}

/* Under g_record_lock: the table at twice its capacity (64 at first); 0 when out of memory. */
static int record_grow(void) {
  size_t capacity = g_capacity == 0 ? 64 : g_capacity * 2;
  record_entry* entries = calloc(capacity, sizeof *entries);
  if (entries == NULL) {
    return 0;
  }
  for (size_t i = 0; i < g_capacity; ++i) {
    if (g_entries[i].plan == NULL) {
      continue;
    }
    size_t slot = record_hash(g_entries[i].plan, g_entries[i].size) & (capacity - 1);
    while (entries[slot].plan != NULL) {
      slot = (slot + 1) & (capacity - 1);
    }
    entries[slot] = g_entries[i];
  }
  free(g_entries);
  g_entries = entries;
  g_capacity = capacity;
  return 1;
}

static void flush_at_exit(void);

/* Counts one call of `size` (which has no kernel of its own). Recording is best effort: out of
 * memory, the call is not counted. */
void tune_range_record(const tune_range_plan* plan, int64_t size) {
  pthread_once(&g_record_once, record_init);
  if (g_record_path == NULL) {
    return;
  }
  pthread_mutex_lock(&g_record_lock);
  if (!g_exit_flush_registered) {
    g_exit_flush_registered = atexit(flush_at_exit) == 0;
  }
  if ((g_used + 1) * 10 > g_capacity * 7 && !record_grow()) {
    pthread_mutex_unlock(&g_record_lock);
    return;
  }
  size_t slot = record_hash(plan, size) & (g_capacity - 1);
  while (g_entries[slot].plan != NULL && !record_matches(&g_entries[slot], plan, size)) {
    slot = (slot + 1) & (g_capacity - 1);
  }
  record_entry* e = &g_entries[slot];
  if (e->plan == NULL) {
    char* before = strdup(tune_range_text_or_empty(plan->text_before));
    char* after = strdup(tune_range_text_or_empty(plan->text_after));
    if (before == NULL || after == NULL) {
      free(before);
      free(after);
      pthread_mutex_unlock(&g_record_lock);
      return;
    }
    *e = (record_entry){plan, size, before, after, 0};
    ++g_used;
  }
  ++e->count;
  pthread_mutex_unlock(&g_record_lock);
}

/* The file's lines in order: by workload text around the size, then size. */
static int compare_entries(const void* a, const void* b) {
  const record_entry* x = *(const record_entry* const*)a;
  const record_entry* y = *(const record_entry* const*)b;
  int c = strcmp(x->before, y->before);
  if (c == 0) {
    c = strcmp(x->after, y->after);
  }
  if (c == 0) {
    c = (x->size > y->size) - (x->size < y->size);
  }
  return c;
}

/* Under g_record_lock: appends the chunk in `buf` with one write(). */
static int32_t append_chunk(const char* buf, size_t length) {
  int fd = open(g_record_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return tune_range_fail(TUNE_RANGE_ERROR_RECORDING,
                           "cannot open %s (TUNE_RECORD_SHAPES) to append the recorded sizes: %s",
                           g_record_path, strerror(errno));
  }
  ssize_t written;
  do {
    written = write(fd, buf, length);
  } while (written < 0 && errno == EINTR);
  int saved = errno;
  int closed = close(fd);
  if (written < 0) {
    return tune_range_fail(
        TUNE_RANGE_ERROR_RECORDING,
        "writing %zu bytes of recorded sizes to %s (TUNE_RECORD_SHAPES) failed: %s", length,
        g_record_path, strerror(saved));
  }
  if ((size_t)written != length) {
    return tune_range_fail(
        TUNE_RANGE_ERROR_RECORDING,
        "only %zd of %zu bytes of recorded sizes were written to %s (TUNE_RECORD_SHAPES; "
        "is the disk full?)",
        written, length, g_record_path);
  }
  if (closed != 0 && errno != EINTR) {
    return tune_range_fail(
        TUNE_RANGE_ERROR_RECORDING,
        "closing %s (TUNE_RECORD_SHAPES) after writing the recorded sizes failed: %s",
        g_record_path, strerror(errno));
  }
  return TUNE_RANGE_OK;
}

int32_t tune_range_flush_recording(void) {
  tune_range_clear_error();
  pthread_once(&g_record_once, record_init);
  if (g_record_path == NULL) {
    return TUNE_RANGE_OK;
  }
  pthread_mutex_lock(&g_record_lock);
  char header[64];
  int header_length =
      snprintf(header, sizeof header, "# sizes recorded by pid %ld\n", (long)getpid());
  size_t length = (size_t)header_length;
  size_t count = 0;
  for (size_t i = 0; i < g_capacity; ++i) {
    if (g_entries[i].plan != NULL && g_entries[i].count > 0) {
      /* before, the size (20 digits and a sign), after, a space, the count (20), '\n' */
      length += strlen(g_entries[i].before) + strlen(g_entries[i].after) + 44;
      ++count;
    }
  }
  if (count == 0) {
    pthread_mutex_unlock(&g_record_lock);
    return TUNE_RANGE_OK;
  }
  record_entry** order = malloc(count * sizeof *order);
  char* buf = malloc(length + 1);
  int32_t rc = TUNE_RANGE_OK;
  if (order == NULL || buf == NULL) {
    rc = tune_range_fail(
        TUNE_RANGE_ERROR_RECORDING,
        "out of memory for the %zu recorded sizes to append to %s (TUNE_RECORD_SHAPES)", count,
        g_record_path);
  } else {
    size_t n = 0;
    for (size_t i = 0; i < g_capacity; ++i) {
      if (g_entries[i].plan != NULL && g_entries[i].count > 0) {
        order[n++] = &g_entries[i];
      }
    }
    qsort(order, count, sizeof *order, compare_entries);
    size_t used = (size_t)snprintf(buf, length + 1, "%s", header);
    for (size_t i = 0; i < count; ++i) {
      used += (size_t)snprintf(buf + used, length + 1 - used, "%s%lld%s %llu\n", order[i]->before,
                               (long long)order[i]->size, order[i]->after,
                               (unsigned long long)order[i]->count);
    }
    rc = append_chunk(buf, used);
    if (rc == TUNE_RANGE_OK) {
      for (size_t i = 0; i < count; ++i) {
        order[i]->count = 0;
      }
    }
  }
  pthread_mutex_unlock(&g_record_lock);
  free(order);
  free(buf);
  return rc;
}

static void flush_at_exit(void) {
  if (tune_range_flush_recording() != TUNE_RANGE_OK) {
    fprintf(stderr, "libtune_range: the sizes recorded by this process are lost: %s\n",
            tune_range_last_error());
  }
}
