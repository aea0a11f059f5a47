// The typed part of reference_ptx.h's module (tune_fill_typed, tune_load_typed,
// tune_ref_gemm_typed): PTX text that follows the f32 kernels, whose tune_hash it calls.
#pragma once

#include <string_view>

namespace tune::gpu::internal {

std::string_view TypedReferencePtx();

}  // namespace tune::gpu::internal
