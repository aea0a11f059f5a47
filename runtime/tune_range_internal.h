/* What tune_range.c, tune_range_host.c and tune_range_record.c share inside libtune_range.so
 * (hidden symbols). */
#ifndef TUNE_RANGE_INTERNAL_H_
#define TUNE_RANGE_INTERNAL_H_

#include <stdint.h>

#include "tune_range.h"

#define TUNE_RANGE_HIDDEN __attribute__((visibility("hidden")))

/* Sets the calling thread's error text (tune_range_last_error) and returns `code`. */
TUNE_RANGE_HIDDEN int32_t tune_range_fail(int32_t code, const char* format, ...)
    __attribute__((format(printf, 2, 3)));
/* Clears the calling thread's error text. */
TUNE_RANGE_HIDDEN void tune_range_clear_error(void);
/* `text`, or "" for NULL. */
TUNE_RANGE_HIDDEN const char* tune_range_text_or_empty(const char* text);
/* Counts one call of `plan` at `size` when TUNE_RECORD_SHAPES is set (tune_range_record.c). */
TUNE_RANGE_HIDDEN void tune_range_record(const tune_range_plan* plan, int64_t size);

/* Host memory for the padded copies of CPU plans (tune_range_host.c): aligned to 64 bytes, and
 * kept per thread for reuse once released. */
TUNE_RANGE_HIDDEN extern const tune_range_memory tune_range_host_memory;

#endif /* TUNE_RANGE_INTERNAL_H_ */
