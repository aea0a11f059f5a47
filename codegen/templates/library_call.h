// Pieces shared by the library templates (gemm/conv2d on OpenBLAS and oneDNN, and on the GPU
// vendor libraries): the kernel's parameters, a call of a runtime shim whose failure the kernel
// returns, and the generated epilogue passes that run around a library call.
//
// A library template's kernel is ordinary IR: it may prepare data (im2col, a broadcast bias),
// calls the shim of runtime/tune_runtime.h through a CallExtern, and may finish with a bias/ReLU
// pass. The LoweredFunc names the shim in external_libs, so the artifact says what a worker must
// have loaded and tune-compile links it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/ir/ir.h"
#include "common/runtime_libs.h"
#include "common/workload.h"
#include "search/config_space.h"

namespace tune {

/// The values of a library template's `epilogue` knob (present when the workload has one).
inline constexpr int64_t kEpilogueSeparate = 0;  // the library call, then a generated pass
inline constexpr int64_t kEpilogueLibrary = 1;   // the library's own fused post-ops

/// Adds the `epilogue` knob to `space` when the workload has an epilogue.
void AddEpilogueKnob(ConfigSpace& space, const Workload& workload, std::string_view library_ops);

/// The `epilogue` knob of `config`, kEpilogueSeparate when the workload has none.
int64_t EpilogueChoice(const Config& config);

/// The config a library user would write: each knob's first value, the library's own post-ops
/// for the epilogue.
Config LibraryDefaultConfig(const ConfigSpace& space);

/// The TUNE_POST_* bits a oneDNN call fuses: the workload's bias and ReLU when the config chose
/// the library's post-ops, else none.
int64_t LibraryPostOps(const Workload& workload, const Config& config);

/// For OpenBLAS calls: true when the config chose to add the bias through sgemm's beta = 1 over
/// a broadcast copy (epilogue=library and the workload has a bias).
bool BiasThroughBeta(const Workload& workload, const Config& config);

/// What a generated pass still applies after an OpenBLAS call: the whole epilogue, or only its
/// ReLU when the bias went through beta (kNone when nothing is left).
Epilogue EpilogueAfterSgemm(const Workload& workload, const Config& config);

/// The TUNE_GPU_TYPE_* value (tune_gpu_runtime.h) of an element type, for the typed GPU shims:
/// TUNE_GPU_TYPE_TF32 for f32 storage of `dtype` tf32.
int64_t GpuShimType(ElementType type, Dtype dtype);
/// The TUNE_GPU_EPILOGUE_* value (tune_gpu_runtime.h) of the workload's epilogue.
int64_t GpuEpilogueCode(const Workload& workload);

/// TUNE_GPU_EPILOGUE_LIBRARY when the config chose the library's fused epilogue, else
/// TUNE_GPU_EPILOGUE_SEPARATE.
int64_t GpuEpilogueMode(const Config& config);

/// The table entry of a library tune has a shim for (a bug when there is none).
const RuntimeLibrary& RuntimeLibraryNamed(std::string_view name);

/// One global float32 buffer per kernel argument, named as Workload::Arguments() names them.
std::vector<ir::Buffer> KernelParams(const Workload& workload);

ir::Expr I64(int64_t v);
/// The TUNE_DNNL_* code (runtime/tune_runtime.h) of an element type oneDNN's typed shims take:
/// bf16, s8, u8, s32; f32 for every other.
int64_t DnnlTypeCode(ElementType type);
ir::Expr I32(int64_t v);
/// &buffer[offset], the float32* of CallExtern arguments.
ir::Expr Ptr(const ir::Buffer& buffer, ir::Expr offset = ir::Expr(int64_t{0}));

/// `symbol(args...)`, an int32 status that the kernel returns when it is not 0.
ir::Stmt CallShim(std::string_view symbol, std::vector<ir::Expr> args);

/// The output seen as [outer][channels][inner] (GEMM: M, N, 1; conv2d: N, K, P*Q):
/// out = out (+ bias[channel]) (max 0), as `epilogue` says; no statement for kNone.
ir::Stmt EpiloguePass(const ir::Buffer& out, const ir::Buffer& bias, Epilogue epilogue,
                      int64_t outer, int64_t channels, int64_t inner);

/// out[o][c][i] = bias[c]: the bias a library adds to through beta = 1.
ir::Stmt BroadcastBias(const ir::Buffer& out, const ir::Buffer& bias, int64_t outer,
                       int64_t channels, int64_t inner);

/// A LoweredFunc around `body` that needs `library`'s shim.
ir::LoweredFunc LibraryFunc(std::string_view name, std::vector<ir::Buffer> params, ir::Stmt body,
                            const RuntimeLibrary& library);

}  // namespace tune
