// The CUDA measurement child's trusted reference (rpc_server/gpu/reference_ptx.h), in this
// process: its device inputs and outputs, f32 and typed, against common/reference.h on the host.
// Skipped where no CUDA device can be opened.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/element_type.h"
#include "common/reference.h"
#include "rpc_server/gpu/gpu_device.h"
#include "rpc_server/gpu/reference_kernels.h"

namespace tune::rpc {
namespace {

// The device reference kernels, in this process, against common/reference.h on the host.
class GpuReferenceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuReferenceTest, TheDeviceReferenceAgreesWithTheHostReference) {
  absl::StatusOr<std::unique_ptr<gpu::GpuDevice>> device =
      gpu::GpuDevice::Open(TargetKind::kCuda, 0);
  if (!device.ok()) {
    GTEST_SKIP() << "no CUDA device can be opened: " << device.status().message();
  }
  gpu::GpuDevice& dev = **device;
  absl::StatusOr<std::unique_ptr<gpu::ReferenceKernels>> refs = gpu::ReferenceKernels::Load(&dev);
  ASSERT_TRUE(refs.ok()) << refs.status();
  absl::StatusOr<Workload> workload = Workload::Parse(GetParam());
  ASSERT_TRUE(workload.ok()) << workload.status();
  std::vector<TensorArg> args = workload->Arguments();
  std::vector<gpu::DevicePtr> ptrs;
  std::vector<std::vector<float>> host;
  for (size_t i = 0; i < args.size(); ++i) {
    const size_t bytes = static_cast<size_t>(args[i].NumElements()) * sizeof(float);
    absl::StatusOr<gpu::DevicePtr> p = dev.Allocate(bytes);
    ASSERT_TRUE(p.ok()) << p.status();
    ptrs.push_back(*p);
    host.emplace_back(args[i].NumElements());
    if (!args[i].is_output) {
      ASSERT_TRUE((*refs)->Fill(*p, args[i].NumElements(), gpu::ArgumentSeed(5, i)).ok());
      ASSERT_TRUE(dev.CopyToHost(host.back().data(), *p, bytes).ok());
    }
  }
  // The generator's values are uniform in [-1, 1) and not all equal.
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    float lo = 1, hi = -1;
    for (float v : host[i]) {
      ASSERT_GE(v, -1.0f);
      ASSERT_LT(v, 1.0f);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    EXPECT_LT(lo, hi);
  }
  std::vector<gpu::DevicePtr> inputs(ptrs.begin(), ptrs.end() - 1);
  ASSERT_EQ(gpu::ReferenceKernels::ScratchBytes(*workload), 0);  // NCHW: no im2col
  ASSERT_TRUE((*refs)->Run(*workload, inputs, ptrs.back(), 0).ok());
  std::vector<float>& got = host.back();
  ASSERT_TRUE(dev.CopyToHost(got.data(), ptrs.back(), got.size() * sizeof(float)).ok());
  std::vector<const float*> host_inputs;
  for (size_t i = 0; i + 1 < host.size(); ++i) {
    host_inputs.push_back(host[i].data());
  }
  std::vector<float> want(got.size());
  RunReference(*workload, host_inputs, want.data());
  CompareResult compared =
      CompareOutputs(*workload, got.data(), want.data(), static_cast<int64_t>(got.size()));
  EXPECT_TRUE(compared.ok) << compared.message;
  for (gpu::DevicePtr p : ptrs) {
    dev.Free(p);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, GpuReferenceTest,
    ::testing::Values("gemm:M=33,N=17,K=65", "gemm:M=16,N=24,K=32,epilogue=bias_relu",
                      "gemm:M=7,N=5,K=3,epilogue=relu",
                      "conv2d:N=2,C=3,H=9,W=11,K=4,R=3,S=3,stride=1,pad=1",
                      "conv2d:N=1,C=5,H=12,W=10,K=6,R=3,S=2,stride=2,pad=2,dilation=2,"
                      "epilogue=bias_relu",
                      "conv2d:N=1,C=2,H=7,W=7,K=3,R=1,S=1,stride=1,pad=0,epilogue=bias"));

// The typed device inputs and reference (reference_ptx.h's tune_fill_typed and
// tune_ref_gemm_typed) against common/reference.h on the same inputs, copied back: the inputs
// are exact in their type and the two references agree within the f32 bound.
class GpuTypedReferenceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuTypedReferenceTest, TheDeviceReferenceAgreesWithTheHostReferenceOnTheDevicesInputs) {
  absl::StatusOr<std::unique_ptr<gpu::GpuDevice>> device =
      gpu::GpuDevice::Open(TargetKind::kCuda, 0);
  if (!device.ok()) {
    GTEST_SKIP() << "no CUDA device can be opened: " << device.status().message();
  }
  gpu::GpuDevice& dev = **device;
  absl::StatusOr<std::unique_ptr<gpu::ReferenceKernels>> refs = gpu::ReferenceKernels::Load(&dev);
  ASSERT_TRUE(refs.ok()) << refs.status();
  const Workload w = *Workload::Parse(GetParam());
  const std::vector<TensorArg> args = w.Arguments();
  const size_t out = static_cast<size_t>(w.OutputIndex());
  std::vector<gpu::DevicePtr> ptrs, inputs;
  std::vector<std::vector<uint32_t>> host(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const size_t bytes =
        static_cast<size_t>(i == out ? args[i].NumElements() * 4 : args[i].NumBytes());
    absl::StatusOr<gpu::DevicePtr> p = dev.Allocate(bytes);
    ASSERT_TRUE(p.ok()) << p.status();
    ptrs.push_back(*p);
    host[i].resize((bytes + 3) / 4);
    if (i != out) {
      inputs.push_back(*p);
      ASSERT_TRUE((*refs)->FillTyped(w, args[i], *p, gpu::ArgumentSeed(5, i)).ok());
      ASSERT_TRUE(dev.CopyToHost(host[i].data(), *p, bytes).ok());
      // Every input is a finite value of its type of magnitude at most 1 (a value just above
      // -1 rounds to -1 in a narrow type; scales: in [2, 4)), and a tf32 operand has no bits
      // below its 10 mantissa bits.
      for (int64_t e = 0; e < args[i].NumElements(); ++e) {
        const double v = DecodeElement(args[i].type, host[i].data(), e);
        ASSERT_TRUE(std::isfinite(v)) << args[i].name << "[" << e << "]";
        if (args[i].role == ArgRole::kScale) {
          ASSERT_TRUE(v >= 2 && v < 4) << v;
        } else if (args[i].type == ElementType::kI32) {
          ASSERT_TRUE(v >= -32768 && v < 32768) << args[i].name << "[" << e << "] = " << v;
        } else if (!IsIntegerElement(args[i].type)) {
          ASSERT_LE(std::abs(v), 1.0) << args[i].name << "[" << e << "]";
        }
        if (w.dtype() == Dtype::kTf32 && args[i].role != ArgRole::kBias &&
            args[i].role != ArgRole::kScale) {
          ASSERT_EQ(host[i][e] & 0x1fff, 0u) << args[i].name << "[" << e << "]";
        }
      }
    }
  }
  gpu::DevicePtr scratch = 0;
  if (const int64_t bytes = gpu::ReferenceKernels::ScratchBytes(w); bytes > 0) {
    absl::StatusOr<gpu::DevicePtr> p = dev.Allocate(static_cast<size_t>(bytes));
    ASSERT_TRUE(p.ok()) << p.status();
    scratch = *p;
    ptrs.push_back(scratch);  // freed with the arguments
  }
  ASSERT_TRUE((*refs)->Run(w, inputs, ptrs[out], scratch).ok());
  std::vector<float> got(args[out].NumElements());
  ASSERT_TRUE(dev.CopyToHost(got.data(), ptrs[out], got.size() * sizeof(float)).ok());
  std::vector<const void*> host_inputs;
  for (size_t i = 0; i < host.size(); ++i) {
    if (i != out) {
      host_inputs.push_back(host[i].data());
    }
  }
  std::vector<float> want(got.size());
  RunReference(w, host_inputs, want.data());
  if (w.out_type() == ElementType::kI32) {
    // Integer sums are exact, and wrap alike: the same bits.
    ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << GetParam();
    for (gpu::DevicePtr p : ptrs) {
      dev.Free(p);
    }
    return;
  }
  // Both are f32 sums of the same exact products: the f32 bound holds between them.
  const Workload as_f32_output = w.WithTypes(w.dtype(), ElementType::kF32);
  for (size_t e = 0; e < got.size(); ++e) {
    ASSERT_LE(std::abs(got[e] - want[e]), OutputBound(as_f32_output, want[e], got[e], 16.0))
        << GetParam() << " output[" << e << "] = " << got[e] << ", host " << want[e];
  }
  for (gpu::DevicePtr p : ptrs) {
    dev.Free(p);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Dtypes, GpuTypedReferenceTest,
    ::testing::Values("gemm:M=33,N=65,K=40,dtype=bf16,out=f32,epilogue=bias_relu",
                      "gemm:M=16,N=48,K=64,layout=NT,dtype=f16,out=f32",
                      "gemm:M=17,N=24,K=32,layout=NT,dtype=bf16,epilogue=bias",
                      "gemm:M=8,N=32,K=128,layout=NT,dtype=fp8e4m3,out=f32,epilogue=bias",
                      "gemm:M=8,N=8,K=16,dtype=fp8e5m2",
                      "gemm:M=9,N=7,K=33,dtype=tf32,epilogue=bias",
                      "gemm:M=19,N=33,K=4100,layout=NT,dtype=i8,epilogue=bias_relu",
                      "gemm:M=16,N=24,K=64,dtype=u8i8",
                      "gemm:M=8,N=16,K=96,layout=NT,dtype=i8,out=f32",
                      // NHWC convolutions: the im2col of their input, then the GEMMs above.
                      "conv2d:N=2,C=16,H=9,W=7,K=24,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16,"
                      "epilogue=bias_relu",
                      "conv2d:N=1,C=3,H=15,W=15,K=8,R=7,S=7,stride=2,pad=3,layout=NHWC,dtype=f16,"
                      "out=f32",
                      "conv2d:N=1,C=5,H=12,W=10,K=6,R=3,S=2,stride=2,pad=2,dilation=2,"
                      "layout=NHWC,dtype=fp8e4m3,epilogue=bias",
                      "conv2d:N=1,C=8,H=6,W=6,K=8,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=i8",
                      "conv2d:N=1,C=8,H=6,W=6,K=8,R=1,S=1,stride=1,pad=0,layout=NHWC,dtype=u8i8,"
                      "out=f32,epilogue=bias",
                      "conv2d:N=1,C=4,H=5,W=5,K=4,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=tf32",
                      "conv2d:N=1,C=4,H=5,W=5,K=4,R=3,S=3,stride=1,pad=1,layout=NHWC"));

}  // namespace
}  // namespace tune::rpc
