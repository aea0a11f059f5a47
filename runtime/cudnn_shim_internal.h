// What the two halves of libtune_cudnn.so share (not an interface of its own): the cuDNN library
// opened at the first call, the handle of each (thread, device), failure recording and the
// describe line's state. cudnn_shim.cc holds the legacy convolution (tune_cudnn_conv2d) and
// cudnn_graph_shim.cc the typed one through the graph (backend) API (tune_cudnn_conv2d_typed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/gpu_shim_util.h"

namespace tune_cudnn {

// The cuDNN ABI both halves use (cudnn_graph.h of cuDNN 9; the legacy functions of cudnn_ops.h
// and cudnn_cnn.h are cudnn_shim.cc's own).
using cudnnStatus_t = int;
using cudnnHandle_t = void*;
using Desc = void*;
constexpr int CUDNN_STATUS_BAD_PARAM = 2000;
constexpr int CUDNN_STATUS_NOT_SUPPORTED = 3000;

struct cudnnConvolutionFwdAlgoPerf_t {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism;
  int mathType;
  int reserved[3];
};

struct Cudnn {
  std::string file;
  size_t (*GetVersion)();
  const char* (*GetErrorString)(cudnnStatus_t);
  void (*GetLastErrorString)(char*, size_t);  // cuDNN 9 only: may be absent
  cudnnStatus_t (*Create)(cudnnHandle_t*);
  cudnnStatus_t (*SetStream)(cudnnHandle_t, void*);
  // The legacy API (cudnn_ops.h, cudnn_cnn.h).
  cudnnStatus_t (*CreateTensorDescriptor)(Desc*);
  cudnnStatus_t (*SetTensor4dDescriptor)(Desc, int, int, int, int, int, int);
  cudnnStatus_t (*CreateFilterDescriptor)(Desc*);
  cudnnStatus_t (*SetFilter4dDescriptor)(Desc, int, int, int, int, int, int);
  cudnnStatus_t (*CreateConvolutionDescriptor)(Desc*);
  cudnnStatus_t (*SetConvolution2dDescriptor)(Desc, int, int, int, int, int, int, int, int);
  cudnnStatus_t (*SetConvolutionMathType)(Desc, int);
  cudnnStatus_t (*GetConvolution2dForwardOutputDim)(Desc, Desc, Desc, int*, int*, int*, int*);
  cudnnStatus_t (*CreateActivationDescriptor)(Desc*);
  cudnnStatus_t (*SetActivationDescriptor)(Desc, int, int, double);
  cudnnStatus_t (*FindConvolutionForwardAlgorithm)(cudnnHandle_t, Desc, Desc, Desc, Desc, int, int*,
                                                   cudnnConvolutionFwdAlgoPerf_t*);
  cudnnStatus_t (*GetConvolutionForwardWorkspaceSize)(cudnnHandle_t, Desc, Desc, Desc, Desc, int,
                                                      size_t*);
  cudnnStatus_t (*ConvolutionForward)(cudnnHandle_t, const void*, Desc, const void*, Desc,
                                      const void*, Desc, int, void*, size_t, const void*, Desc,
                                      void*);
  cudnnStatus_t (*ConvolutionBiasActivationForward)(cudnnHandle_t, const void*, Desc, const void*,
                                                    Desc, const void*, Desc, int, void*, size_t,
                                                    const void*, Desc, const void*, Desc,
                                                    const void*, Desc, Desc, void*);
  // The graph (backend) API (cudnn_graph.h).
  cudnnStatus_t (*BackendCreateDescriptor)(int, Desc*);
  cudnnStatus_t (*BackendDestroyDescriptor)(Desc);
  cudnnStatus_t (*BackendFinalize)(Desc);
  cudnnStatus_t (*BackendSetAttribute)(Desc, int, int, int64_t, const void*);
  cudnnStatus_t (*BackendGetAttribute)(Desc, int, int, int64_t, int64_t*, void*);
  cudnnStatus_t (*BackendExecute)(cudnnHandle_t, Desc, Desc);
};

// libcudnn.so.9, opened at the first call; nullptr after recording why (`*code` is then
// TUNE_GPU_NOT_FOUND).
const Cudnn* LoadCudnn(int32_t* code);

// Records `message` as the shim's last error (its describe line and tune_gpu_last_error()) and
// returns `code`.
int32_t Failed(int32_t code, const std::string& message);

// "<what> failed: cuDNN status <s> (<name>)", with cuDNN's own last message when it has one.
std::string Status(const Cudnn& c, const char* what, cudnnStatus_t s);

// The calling thread's cuDNN handle for `device` (made at its first use), on `stream`.
int32_t Handle(const Cudnn& c, tune_gpu::CUdevice device, void* stream, cudnnHandle_t* out);

// Records how the last successful call ran, for the describe line.
void RecordPath(const std::string& path);

}  // namespace tune_cudnn
