// The C header that documents a generated kernel library: one prototype per kernel with its
// workload, shapes, layouts, the template and config that produced it, and the runtime
// libraries the library needs.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/gpu_arch.h"
#include "common/shape_range.h"
#include "common/target.h"
#include "common/workload.h"

namespace tune {

struct HeaderKernel {
  std::string func_name;
  Workload workload;
  std::string template_name;
  int template_version = 0;
  std::string config;  // canonical config text
  std::string origin;  // where the config came from, e.g. "the tuning log" or "default config
                       // (no record in the tuning log)"
  std::optional<GpuLaunch> launch = {};  // GPU libraries: a GPU kernel's launch geometry (unset
                                         // for a host kernel calling a vendor library)
};

/// A shape range's entry point (codegen/llvm/range_entry.h) and the kernels it dispatches to.
struct HeaderRange {
  std::string func_name;
  ShapeRange range;
  std::vector<HeaderKernel> kernels;  // by ascending size
  std::vector<int64_t> measured;      // the sizes the tuning log measured
};

struct HeaderSpec {
  std::string guard_name;    // file name the include guard derives from
  std::string library_name;  // e.g. libkernels.so
  Target target;
  std::vector<std::string> needed_libs;    // runtime libraries besides libc, e.g. libgomp.so.1
  std::vector<std::string> external_libs;  // called, not linked: the caller loads them first
  std::vector<HeaderKernel> kernels;
  std::vector<HeaderRange> ranges;
};

/// The C prototype of a kernel, e.g.
/// `int tune_gemm_M8_N8_K8(const float* A, const float* B, float* C)` (no semicolon); with
/// `stream`, a last parameter `void* stream` (GPU libraries).
std::string CPrototype(const std::string& func_name, const Workload& workload, bool stream = false);

/// The C prototype of a range's entry point: the size first, e.g.
/// `int gemm_tokens(int64_t M, const float* A, const float* B, float* C)`.
std::string CRangePrototype(const std::string& func_name, const ShapeRange& range,
                            bool stream = false);

/// The whole header text (C89-compatible, with an extern "C" block for C++). For a cuda or rocm
/// target it documents the GPU host ABI: device pointers, the stream, the return codes and
/// tune_gpurt_last_error (declared in the header), module loading and thread safety.
std::string RenderCHeader(const HeaderSpec& spec);

}  // namespace tune
