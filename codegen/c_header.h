// The C header that documents a generated kernel library: one prototype per kernel with its
// workload, shapes, layouts, the template and config that produced it, and the runtime
// libraries the library needs.
#pragma once

#include <string>
#include <vector>

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
};

struct HeaderSpec {
  std::string guard_name;    // file name the include guard derives from
  std::string library_name;  // e.g. libkernels.so
  Target target;
  std::vector<std::string> needed_libs;    // runtime libraries besides libc, e.g. libgomp.so.1
  std::vector<std::string> external_libs;  // called, not linked: the caller loads them first
  std::vector<HeaderKernel> kernels;
};

/// The C prototype of a kernel, e.g.
/// `int tune_gemm_M8_N8_K8(const float* A, const float* B, float* C)` (no semicolon).
std::string CPrototype(const std::string& func_name, const Workload& workload);

/// The whole header text (C89-compatible, with an extern "C" block for C++).
std::string RenderCHeader(const HeaderSpec& spec);

}  // namespace tune
