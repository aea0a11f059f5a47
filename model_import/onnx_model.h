// ONNX models as users have them, read into what tune tunes: the Conv, Gemm and MatMul nodes of
// a model's main graph as a weighted workloads list (common/workload_list.h), with the shapes
// ONNX's own shape inference gives (data propagation on, so shapes computed by Shape/Concat/
// Reshape chains resolve). Each node adds 1 to its workload's weight, so a layer repeated 12
// times weighs 12.
//
//   Conv    NCHW input [N][C][H][W], weight [K][C][R][S]  -> conv2d (layout NCHW), dtype of the
//           input (f32, f16, bf16); equal strides and dilations in both dimensions, the same
//           padding on all four sides (auto_pad SAME_* when that is symmetric), group=1.
//   Gemm    A [M][K] (transA=0), B [K][N] (transB=0: layout NN) or [N][K] (transB=1: layout
//           NT); alpha=1; C, when present, a bias of N elements with beta=1.
//   MatMul  A of rank >= 2 (its leading dimensions flattened into M), B of rank 2: a GEMM NN.
//
// Epilogues are fused where the graph says so unambiguously: a Conv's or Gemm's bias input is
// epilogue=bias; a MatMul whose only consumer is an Add of an N-element tensor takes it as its
// bias; and a Relu that is the only consumer of the result makes it bias_relu (or relu).
//
// Nodes tune cannot run are listed with the reason (OnnxSkippedNode), never guessed: grouped
// and depthwise Conv, batched MatMul, transposed A, a C that is not a bias, non-square strides,
// asymmetric padding, element types tune has no dtype for, symbolic or unknown sizes, and the
// quantized and transposed convolution and matrix operators (ConvInteger, MatMulInteger,
// QLinearConv, QLinearMatMul, ConvTranspose). Nodes inside subgraphs (If, Loop, Scan bodies)
// are not read.
//
// Symbolic sizes (a graph input's dim_param such as "batch") may be given values
// (OnnxImportOptions::dims) before shapes are inferred, as `--dim batch=1` on the command lines.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/workload_list.h"

namespace tune {

struct OnnxImportOptions {
  /// Values of symbolic dimensions of the graph's inputs, by their dim_param name. A name the
  /// model's inputs do not have is an error naming the ones they have.
  std::map<std::string, int64_t> dims;
};

/// A Conv, Gemm or MatMul node (or a quantized or transposed relative) that tune cannot run.
struct OnnxSkippedNode {
  std::string node;     // the node's name, or "<op_type> #<index in the graph>" when unnamed
  std::string op_type;  // "Conv", "MatMul", ...
  std::string reason;   // e.g. "grouped convolution (group=32)"
};

struct OnnxWorkloads {
  std::string graph_name;
  int64_t opset = 0;                        // the default domain's opset version
  std::vector<WeightedWorkload> workloads;  // in the order of their first node
  std::vector<OnnxSkippedNode> skipped;     // in graph order
};

/// Reads an ONNX model file (a serialized ModelProto) and maps its nodes. Errors name the path:
/// NotFound (no such file), InvalidArgument (not an ONNX model, a bad --dim, shape inference
/// failing, no node tune can run — with the skipped nodes' reasons —, or more than
/// kMaxModelWorkloads distinct workloads).
absl::StatusOr<OnnxWorkloads> ReadOnnxModel(const std::string& path,
                                            const OnnxImportOptions& options = {});

/// The same for a model's bytes; `source` names them in errors.
absl::StatusOr<OnnxWorkloads> ParseOnnxModel(const std::string& bytes, std::string_view source,
                                             const OnnxImportOptions& options = {});

/// The workloads file of a model (FormatWorkloadList) headed by comments that name the graph and
/// list every skipped node with its reason: what `tune-client onnx MODEL` prints.
std::string FormatOnnxWorkloads(const OnnxWorkloads& model, std::string_view source);

/// Parses "NAME=VALUE" (a symbolic dimension's value, >= 1) into `dims`; InvalidArgument naming
/// the text and the form otherwise.
absl::Status AddOnnxDim(std::string_view text, std::map<std::string, int64_t>& dims);
/// The options of the command lines' `--dim NAME=VALUE` flags (AddOnnxDim each).
absl::StatusOr<OnnxImportOptions> OnnxOptionsFromDims(const std::vector<std::string>& dims);

/// "NODE (OP_TYPE): REASON", as every listing of skipped nodes shows one.
std::string Describe(const OnnxSkippedNode& node);

}  // namespace tune
