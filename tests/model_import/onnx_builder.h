// ONNX models built node by node in tests (onnx.ModelProto through Debian's libonnx-dev), so that
// the ONNX readers are checked on models whose every node the test chose.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "onnx/onnx_pb.h"

namespace tune::testing {

using Dim = std::variant<int64_t, std::string>;

// An ONNX model in the making: graph inputs (with fixed or symbolic sizes), initializers,
// nodes and outputs; intermediate values get no shapes, so that shape inference must find them.
class ModelBuilder {
 public:
  ModelBuilder() {
    model_.set_ir_version(8);
    auto* opset = model_.add_opset_import();
    opset->set_domain("");
    opset->set_version(13);
    model_.mutable_graph()->set_name("test_graph");
  }
  ModelBuilder& Input(const std::string& name, std::vector<Dim> dims,
                      int32_t type = onnx::TensorProto::FLOAT) {
    SetType(model_.mutable_graph()->add_input(), name, dims, type);
    return *this;
  }
  ModelBuilder& Output(const std::string& name) {
    onnx::ValueInfoProto* v = model_.mutable_graph()->add_output();
    v->set_name(name);
    return *this;
  }
  ModelBuilder& Weight(const std::string& name, std::vector<int64_t> dims,
                       int32_t type = onnx::TensorProto::FLOAT) {
    onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(type);
    int64_t count = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      count *= d;
    }
    t->set_raw_data(std::string(count * (type == onnx::TensorProto::FLOAT ? 4 : 2), '\0'));
    return *this;
  }
  onnx::NodeProto& Node(const std::string& op, std::vector<std::string> inputs,
                        std::vector<std::string> outputs, const std::string& name = "") {
    onnx::NodeProto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const std::string& i : inputs) {
      n->add_input(i);
    }
    for (const std::string& o : outputs) {
      n->add_output(o);
    }
    return *n;
  }
  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  static void SetType(onnx::ValueInfoProto* v, const std::string& name,
                      const std::vector<Dim>& dims, int32_t type) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    for (const Dim& d : dims) {
      auto* dim = t->mutable_shape()->add_dim();
      if (const int64_t* value = std::get_if<int64_t>(&d)) {
        dim->set_dim_value(*value);
      } else {
        dim->set_dim_param(std::get<std::string>(d));
      }
    }
  }
  onnx::ModelProto model_;
};

inline void SetInts(onnx::NodeProto& node, const std::string& name, std::vector<int64_t> values) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) {
    a->add_ints(v);
  }
}
inline void SetInt(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}
inline void SetString(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

}  // namespace tune::testing
