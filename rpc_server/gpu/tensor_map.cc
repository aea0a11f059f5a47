#include "rpc_server/gpu/tensor_map.h"

namespace tune::gpu {

tune_gpurt_tensor_map ToRuntimeTensorMap(const GpuTensorMap& map) {
  return ToTensorMapDescriptor<tune_gpurt_tensor_map>(map);
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
