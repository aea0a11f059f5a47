// What the ONNX mapping (onnx_model.cc) asks of a graph: tensors' element types and sizes after
// shape inference, a value's consumers, node attributes with their ONNX defaults, and the two
// steps before mapping (symbolic sizes set, shapes inferred).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace tune {

class OnnxGraph {
 public:
  /// Indexes `graph`, which must outlive this object.
  explicit OnnxGraph(const onnx::GraphProto& graph);

  /// The sizes of value `name`; an error whose message says why they are not known ("symbolic
  /// size 'batch' of input X ...", "no shape inferred for ..."). `role` names the value in it.
  absl::StatusOr<std::vector<int64_t>> Dims(const std::string& name, std::string_view role) const;
  /// The same, without the reason.
  std::optional<std::vector<int64_t>> KnownDims(const std::string& name) const;
  /// tune's dtype name of value `name`'s element type ("f32", "f16", "bf16"); an error naming the
  /// ONNX type otherwise.
  absl::StatusOr<std::string> Dtype(const std::string& name, std::string_view role) const;
  /// The one node that reads `value`, when exactly one does and the value is no graph output.
  const onnx::NodeProto* OnlyConsumer(const std::string& value) const;

 private:
  struct Tensor {
    int32_t elem_type = 0;
    bool has_shape = false;
    std::vector<onnx::TensorShapeProto::Dimension> dims;
  };
  const Tensor* Find(const std::string& name) const;

  std::unordered_map<std::string, Tensor> tensors_;
  std::unordered_map<std::string, std::vector<const onnx::NodeProto*>> consumers_;
  std::unordered_set<std::string> graph_outputs_;
};

/// A node's attribute, or `fallback` when the node does not set it.
int64_t AttrInt(const onnx::NodeProto& node, std::string_view name, int64_t fallback);
float AttrFloat(const onnx::NodeProto& node, std::string_view name, float fallback);
std::string AttrString(const onnx::NodeProto& node, std::string_view name,
                       std::string_view fallback);
std::vector<int64_t> AttrInts(const onnx::NodeProto& node, std::string_view name,
                              std::vector<int64_t> fallback);

/// Gives the graph inputs' symbolic dimensions the values of `dims`; InvalidArgument naming
/// `source`, the unknown name and the names the inputs have when `dims` names one they lack.
absl::Status SetSymbolicDims(onnx::ModelProto& model, const std::map<std::string, int64_t>& dims,
                             std::string_view source);

/// ONNX's shape inference over the main graph, data propagation on; InvalidArgument naming
/// `source` when it throws.
absl::Status InferOnnxShapes(onnx::ModelProto& model, std::string_view source);

}  // namespace tune
