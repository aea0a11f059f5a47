/* One entry of a table of entry points opened with dlopen (tune_cuda_driver.h,
 * tune_hip_runtime.h): the step both tables' resolve functions take for each entry. Plain C,
 * header only, like the tables. */
#ifndef TUNE_DL_TABLE_H_
#define TUNE_DL_TABLE_H_

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Resolves one entry of `lib` into the function pointer at `field` (of `field_size` bytes):
 * by `symbol`, else by `fallback` when not NULL. When neither is found, records `symbol` as
 * the first missing entry: in `*missing` for a required entry, in `*missing_optional` (when
 * not NULL) for an optional one; an earlier record is kept. */
static inline void tune_dl_table_resolve_entry(void* lib, void* field, size_t field_size,
                                               const char* symbol, const char* fallback,
                                               int required, const char** missing,
                                               const char** missing_optional) {
  void* sym = dlsym(lib, symbol);
  if (sym == NULL && fallback != NULL) {
    sym = dlsym(lib, fallback);
  }
  memcpy(field, &sym, field_size < sizeof sym ? field_size : sizeof sym);
  if (sym != NULL) {
    return;
  }
  if (required) {
    if (*missing == NULL) {
      *missing = symbol;
    }
  } else if (missing_optional != NULL && *missing_optional == NULL) {
    *missing_optional = symbol;
  }
}

#ifdef __cplusplus
}
#endif

#endif /* TUNE_DL_TABLE_H_ */
