// TMA tensor maps in the measurement child: GpuTensorMap (common/gpu_arch.h) as the descriptor
// that runtime/tune_launch_ex.h checks and turns into cuTensorMapEncodeTiled's (or
// cuTensorMapEncodeIm2col's) arguments, the
// same checks libtune_gpurt.so makes for generated libraries, so both refuse a map alike.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "common/gpu_arch.h"
#include "runtime/tune_launch_ex.h"

namespace tune::gpu {

/// libtune_gpurt.so's descriptor of `map` (runtime/tune_gpurt.h).
tune_gpurt_tensor_map ToRuntimeTensorMap(const GpuTensorMap& map);

/// The encoder's arguments for `map` over the buffer at device address `address`,
/// for a kernel of `num_args` arguments. InvalidArgument naming the map (argument, dims,
/// strides, box), what is wrong and the rules (TUNE_TENSOR_MAP_RULES).
absl::StatusOr<tune_tensor_map_encoding> PrepareTensorMap(const GpuTensorMap& map,
                                                          uint32_t num_args, uint64_t address);

}  // namespace tune::gpu
