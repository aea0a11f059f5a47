// Built where tune_bench_baselines has oneDNN (TUNE_BENCH_DNNL).
#ifdef TUNE_BENCH_DNNL
#include "bench/dnnl_baseline.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/reference.h"
#include "common/stats.h"
#include "tests/runtime/dnnl_host.h"

namespace tune::bench {
namespace {

std::vector<float*> FloatArgs(TensorSet& tensors) {
  std::vector<float*> args;
  for (void* p : tensors.AbiPointers()) {
    args.push_back(static_cast<float*>(p));
  }
  return args;
}

// Every variant oneDNN accepted computes the workload (read back in the canonical layout).
void ExpectAcceptedVariantsCompute(const Workload& w, DnnlSweep& sweep, TensorSet& tensors) {
  std::vector<float> want(tensors.output_size()), got(tensors.output_size());
  RunReference(w, tensors.InputPointers(), want.data());
  for (const DnnlSweep::Variant& v : sweep.variants()) {
    if (v.kernel == nullptr) {
      continue;
    }
    SCOPED_TRACE(v.Name());
    v.kernel->Run();
    v.kernel->ReadOutput(got.data());
    // oneDNN's Winograd rounds like tune's (KernelTemplate::tolerance).
    const double scale = v.algorithm == DnnlAlgorithm::kConvWinograd ? 16.0 : 1.0;
    CompareResult cmp = CompareOutputs(w, got.data(), want.data(), tensors.output_size(), scale);
    EXPECT_TRUE(cmp.ok) << cmp.message;
  }
}

constexpr TimingOptions kQuickTiming{.number = 1, .repeat = 1, .min_repeat_ms = 1};

TEST(DnnlSweepTest, MeasuresEveryConvolutionAlgorithmInEachLayoutAndNamesTheFastest) {
  const Workload w =
      *Workload::Parse("conv2d:N=1,C=16,H=14,W=14,K=16,R=3,S=3,stride=1,pad=1,epilogue=bias_relu");
  TensorSet tensors(w, 3);
  absl::StatusOr<DnnlSweep> sweep =
      DnnlSweep::Create(w, {DnnlLayout::kPlain, DnnlLayout::kBlocked}, 1, FloatArgs(tensors));
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  ASSERT_EQ(sweep->variants().size(), 6u);  // auto, direct, Winograd in each layout
  for (const DnnlSweep::Variant& v : sweep->variants()) {
    if (v.algorithm != DnnlAlgorithm::kConvWinograd) {
      EXPECT_NE(v.kernel, nullptr) << v.Name() << ": " << v.refused;
    }
    EXPECT_EQ(v.kernel == nullptr, !v.refused.empty()) << v.Name();
  }
  ExpectAcceptedVariantsCompute(w, *sweep, tensors);
  EXPECT_EQ(sweep->Fastest(), nullptr);  // nothing measured yet
  sweep->MeasureRun(kQuickTiming);
  sweep->MeasureRun(kQuickTiming);
  const DnnlSweep::Variant* fastest = sweep->Fastest();
  ASSERT_NE(fastest, nullptr);
  EXPECT_EQ(fastest->secs.size(), 2u);
  for (const DnnlSweep::Variant& v : sweep->variants()) {
    if (!v.secs.empty()) {
      EXPECT_LE(Median(fastest->secs), Median(v.secs)) << v.Name();
    }
  }
  // The name says the algorithm, the layout and oneDNN's implementation.
  const std::string name = fastest->Name();
  EXPECT_NE(name.find(DnnlAlgorithmName(fastest->algorithm)), std::string::npos) << name;
  EXPECT_NE(name.find(DnnlLayoutName(fastest->layout)), std::string::npos) << name;
  EXPECT_NE(name.find(fastest->kernel->impl()), std::string::npos) << name;
  ASSERT_NE(sweep->Fastest(DnnlLayout::kBlocked), nullptr);
  EXPECT_EQ(sweep->Fastest(DnnlLayout::kBlocked)->layout, DnnlLayout::kBlocked);
}

TEST(DnnlSweepTest, AnAlgorithmOneDnnRefusesIsSkippedNotAnError) {
  // oneDNN's Winograd takes 3x3 filters only: it refuses a 1x1 filter in every layout.
  const Workload w = *Workload::Parse("conv2d:N=1,C=16,H=7,W=7,K=32,R=1,S=1,stride=1,pad=0");
  TensorSet tensors(w, 4);
  absl::StatusOr<DnnlSweep> sweep =
      DnnlSweep::Create(w, {DnnlLayout::kPlain, DnnlLayout::kBlocked}, 1, FloatArgs(tensors));
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  int refused = 0;
  for (const DnnlSweep::Variant& v : sweep->variants()) {
    if (v.algorithm == DnnlAlgorithm::kConvWinograd) {
      EXPECT_EQ(v.kernel, nullptr) << v.Name();
      EXPECT_NE(v.refused.find("winograd"), std::string::npos) << v.refused;
      ++refused;
    }
  }
  EXPECT_EQ(refused, 2);
  sweep->MeasureRun(kQuickTiming);
  ASSERT_NE(sweep->Fastest(), nullptr);
  EXPECT_NE(sweep->Fastest()->algorithm, DnnlAlgorithm::kConvWinograd);
  EXPECT_NE(sweep->Summary(w.Flops() / 1e9).find("winograd, plain: refused"), std::string::npos)
      << sweep->Summary(w.Flops() / 1e9);
  ExpectAcceptedVariantsCompute(w, *sweep, tensors);
}

TEST(DnnlSweepTest, GemmVariantsComputeTheProductWithTheEpilogue) {
  const Workload w = *Workload::Parse("gemm:M=33,N=70,K=45,epilogue=bias_relu");
  TensorSet tensors(w, 6);
  absl::StatusOr<DnnlSweep> sweep =
      DnnlSweep::Create(w, {DnnlLayout::kPlain, DnnlLayout::kBlocked}, 1, FloatArgs(tensors));
  ASSERT_TRUE(sweep.ok()) << sweep.status();
  // matmul and dnnl_sgemm on plain matrices, matmul on B in oneDNN's layout.
  ASSERT_EQ(sweep->variants().size(), 3u);
  for (const DnnlSweep::Variant& v : sweep->variants()) {
    EXPECT_NE(v.kernel, nullptr) << v.Name() << ": " << v.refused;
  }
  ExpectAcceptedVariantsCompute(w, *sweep, tensors);
}

// Typed convolutions in the workload's element types and layout: every variant oneDNN runs with
// its own loops computes the typed reference (scales and requantisation included), those with
// the reorders in the call among them, and the ones only its reference loops compute are kept out
// of the sweep, named; a type oneDNN does not compute on this host (tests/runtime/dnnl_host.h)
// has no sweep.
TEST(DnnlSweepTest, TypedConvolutionsComputeTheReferenceAndReferenceOnlyVariantsAreNotMeasured) {
  for (const char* text :
       {"conv2d:N=1,C=16,H=9,W=9,K=32,R=3,S=3,stride=1,pad=1,layout=NHWC,dtype=bf16",
        "conv2d:N=1,C=16,H=8,W=8,K=16,R=1,S=1,stride=1,pad=0,dtype=u8i8,out=f32",
        "conv2d:N=2,C=8,H=7,W=7,K=24,R=3,S=3,stride=2,pad=1,layout=NHWC,dtype=i8,"
        "epilogue=requant"}) {
    SCOPED_TRACE(text);
    const Workload w = *Workload::Parse(text);
    TensorSet tensors(w, 7);
    absl::StatusOr<DnnlSweep> sweep = DnnlSweep::Create(
        w, {DnnlLayout::kPlain, DnnlLayout::kReorderedInCall, DnnlLayout::kBlocked}, 1,
        FloatArgs(tensors));
    if (!testing::DnnlRuns(w.dtype())) {  // no baseline of a type oneDNN lacks here
      EXPECT_TRUE(absl::IsFailedPrecondition(sweep.status())) << sweep.status();
      continue;
    }
    ASSERT_TRUE(sweep.ok()) << sweep.status();
    std::vector<char> want(tensors.output_size() * ElementBytes(ReferenceType(w)));
    std::vector<char> got(tensors.output_size() * ElementBytes(w.out_type()));
    RunReference(w, tensors.Inputs(), want.data());
    int computed = 0, in_call = 0;
    for (const DnnlSweep::Variant& v : sweep->variants()) {
      if (v.reference_only) {
        EXPECT_EQ(v.kernel, nullptr) << v.Name();
        EXPECT_NE(v.refused.find("(ref"), std::string::npos) << v.refused;
      }
      if (v.kernel == nullptr) {
        continue;
      }
      EXPECT_FALSE(std::string_view(v.kernel->impl()).starts_with("ref")) << v.Name();
      v.kernel->Run();
      v.kernel->ReadOutput(reinterpret_cast<float*>(got.data()));
      CompareResult cmp = CompareOutputs(w, got.data(), want.data(), tensors.output_size(), 1.0,
                                         tensors.scale_product());
      EXPECT_TRUE(cmp.ok) << v.Name() << ": " << cmp.message;
      ++computed;
      in_call += v.layout == DnnlLayout::kReorderedInCall ? 1 : 0;
    }
    EXPECT_GE(computed, 2);
    EXPECT_GE(in_call, 1);
    sweep->MeasureRun(kQuickTiming);
    EXPECT_NE(sweep->FastestOf({DnnlLayout::kReorderedInCall}), nullptr);
  }
}

TEST(DnnlKernelTest, AnAlgorithmOfAnotherOperatorOrLayoutIsInvalidArgument) {
  const Workload conv = *Workload::Parse("conv2d:N=1,C=4,H=5,W=5,K=4,R=3,S=3,stride=1,pad=1");
  TensorSet conv_tensors(conv, 1);
  absl::StatusOr<std::unique_ptr<DnnlKernel>> matmul = DnnlKernel::Create(
      conv, DnnlAlgorithm::kMatmul, DnnlLayout::kPlain, 1, FloatArgs(conv_tensors));
  EXPECT_TRUE(absl::IsInvalidArgument(matmul.status())) << matmul.status();
  const Workload gemm = *Workload::Parse("gemm:M=4,N=4,K=4");
  TensorSet gemm_tensors(gemm, 1);
  absl::StatusOr<std::unique_ptr<DnnlKernel>> packed = DnnlKernel::Create(
      gemm, DnnlAlgorithm::kSgemm, DnnlLayout::kBlocked, 1, FloatArgs(gemm_tensors));
  EXPECT_TRUE(absl::IsInvalidArgument(packed.status())) << packed.status();
  EXPECT_NE(packed.status().message().find("accepted: plain"), std::string::npos);
  absl::StatusOr<std::unique_ptr<DnnlKernel>> in_call = DnnlKernel::Create(
      gemm, DnnlAlgorithm::kMatmul, DnnlLayout::kReorderedInCall, 1, FloatArgs(gemm_tensors));
  EXPECT_TRUE(absl::IsInvalidArgument(in_call.status())) << in_call.status();
  EXPECT_NE(in_call.status().message().find("conv2d only"), std::string::npos);
}

}  // namespace
}  // namespace tune::bench
#endif  // TUNE_BENCH_DNNL
