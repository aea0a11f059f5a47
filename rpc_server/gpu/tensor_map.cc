#include "rpc_server/gpu/tensor_map.h"

#include <algorithm>

namespace tune::gpu {

tune_gpurt_tensor_map ToRuntimeTensorMap(const GpuTensorMap& map) {
  tune_gpurt_tensor_map out{};
  out.struct_bytes = sizeof out;
  out.arg = map.arg;
  out.element_bytes = map.element_bytes;
  out.rank = map.rank;
  std::copy(map.dims.begin(), map.dims.end(), out.dims);
  std::copy(map.strides.begin(), map.strides.end(), out.strides);
  std::copy(map.box.begin(), map.box.end(), out.box);
  out.swizzle_bytes = map.swizzle_bytes;
  out.im2col = map.im2col ? 1 : 0;
  std::copy(map.lower_corner.begin(), map.lower_corner.end(), out.lower_corner);
  std::copy(map.upper_corner.begin(), map.upper_corner.end(), out.upper_corner);
  std::copy(map.element_strides.begin(), map.element_strides.end(), out.element_strides);
  return out;
}

absl::StatusOr<tune_tensor_map_encoding> PrepareTensorMap(const GpuTensorMap& map,
                                                          uint32_t num_args, uint64_t address) {
  const tune_gpurt_tensor_map descriptor = ToRuntimeTensorMap(map);
  tune_tensor_map_encoding encoding;
  char error[2048] = "";
  if (!tune_tensor_map_prepare(&descriptor, num_args, address, &encoding, error, sizeof error)) {
    return absl::InvalidArgumentError(error);
  }
  return encoding;
}

}  // namespace tune::gpu
