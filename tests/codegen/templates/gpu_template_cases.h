// What the GPU template tests share: the workloads they sweep (square, skinny and odd GEMMs,
// ResNet-50 conv layers) and the lookup of a template as a target lists it.
#pragma once

#include <string_view>

#include "codegen/templates/catalog.h"
#include "common/target.h"
#include "common/workload.h"

namespace tune::testing {

inline const char* const kGemms[] = {
    "gemm:M=256,N=256,K=256",
    "gemm:M=1024,N=1024,K=1024",
    "gemm:M=1,N=1000,K=333",
    "gemm:M=7,N=4096,K=512,epilogue=bias",
    "gemm:M=100,N=1000,K=333,epilogue=bias_relu",
    "gemm:M=33,N=65,K=17,epilogue=relu",
    "gemm:M=1,N=1,K=1",
};

inline const char* const kConvs[] = {
    "conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1",
    "conv2d:N=8,C=64,H=56,W=56,K=256,R=1,S=1,stride=1,pad=0,epilogue=bias_relu",
    "conv2d:N=1,C=512,H=7,W=7,K=512,R=3,S=3,stride=1,pad=1,epilogue=relu",
    "conv2d:N=8,C=3,H=224,W=224,K=64,R=7,S=7,stride=2,pad=3,epilogue=bias",
    "conv2d:N=1,C=8,H=9,W=9,K=16,R=3,S=3,stride=2,pad=1",
};

/// The template called `name` among those the built-in catalog offers for (w, target).
inline const KernelTemplate* GpuTemplate(std::string_view name, const Target& target,
                                         const Workload& w) {
  for (const KernelTemplate* t : Catalog::BuiltIn().TemplatesFor(w, target)) {
    if (t->name == name) {
      return t;
    }
  }
  return nullptr;
}

}  // namespace tune::testing
