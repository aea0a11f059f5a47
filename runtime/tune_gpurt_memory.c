/* libtune_gpurt.so's device memory for libtune_range.so (tune_gpurt_device_memory, tune_gpurt.h):
 * the stream-ordered allocations, zeroing and pitched copies of a shape range's padded operands,
 * through the CUDA driver or HIP. */
#include <stdint.h>
#include <string.h>

#include "tune_gpurt_internal.h"

/* Checks `ctx` (the library's module), loads the driver and makes the context current. */
static int32_t range_prepare(void* ctx, void* stream, const char* op) {
  gpurt_error[0] = '\0';
  if (ctx == NULL) {
    return gpurt_fail(TUNE_GPURT_ERROR_BAD_ARGUMENT,
                      "tune_gpurt_device_memory.%s: the context is NULL (it must be the library's "
                      "tune_gpurt_module)",
                      op);
  }
  drv_handle key = NULL;
  return gpurt_prepare((tune_gpurt_module*)ctx, stream, &key);
}

static int32_t range_missing(const char* function, const char* since) {
  return gpurt_fail(
      TUNE_GPURT_ERROR_DRIVER_NOT_FOUND,
      "the GPU driver has no %s (%s and newer), which the padded copies of a shape range "
      "need",
      function, since);
}

static int32_t range_alloc(void* ctx, uint64_t bytes, void* stream, void** out) {
  *out = NULL;
  int32_t prepared = range_prepare(ctx, stream, "alloc");
  if (prepared != TUNE_GPURT_OK) {
    return prepared;
  }
  const tune_gpurt_module* module = (const tune_gpurt_module*)ctx;
  char buf[256];
  if (module->api == TUNE_GPURT_API_CUDA) {
    if (gpurt_cuda.cuMemAllocAsync == NULL) {
      return range_missing("cuMemAllocAsync", "CUDA 11.2");
    }
    tune_cu_deviceptr ptr = 0;
    drv_result rc = gpurt_cuda.cuMemAllocAsync(&ptr, (size_t)bytes, (tune_cu_stream)stream);
    if (rc != 0) {
      return gpurt_fail(TUNE_GPURT_ERROR_LAUNCH, "cuMemAllocAsync of %llu bytes failed: %s",
                        (unsigned long long)bytes, gpurt_cuda_error_text(rc, buf, sizeof buf));
    }
    *out = (void*)(uintptr_t)ptr;
    return TUNE_GPURT_OK;
  }
  if (gpurt_hip.hipMallocAsync == NULL) {
    return range_missing("hipMallocAsync", "ROCm 5.3");
  }
  drv_result rc = gpurt_hip.hipMallocAsync(out, (size_t)bytes, (tune_hip_stream)stream);
  if (rc != 0) {
    *out = NULL;
    return gpurt_fail(TUNE_GPURT_ERROR_LAUNCH, "hipMallocAsync of %llu bytes failed: %s",
                      (unsigned long long)bytes, gpurt_hip_error_text(rc, buf, sizeof buf));
  }
  return TUNE_GPURT_OK;
}

static int32_t range_release(void* ctx, void* ptr, void* stream) {
  int32_t prepared = range_prepare(ctx, stream, "release");
  if (prepared != TUNE_GPURT_OK) {
    return prepared;
  }
  const tune_gpurt_module* module = (const tune_gpurt_module*)ctx;
  char buf[256];
  if (module->api == TUNE_GPURT_API_CUDA) {
    if (gpurt_cuda.cuMemFreeAsync == NULL) {
      return range_missing("cuMemFreeAsync", "CUDA 11.2");
    }
    drv_result rc =
        gpurt_cuda.cuMemFreeAsync((tune_cu_deviceptr)(uintptr_t)ptr, (tune_cu_stream)stream);
    if (rc != 0) {
      return gpurt_fail(TUNE_GPURT_ERROR_LAUNCH, "cuMemFreeAsync of %p failed: %s", ptr,
                        gpurt_cuda_error_text(rc, buf, sizeof buf));
    }
    return TUNE_GPURT_OK;
  }
  if (gpurt_hip.hipFreeAsync == NULL) {
    return range_missing("hipFreeAsync", "ROCm 5.3");
  }
  drv_result rc = gpurt_hip.hipFreeAsync(ptr, (tune_hip_stream)stream);
  if (rc != 0) {
    return gpurt_fail(TUNE_GPURT_ERROR_LAUNCH, "hipFreeAsync of %p failed: %s", ptr,
                      gpurt_hip_error_text(rc, buf, sizeof buf));
  }
  return TUNE_GPURT_OK;
}

static int32_t range_zero(void* ctx, void* ptr, uint64_t bytes, void* stream) {
  return tune_gpurt_zero((tune_gpurt_module*)ctx, ptr, bytes, stream);
}

/* hipMemcpyKind hipMemcpyDeviceToDevice (hip_runtime_api.h). */
#define HIP_MEMCPY_DEVICE_TO_DEVICE 3

static int32_t range_copy_2d(void* ctx, void* dst, uint64_t dst_pitch, const void* src,
                             uint64_t src_pitch, uint64_t width, uint64_t height, void* stream) {
  int32_t prepared = range_prepare(ctx, stream, "copy_2d");
  if (prepared != TUNE_GPURT_OK) {
    return prepared;
  }
  const tune_gpurt_module* module = (const tune_gpurt_module*)ctx;
  char buf[256];
  drv_result rc;
  if (module->api == TUNE_GPURT_API_CUDA) {
    if (gpurt_cuda.cuMemcpy2DAsync == NULL) {
      return range_missing("cuMemcpy2DAsync_v2", "CUDA 3.2");
    }
    tune_cu_memcpy_2d copy;
    memset(&copy, 0, sizeof copy);
    copy.src_memory_type = TUNE_CU_MEMORYTYPE_DEVICE;
    copy.src_device = (tune_cu_deviceptr)(uintptr_t)src;
    copy.src_pitch = (size_t)src_pitch;
    copy.dst_memory_type = TUNE_CU_MEMORYTYPE_DEVICE;
    copy.dst_device = (tune_cu_deviceptr)(uintptr_t)dst;
    copy.dst_pitch = (size_t)dst_pitch;
    copy.width_bytes = (size_t)width;
    copy.height = (size_t)height;
    rc = gpurt_cuda.cuMemcpy2DAsync(&copy, (tune_cu_stream)stream);
  } else {
    if (gpurt_hip.hipMemcpy2DAsync == NULL) {
      return range_missing("hipMemcpy2DAsync", "ROCm 5");
    }
    rc = gpurt_hip.hipMemcpy2DAsync(dst, (size_t)dst_pitch, src, (size_t)src_pitch, (size_t)width,
                                    (size_t)height, HIP_MEMCPY_DEVICE_TO_DEVICE,
                                    (tune_hip_stream)stream);
  }
  if (rc != 0) {
    const int cuda = module->api == TUNE_GPURT_API_CUDA;
    return gpurt_fail(
        TUNE_GPURT_ERROR_LAUNCH,
        "%s of %llu rows of %llu bytes from %p (pitch %llu) to %p (pitch %llu) failed: %s",
        cuda ? "cuMemcpy2DAsync" : "hipMemcpy2DAsync", (unsigned long long)height,
        (unsigned long long)width, src, (unsigned long long)src_pitch, dst,
        (unsigned long long)dst_pitch,
        cuda ? gpurt_cuda_error_text(rc, buf, sizeof buf)
             : gpurt_hip_error_text(rc, buf, sizeof buf));
  }
  return TUNE_GPURT_OK;
}

const tune_range_memory tune_gpurt_device_memory = {range_alloc, range_release, range_zero,
                                                    range_copy_2d, tune_gpurt_last_error};
