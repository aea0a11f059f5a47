/* libtune_gpurt.so: the small GPU runtime that GPU kernel libraries built by tune-compile link.
 * A generated library embeds its device code (PTX for cuda targets, an HSA code object for rocm
 * targets) in one static tune_gpurt_module, and each of its C functions calls
 * tune_gpurt_launch with the kernel's name and launch geometry. The runtime opens the driver
 * (libcuda.so.1, or libamdhip64.so) with dlopen on first use, so neither the library nor the
 * program that uses it needs CUDA or ROCm at build time.
 *
 * Module loading: a module is loaded once per process and GPU context, on the first launch,
 * under a process-wide lock (loads are rare; launches take no lock). The context is:
 *   CUDA: the calling thread's current context (cuCtxGetCurrent); when none is current, the
 *         context of the given stream (cuStreamGetCtx), or for the NULL stream the primary
 *         context of device 0 (retained for the life of the process). That context is made
 *         current on the calling thread.
 *   HIP:  the calling thread's current device (hipGetDevice).
 * Function handles are cached per loaded module, so later launches are a lookup and the
 * driver's launch call. Every function is thread-safe.
 *
 * Errors are return codes (0 is success; the codes below are negative so they never collide
 * with a driver's or library's own positive codes); tune_gpurt_last_error() says what went wrong
 * on the calling thread, naming the cause (the library that was looked for, the driver's error
 * name and message, the JIT log of a rejected PTX module). */
#ifndef TUNE_GPURT_H_
#define TUNE_GPURT_H_

#include <stdint.h>

#include "tune_range.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TUNE_GPURT_BUILD)
#define TUNE_GPURT_EXPORT __attribute__((visibility("default")))
#else
#define TUNE_GPURT_EXPORT
#endif

/* tune_gpurt_module.api */
#define TUNE_GPURT_API_CUDA 1 /* image is PTX text (NUL-terminated), driver libcuda.so.1 */
#define TUNE_GPURT_API_HIP 2  /* image is an HSA code object (ELF), runtime libamdhip64.so */

/* tune_gpurt_module.abi_version: the layout below. */
#define TUNE_GPURT_ABI_VERSION 1

/* Return codes. */
#define TUNE_GPURT_OK 0
#define TUNE_GPURT_ERROR_DRIVER_NOT_FOUND              \
  -1 /* libcuda.so.1 / libamdhip64.so not found, or it \
        lacks a function the runtime needs */
#define TUNE_GPURT_ERROR_NO_DEVICE                     \
  -2 /* the driver failed to initialise, no device, or \
        no context could be made current */
#define TUNE_GPURT_ERROR_MODULE_LOAD                                                          \
  -3                                         /* the driver rejected the device code (e.g. PTX \
                                                newer than the driver, wrong GPU arch) */
#define TUNE_GPURT_ERROR_KERNEL_NOT_FOUND -4 /* the module has no kernel of that name */
#define TUNE_GPURT_ERROR_LAUNCH                                                       \
  -5                                     /* the launch failed (bad geometry, too many \
                                            resources, a sticky error of the context) */
#define TUNE_GPURT_ERROR_BAD_ARGUMENT -6 /* NULL module or name, unknown api, ABI version */

/* The device code of one generated library and the runtime's state for it. A generated library
 * defines one as a static, zero-state global:
 *   { TUNE_GPURT_ABI_VERSION, TUNE_GPURT_API_CUDA, image, image_size, NULL }
 * `state` belongs to the runtime (loaded modules per context, cached function handles). */
typedef struct tune_gpurt_module {
  int32_t abi_version;
  int32_t api;
  const void* image;   /* PTX text including its terminating NUL, or the code object bytes */
  uint64_t image_size; /* bytes at image */
  void* state;         /* NULL until the first launch; owned by the runtime */
} tune_gpurt_module;

/* Launches `kernel_name` of `module` with grid[3] blocks of block[3] threads and shared_bytes
 * of dynamic shared memory on `stream` (a CUstream or hipStream_t; NULL is the legacy default
 * stream), loading the module first when this context has not loaded it yet. `args` holds
 * num_args pointers, each to one kernel argument's value (cuLaunchKernel's kernelParams).
 * The launch is asynchronous: a 0 return says it was queued, not that the kernel finished. */
TUNE_GPURT_EXPORT int32_t tune_gpurt_launch(tune_gpurt_module* module, const char* kernel_name,
                                            const uint32_t grid[3], const uint32_t block[3],
                                            uint32_t shared_bytes, void* stream, void** args,
                                            int32_t num_args);

/* One TMA tensor map that tune_gpurt_launch_ex passes to a kernel (tune's GpuTensorMap,
 * common/gpu_arch.h): the runtime encodes it with cuTensorMapEncodeTiled (or, with im2col set,
 * cuTensorMapEncodeIm2col) over the device pointer that args[arg] points at, and passes the
 * 128-byte CUtensorMap by value after the kernel's arguments. Elements are copied as raw bytes
 * (UINT8, UINT16 or UINT32 by element_bytes), boxes reaching outside the tensor are filled with
 * zeros and the L2 promotion is 128 bytes.
 *
 * struct_bytes is sizeof(tune_gpurt_tensor_map) of the header the caller was built with: a
 * later version only appends fields, a runtime reads the descriptors of every version up to its
 * own (the fields a version lacks take their defaults: tiled, element strides 1), and it refuses
 * a size it does not know (TUNE_GPURT_ERROR_BAD_ARGUMENT naming the sizes it reads) rather than
 * ignore what a later one adds. Every map of one launch has the same struct_bytes. Every field is
 * a fixed-width integer at a naturally aligned offset, so the layout is the same for every
 * compiler (TUNE_GPURT_TENSOR_MAP_BYTES: 112 bytes in version 1, 160 in version 2). */
typedef struct tune_gpurt_tensor_map {
  uint32_t struct_bytes;  /* TUNE_GPURT_TENSOR_MAP_BYTES */
  uint32_t arg;           /* index into the launch's args: a buffer (device pointer) argument */
  uint32_t element_bytes; /* 1, 2 or 4 */
  uint32_t rank;          /* 1..5 (3..5 with im2col) */
  uint64_t dims[5];       /* elements per dimension, innermost first (1..2^32) */
  uint64_t strides[4];    /* bytes between indexes of dims 1..rank-1: multiples of 16, < 2^40 */
  uint32_t box[5];        /* elements per copy per dimension, 1..256; with im2col, box[0] is the
                             channels per pixel (1..256) and box[1] the pixels per column
                             (1..1024) */
  uint32_t swizzle_bytes; /* 0 (none) or 128 (box[0] * element_bytes is then at most 128) */
  /* Version 2. */
  uint32_t im2col;         /* 0: tiled; 1: im2col over a channels-last tensor (C, W[, H[, D]], N) */
  int32_t lower_corner[3]; /* im2col: the window corners' bounds, rank - 2 entries, W first: */
  int32_t upper_corner[3]; /* -128..127 at rank 4 (-32768..32767 at 3, -16..15 at 5) */
  uint32_t element_strides[5]; /* traversal step per dimension, 1..8 (0 reads as 1) */
} tune_gpurt_tensor_map;

#define TUNE_GPURT_TENSOR_MAP_BYTES 160
/* The size of a version 1 descriptor (tiled maps, element strides 1), which runtimes still read. */
#define TUNE_GPURT_TENSOR_MAP_V1_BYTES 112

/* tune_gpurt_launch with thread-block clusters and tensor maps (CUDA only, sm_90 and newer).
 * `cluster` (NULL or {1, 1, 1}: none) is the cluster size in blocks, each entry dividing the
 * grid's, at most 8 blocks in all; a clustered launch goes through cuLaunchKernelEx. The
 * num_maps (0..16) `maps` are encoded on every call (the arguments' pointers may differ between
 * calls) and passed after the num_args arguments, in order. A map that breaks the encoding rules
 * (tune_launch_ex.h), or its driver's refusal, is TUNE_GPURT_ERROR_BAD_ARGUMENT naming the map,
 * what is wrong and the rules (checked before the driver is opened); a driver without
 * cuTensorMapEncodeTiled or cuLaunchKernelEx (older than CUDA 12) is
 * TUNE_GPURT_ERROR_DRIVER_NOT_FOUND naming the function; a HIP module is
 * TUNE_GPURT_ERROR_BAD_ARGUMENT (clusters and tensor maps are CUDA-only). With no cluster and
 * no maps it is tune_gpurt_launch. */
TUNE_GPURT_EXPORT int32_t tune_gpurt_launch_ex(tune_gpurt_module* module, const char* kernel_name,
                                               const uint32_t grid[3], const uint32_t block[3],
                                               const uint32_t cluster[3], uint32_t shared_bytes,
                                               void* stream, void** args, int32_t num_args,
                                               const tune_gpurt_tensor_map* maps, int32_t num_maps);

/* Fills `bytes` (a multiple of 4) of device memory at `device_ptr` with zeros on `stream`
 * (asynchronously, like a launch). A kernel that accumulates into an output with atomic adds
 * (a reduction split across blocks) is preceded by this for that output. */
TUNE_GPURT_EXPORT int32_t tune_gpurt_zero(tune_gpurt_module* module, void* device_ptr,
                                          uint64_t bytes, void* stream);

/* The device memory of libtune_range.so (tune_range.h) for a GPU kernel library's range plans:
 * ctx is a tune_gpurt_module (only its abi_version and api are read; no image is needed), work is
 * queued on the stream, and each operation first makes the context current as a launch does.
 *   alloc    cuMemAllocAsync / hipMallocAsync (CUDA 11.2, ROCm 5.3 and newer)
 *   release  cuMemFreeAsync / hipFreeAsync
 *   zero     tune_gpurt_zero
 *   copy_2d  cuMemcpy2DAsync / hipMemcpy2DAsync, device to device
 *   last_error  tune_gpurt_last_error
 * A driver without the function an operation needs is TUNE_GPURT_ERROR_DRIVER_NOT_FOUND naming
 * it; the driver's refusal is TUNE_GPURT_ERROR_LAUNCH with its error. */
TUNE_GPURT_EXPORT extern const tune_range_memory tune_gpurt_device_memory;

/* What the last failing call of this thread did wrong ("" when none failed). The text stays
 * valid until this thread's next call into the runtime. */
TUNE_GPURT_EXPORT const char* tune_gpurt_last_error(void);

/* How many device modules this process has loaded so far (every library, context and device
 * counted once): a program can check that concurrent first calls loaded a module once. */
TUNE_GPURT_EXPORT uint64_t tune_gpurt_module_loads(void);

#ifdef __cplusplus
}
#endif

#endif /* TUNE_GPURT_H_ */
