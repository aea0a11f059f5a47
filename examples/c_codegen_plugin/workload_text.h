// The workload and target text of a SpaceRequest or BuildRequest, parsed by the plugin itself
// (a plugin links nothing of tune but the wire contract):
//
//   gemm:M=512,N=512,K=512[,epilogue=bias|relu|bias_relu][,dtype=f32]   fields in any order
//   llvm -mcpu=znver4 -threads=1 [-libs=...]                             -libs is ignored
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace c_codegen_plugin {

enum class Epilogue { kNone, kBias, kRelu, kBiasRelu };

bool HasBias(Epilogue e);
bool HasRelu(Epilogue e);

/// Row-major C[M][N] = A[M][K] x B[K][N] (+ bias[N]) (ReLU).
struct GemmWorkload {
  int64_t m = 0, n = 0, k = 0;
  Epilogue epilogue = Epilogue::kNone;
};

/// A parsed value, or why there is none. `refused` marks well-formed text that this example does
/// not build (another op, several threads, another target kind): a space reply answers it with
/// supported=false. Otherwise the text is malformed and the reply is an error.
template <typename T>
struct Parsed {
  std::optional<T> value;
  bool refused = false;
  std::string why;
};

Parsed<GemmWorkload> ParseWorkload(std::string_view text);

/// Accepts CPU targets ("llvm ...") with -threads=1 (the default); returns the thread count.
Parsed<int64_t> ParseTarget(std::string_view text);

}  // namespace c_codegen_plugin
