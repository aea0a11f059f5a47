#include "model_import/onnx_graph.h"

#include <exception>
#include <set>

#include "common/strings.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace tune {

OnnxGraph::OnnxGraph(const onnx::GraphProto& graph) {
  auto add_value = [&](const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type()) {
      return;
    }
    const onnx::TypeProto::Tensor& t = v.type().tensor_type();
    Tensor& tensor = tensors_[v.name()];
    tensor.elem_type = t.elem_type();
    tensor.has_shape = t.has_shape();
    tensor.dims.assign(t.shape().dim().begin(), t.shape().dim().end());
  };
  for (const onnx::ValueInfoProto& v : graph.input()) {
    add_value(v);
  }
  for (const onnx::ValueInfoProto& v : graph.value_info()) {
    add_value(v);
  }
  for (const onnx::ValueInfoProto& v : graph.output()) {
    add_value(v);
    graph_outputs_.insert(v.name());
  }
  // An initializer's own dims are its shape, whatever an input of the same name declares.
  for (const onnx::TensorProto& init : graph.initializer()) {
    Tensor& tensor = tensors_[init.name()];
    tensor.elem_type = init.data_type();
    tensor.has_shape = true;
    tensor.dims.clear();
    for (int64_t d : init.dims()) {
      tensor.dims.emplace_back().set_dim_value(d);
    }
  }
  for (const onnx::NodeProto& node : graph.node()) {
    std::set<std::string> read;  // a node reading a value twice consumes it once
    for (const std::string& in : node.input()) {
      if (!in.empty() && read.insert(in).second) {
        consumers_[in].push_back(&node);
      }
    }
  }
}

const OnnxGraph::Tensor* OnnxGraph::Find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

absl::StatusOr<std::vector<int64_t>> OnnxGraph::Dims(const std::string& name,
                                                     std::string_view role) const {
  const Tensor* t = Find(name);
  if (t == nullptr || !t->has_shape) {
    return absl::UnimplementedError(
        StrCat("no shape inferred for ", role, " '", name, "' (unknown sizes)"));
  }
  std::vector<int64_t> dims;
  for (const onnx::TensorShapeProto::Dimension& d : t->dims) {
    if (d.has_dim_value() && d.dim_value() >= 1) {
      dims.push_back(d.dim_value());
    } else if (d.has_dim_param() && !d.dim_param().empty()) {
      return absl::UnimplementedError(StrCat("symbolic size '", d.dim_param(), "' of ", role, " '",
                                             name, "' (give it a value: --dim ", d.dim_param(),
                                             "=N)"));
    } else {
      return absl::UnimplementedError(
          StrCat("a size of ", role, " '", name, "' is unknown after shape inference"));
    }
  }
  return dims;
}

std::optional<std::vector<int64_t>> OnnxGraph::KnownDims(const std::string& name) const {
  absl::StatusOr<std::vector<int64_t>> dims = Dims(name, "");
  if (!dims.ok()) {
    return std::nullopt;
  }
  return *dims;
}

absl::StatusOr<std::string> OnnxGraph::Dtype(const std::string& name, std::string_view role) const {
  const Tensor* t = Find(name);
  int32_t type = t == nullptr ? 0 : t->elem_type;
  switch (type) {
    case onnx::TensorProto::FLOAT:
      return std::string("f32");
    case onnx::TensorProto::FLOAT16:
      return std::string("f16");
    case onnx::TensorProto::BFLOAT16:
      return std::string("bf16");
    default:
      break;
  }
  std::string onnx_name =
      onnx::TensorProto::DataType_IsValid(type)
          ? onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(type))
          : StrCat("type ", type);
  return absl::UnimplementedError(StrCat(role, " '", name, "' holds ", onnx_name,
                                         "; tune maps FLOAT, FLOAT16 and BFLOAT16 here"));
}

const onnx::NodeProto* OnnxGraph::OnlyConsumer(const std::string& value) const {
  auto it = consumers_.find(value);
  if (it == consumers_.end() || it->second.size() != 1 || graph_outputs_.contains(value)) {
    return nullptr;
  }
  return it->second.front();
}

namespace {

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& node, std::string_view name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) {
      return &a;
    }
  }
  return nullptr;
}

}  // namespace

int64_t AttrInt(const onnx::NodeProto& node, std::string_view name, int64_t fallback) {
  const onnx::AttributeProto* a = FindAttr(node, name);
  return a != nullptr && a->has_i() ? a->i() : fallback;
}

float AttrFloat(const onnx::NodeProto& node, std::string_view name, float fallback) {
  const onnx::AttributeProto* a = FindAttr(node, name);
  return a != nullptr && a->has_f() ? a->f() : fallback;
}

std::string AttrString(const onnx::NodeProto& node, std::string_view name,
                       std::string_view fallback) {
  const onnx::AttributeProto* a = FindAttr(node, name);
  return a != nullptr && a->has_s() ? a->s() : std::string(fallback);
}

std::vector<int64_t> AttrInts(const onnx::NodeProto& node, std::string_view name,
                              std::vector<int64_t> fallback) {
  const onnx::AttributeProto* a = FindAttr(node, name);
  if (a == nullptr || a->ints_size() == 0) {
    return fallback;
  }
  return {a->ints().begin(), a->ints().end()};
}

absl::Status SetSymbolicDims(onnx::ModelProto& model, const std::map<std::string, int64_t>& dims,
                             std::string_view source) {
  std::set<std::string> seen, used;
  for (onnx::ValueInfoProto& input : *model.mutable_graph()->mutable_input()) {
    if (!input.type().has_tensor_type()) {
      continue;
    }
    for (auto& d : *input.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (!d.has_dim_param() || d.dim_param().empty()) {
        continue;
      }
      std::string param = d.dim_param();
      seen.insert(param);
      if (auto it = dims.find(param); it != dims.end()) {
        d.set_dim_value(it->second);  // clears dim_param (a oneof)
        used.insert(param);
      }
    }
  }
  for (const auto& [name, value] : dims) {
    if (!used.contains(name)) {
      return absl::InvalidArgumentError(
          StrCat(source, ": --dim ", name, "=", value,
                 ": no input of the model has a symbolic dimension '", name,
                 "'; its symbolic dimensions: ",
                 seen.empty() ? std::string("none")
                              : Join(std::vector<std::string>(seen.begin(), seen.end()), ", ")));
    }
  }
  return absl::OkStatus();
}

absl::Status InferOnnxShapes(onnx::ModelProto& model, std::string_view source) {
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false, /*strict_mode_val=*/0,
                                        /*data_prop_val=*/true);
    onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(StrCat(source, ": ONNX shape inference failed: ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace tune
