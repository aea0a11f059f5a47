// The C this plugin generates: one GEMM with its epilogue, every size a constant, blocked by a
// GemmConfig. The exported function keeps tune's canonical C ABI:
//
//   int32_t NAME(float* A, float* B, float* C)               epilogue none, relu
//   int32_t NAME(float* A, float* B, float* bias, float* C)  epilogue bias, bias_relu
//
// and returns 0. Generated C is C11 and calls nothing (not even libc).
#pragma once

#include <string>
#include <string_view>

#include "gemm_space.h"
#include "workload_text.h"

namespace c_codegen_plugin {

/// Whether `name` can be the exported C symbol: an identifier that is not a C keyword.
bool IsCIdentifier(std::string_view name);

std::string GemmCSource(const GemmWorkload& gemm, const GemmConfig& config,
                        std::string_view func_name);

}  // namespace c_codegen_plugin
