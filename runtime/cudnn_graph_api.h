// The part of cuDNN's graph (backend) API that libtune_cudnn.so's typed convolution uses
// (cudnn_graph_shim.cc): the constants of cudnn_graph.h (cuDNN 9), declared here so that no cuDNN
// header is needed, and a builder of backend descriptors that keeps the first failure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/cudnn_shim_internal.h"
#include "runtime/gpu_shim_util.h"

namespace tune_cudnn::graph {

// The graph API's constants (cudnn_graph.h of cuDNN 9).
// cudnnDataType_t
constexpr int CUDNN_DATA_FLOAT = 0;
constexpr int CUDNN_DATA_HALF = 2;
constexpr int CUDNN_DATA_INT8 = 3;
constexpr int CUDNN_DATA_INT32 = 4;
constexpr int CUDNN_DATA_BFLOAT16 = 9;
constexpr int CUDNN_DATA_FP8_E4M3 = 12;
constexpr int CUDNN_DATA_FP8_E5M2 = 13;
// cudnnBackendDescriptorType_t
constexpr int CUDNN_BACKEND_POINTWISE_DESCRIPTOR = 0;
constexpr int CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR = 1;
constexpr int CUDNN_BACKEND_ENGINE_DESCRIPTOR = 2;
constexpr int CUDNN_BACKEND_ENGINECFG_DESCRIPTOR = 3;
constexpr int CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR = 4;
constexpr int CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR = 5;
constexpr int CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR = 7;
constexpr int CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR = 10;
constexpr int CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR = 13;
constexpr int CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR = 15;
constexpr int CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR = 16;
constexpr int CUDNN_BACKEND_TENSOR_DESCRIPTOR = 17;
// cudnnBackendAttributeType_t
constexpr int CUDNN_TYPE_HANDLE = 0;
constexpr int CUDNN_TYPE_DATA_TYPE = 1;
constexpr int CUDNN_TYPE_BOOLEAN = 2;
constexpr int CUDNN_TYPE_INT64 = 3;
constexpr int CUDNN_TYPE_FLOAT = 4;
constexpr int CUDNN_TYPE_VOID_PTR = 6;
constexpr int CUDNN_TYPE_CONVOLUTION_MODE = 7;
constexpr int CUDNN_TYPE_HEUR_MODE = 8;
constexpr int CUDNN_TYPE_KNOB_TYPE = 9;
constexpr int CUDNN_TYPE_NUMERICAL_NOTE = 11;
constexpr int CUDNN_TYPE_POINTWISE_MODE = 14;
constexpr int CUDNN_TYPE_BACKEND_DESCRIPTOR = 15;
// cudnnBackendAttributeName_t
constexpr int CUDNN_ATTR_POINTWISE_MODE = 0;
constexpr int CUDNN_ATTR_POINTWISE_MATH_PREC = 1;
constexpr int CUDNN_ATTR_CONVOLUTION_COMP_TYPE = 100;
constexpr int CUDNN_ATTR_CONVOLUTION_CONV_MODE = 101;
constexpr int CUDNN_ATTR_CONVOLUTION_DILATIONS = 102;
constexpr int CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES = 103;
constexpr int CUDNN_ATTR_CONVOLUTION_POST_PADDINGS = 104;
constexpr int CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS = 105;
constexpr int CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS = 106;
constexpr int CUDNN_ATTR_ENGINEHEUR_MODE = 200;
constexpr int CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH = 201;
constexpr int CUDNN_ATTR_ENGINEHEUR_RESULTS = 202;
constexpr int CUDNN_ATTR_ENGINECFG_ENGINE = 300;
constexpr int CUDNN_ATTR_ENGINECFG_KNOB_CHOICES = 302;
constexpr int CUDNN_ATTR_EXECUTION_PLAN_HANDLE = 400;  // deprecated in later 9.x, still taken
constexpr int CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG = 401;
constexpr int CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE = 402;
constexpr int CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE = 600;
constexpr int CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE = 601;
constexpr int CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA = 700;
constexpr int CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA = 701;
constexpr int CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC = 702;
constexpr int CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W = 703;
constexpr int CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X = 704;
constexpr int CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y = 705;
constexpr int CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR = 750;
constexpr int CUDNN_ATTR_OPERATION_POINTWISE_XDESC = 751;
constexpr int CUDNN_ATTR_OPERATION_POINTWISE_BDESC = 752;
constexpr int CUDNN_ATTR_OPERATION_POINTWISE_YDESC = 753;
constexpr int CUDNN_ATTR_OPERATIONGRAPH_HANDLE = 800;  // deprecated in later 9.x, still taken
constexpr int CUDNN_ATTR_OPERATIONGRAPH_OPS = 801;
constexpr int CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT = 900;
constexpr int CUDNN_ATTR_TENSOR_DATA_TYPE = 901;
constexpr int CUDNN_ATTR_TENSOR_DIMENSIONS = 902;
constexpr int CUDNN_ATTR_TENSOR_STRIDES = 903;
constexpr int CUDNN_ATTR_TENSOR_UNIQUE_ID = 906;
constexpr int CUDNN_ATTR_TENSOR_IS_VIRTUAL = 907;
constexpr int CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS = 1000;
constexpr int CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS = 1001;
constexpr int CUDNN_ATTR_VARIANT_PACK_WORKSPACE = 1003;
constexpr int CUDNN_ATTR_ENGINE_GLOBAL_INDEX = 1301;
constexpr int CUDNN_ATTR_ENGINE_NUMERICAL_NOTE = 1303;
// cudnnPointwiseMode_t, cudnnConvolutionMode_t, cudnnBackendHeurMode_t
constexpr int CUDNN_POINTWISE_ADD = 0;
constexpr int CUDNN_POINTWISE_MUL = 1;
constexpr int CUDNN_POINTWISE_IDENTITY = 21;
constexpr int CUDNN_POINTWISE_RELU_FWD = 100;
constexpr int CUDNN_CROSS_CORRELATION = 1;
constexpr int CUDNN_HEUR_MODE_FALLBACK = 2;
constexpr int CUDNN_HEUR_MODE_A = 3;
// cudnnBackendNumericalNote_t
constexpr int CUDNN_NUMERICAL_NOTE_TENSOR_CORE = 0;
constexpr int CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS = 1;
constexpr int CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION = 2;
constexpr int CUDNN_NUMERICAL_NOTE_FFT = 3;
constexpr int CUDNN_NUMERICAL_NOTE_WINOGRAD = 5;
constexpr int CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13 = 8;
constexpr int CUDNN_NUMERICAL_NOTE_TYPE_COUNT = 10;
constexpr int kMaxKnobs = 64;  // more than CUDNN_KNOB_TYPE_COUNTS (44)

// Builds descriptors, keeping the first failure: every call after it does nothing, so a chain of
// attribute settings reads straight and is checked once.
class Builder {
 public:
  explicit Builder(const Cudnn& c) : c_(c) {}

  Desc Make(int type) {
    Desc d = nullptr;
    if (ok()) {
      Check(c_.BackendCreateDescriptor(type, &d), "cudnnBackendCreateDescriptor");
    }
    return d;
  }
  void Set(Desc d, int name, int type, int64_t count, const void* values) {
    if (ok()) {
      Check(c_.BackendSetAttribute(d, name, type, count, values),
            tune_gpu::Format("cudnnBackendSetAttribute(%d)", name).c_str());
    }
  }
  void SetInt(Desc d, int name, int64_t v) { Set(d, name, CUDNN_TYPE_INT64, 1, &v); }
  void SetInts(Desc d, int name, const std::vector<int64_t>& v) {
    Set(d, name, CUDNN_TYPE_INT64, static_cast<int64_t>(v.size()), v.data());
  }
  void SetEnum(Desc d, int name, int type, int v) { Set(d, name, type, 1, &v); }
  void SetDesc(Desc d, int name, Desc v) { Set(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v); }
  void Finalize(Desc d, const char* what) {
    if (ok()) {
      Check(c_.BackendFinalize(d), what);
    }
  }

  // A tensor of logical dims {n, c, h, w} stored channels innermost ([n][h][w][c]).
  Desc Tensor(int64_t uid, int type, int64_t n, int64_t ch, int64_t h, int64_t w, bool virt,
              int64_t alignment) {
    Desc t = Make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    SetEnum(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, type);
    SetInts(t, CUDNN_ATTR_TENSOR_DIMENSIONS, {n, ch, h, w});
    SetInts(t, CUDNN_ATTR_TENSOR_STRIDES, {h * w * ch, 1, w * ch, ch});
    SetInt(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, uid);
    SetInt(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, alignment);
    Set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt);
    Finalize(t, "the tensor descriptor");
    return t;
  }

  // y = mode(x[, b]), computed in `precision` (a cudnnDataType_t).
  Desc Pointwise(int mode, int precision, Desc x, Desc b, Desc y) {
    Desc pw = Make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    SetEnum(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode);
    SetEnum(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, precision);
    Finalize(pw, "the pointwise descriptor");
    Desc op = Make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    SetDesc(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
    SetDesc(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (b != nullptr) {
      SetDesc(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
    }
    SetDesc(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    Finalize(op, "the pointwise operation");
    return op;
  }

  bool ok() const { return status_ == 0; }
  cudnnStatus_t status() const { return status_; }
  const std::string& what() const { return what_; }
  void Reset() {
    status_ = 0;
    what_.clear();
  }

 private:
  void Check(cudnnStatus_t s, const char* what) {
    if (s != 0) {
      status_ = s;
      what_ = tune_cudnn::Status(c_, what, s);
    }
  }

  const Cudnn& c_;
  cudnnStatus_t status_ = 0;
  std::string what_;
};

}  // namespace tune_cudnn::graph
