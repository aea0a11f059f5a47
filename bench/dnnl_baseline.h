// oneDNN as the baseline a user would pick instead of tune, called directly (not through tune's
// runtime shim), at its best: for GEMM the matmul primitive (on plain B and on B prepacked in its
// preferred layout) and the BLAS-like dnnl_sgemm; for conv2d the convolution primitive with each
// of its algorithms (auto, direct, Winograd), on canonical tensors (the workload's NCHW or NHWC)
// and in its preferred (blocked) layouts, in the workload's element types. The workload's epilogue
// is oneDNN's own bias and ReLU post-op (dnnl_sgemm: applied after the call), its scales and
// requantisation oneDNN's output scale and zero point; primitives are created once before timing.
// DnnlSweep measures every variant oneDNN accepts in the same interleaved runs and names the
// fastest.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/measurement.h"
#include "common/workload.h"

namespace tune::bench {

enum class DnnlLayout {
  kPlain,    // canonical tensors handed to the primitive (NCHW / KCRS / NKPQ; row-major GEMM)
  kBlocked,  // the primitive's preferred layouts (format_tag::any), the data already in them
             // (reordered once, before timing): what a framework that keeps them sees
  kPlainPackedWeights,  // canonical activations, the weights (GEMM: B) in the primitive's
                        // preferred layout, reordered once before timing: the like-for-like
                        // baseline of a workload with weights=prepared
  kReorderedInCall,     // conv2d: canonical tensors reordered into the primitive's preferred
                        // layouts and the output back on every call, the reorders timed: what a
                        // caller holding canonical tensors does where oneDNN runs only its
                        // reference loops on them as they are (typed convolutions)
};

/// "plain", "blocked", "plain, weights prepacked", "reordered in the call".
std::string_view DnnlLayoutName(DnnlLayout layout);

/// What computes the operator inside oneDNN.
enum class DnnlAlgorithm {
  kMatmul,        // GEMM: the matmul primitive
  kSgemm,         // GEMM: dnnl_sgemm on plain matrices (no prepacking: kPlain only)
  kConvAuto,      // conv2d: convolution_auto, oneDNN's own choice of algorithm
  kConvDirect,    // conv2d: convolution_direct
  kConvWinograd,  // conv2d: convolution_winograd, which oneDNN refuses for many shapes and ISAs
};

/// "matmul", "sgemm", "auto", "direct", "winograd".
std::string_view DnnlAlgorithmName(DnnlAlgorithm algorithm);

class DnnlKernel {
 public:
  /// Creates `algorithm` for `workload` in `layout` with `threads` OpenMP threads over `args`
  /// (in Workload::Arguments() order, the output last but for the scales; each points at its
  /// tensor's element type, float* being the carrier only). Unimplemented when oneDNN refuses the
  /// algorithm for this shape, layout or ISA (a fact about oneDNN, not a failure);
  /// InvalidArgument when the algorithm does not compute the workload's operator or the layout;
  /// Internal for any other failure of oneDNN.
  static absl::StatusOr<std::unique_ptr<DnnlKernel>> Create(const Workload& workload,
                                                            DnnlAlgorithm algorithm,
                                                            DnnlLayout layout, int threads,
                                                            const std::vector<float*>& args);
  ~DnnlKernel();
  /// Runs once; the output is in `args`' output only for plain outputs (kBlocked keeps a conv2d's
  /// output blocked: ReadOutput gives it back in the canonical layout).
  void Run();
  /// Copies the last Run's output, in the canonical layout, to `out`.
  void ReadOutput(float* out);
  /// oneDNN's implementation (primitive_desc::impl_info_str), e.g. "brg:avx512_core".
  const char* impl() const;

 private:
  struct Impl;
  explicit DnnlKernel(std::unique_ptr<Impl> impl);
  // Builds the matmul or convolution primitive into `impl` (throws oneDNN's dnnl::error).
  static void BuildPrimitive(const Workload& workload, DnnlAlgorithm algorithm, DnnlLayout layout,
                             const std::vector<float*>& args, Impl* impl);
  std::unique_ptr<Impl> impl_;
};

/// oneDNN at its best for one workload: every algorithm of its operator in each given layout.
class DnnlSweep {
 public:
  struct Variant {
    DnnlAlgorithm algorithm;
    DnnlLayout layout;
    std::unique_ptr<DnnlKernel> kernel;  // null when oneDNN refused the variant
    std::string refused;                 // oneDNN's refusal, when it refused
    bool reference_only = false;         // refused: oneDNN had only its reference loops
    std::vector<double> secs;            // seconds per call, one per MeasureRun
    /// "winograd, blocked (jit_wino_4x3:avx512_core)"; a refused variant: "winograd, plain".
    std::string Name() const;
  };

  /// The algorithms that compute `op`, in the order they are measured.
  static std::vector<DnnlAlgorithm> AlgorithmsFor(OpKind op);

  /// Creates every algorithm of the workload's operator in each of `layouts` (dnnl_sgemm in
  /// kPlain only). A variant oneDNN refuses is kept as refused, with its reason, and so is one
  /// that only its reference implementation ("ref:any") computes. Fails with oneDNN's error when
  /// it fails otherwise, and FailedPrecondition when it refuses every one.
  static absl::StatusOr<DnnlSweep> Create(const Workload& workload,
                                          const std::vector<DnnlLayout>& layouts, int threads,
                                          const std::vector<float*>& args);

  /// One run of the interleaved re-measurement: each accepted variant timed once, in order, with
  /// the in-process timing rule (in_process_timing.h).
  void MeasureRun(const TimingOptions& timing);

  /// The accepted variant of lowest median time (among `layout`'s when given); nullptr before
  /// the first run or when none was accepted.
  const Variant* Fastest(std::optional<DnnlLayout> layout = std::nullopt) const;
  /// The same among the variants of any of `layouts`.
  const Variant* FastestOf(const std::vector<DnnlLayout>& layouts) const;

  const std::vector<Variant>& variants() const { return variants_; }

  /// Every variant on one line: its median in GFLOPS (`gflop` per call) or "refused" ("ref only"
  /// where oneDNN had only its reference implementation).
  std::string Summary(double gflop) const;

 private:
  // The accepted variant of lowest median time among those whose layout is `wanted`.
  const Variant* FastestWhere(const std::function<bool(DnnlLayout)>& wanted) const;

  std::vector<Variant> variants_;
};

}  // namespace tune::bench
