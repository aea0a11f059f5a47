// Schedule templates: named schedule families for one operator and one target kind. A template
// turns (workload, target, config) into a LoweredFunc with the workload's canonical C ABI.
//
// The table of templates is explicit (catalog.cc lists them); nothing registers itself. Which
// templates a program knows, its plugins' families included, is its catalog's to say
// (catalog.h).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/ir/ir.h"
#include "common/target.h"
#include "common/workload.h"
#include "search/config_space.h"

namespace tune {

/// The kinds of targets a template builds for: one kind, or both GPU kinds alike (kGpu: a
/// template of generated GPU code, one entry for cuda and rocm targets, whose lowering picks
/// NVPTX or AMDGPU).
enum class TemplateTargets : uint8_t { kLlvm, kCuda, kRocm, kGpu };

/// The conv2d data layouts a template builds: plain NCHW (layout=NCHW), the blocked layouts
/// (layout=NCHW<b>c), both of those, channels innermost (layout=NHWC), or every one.
enum class ConvLayouts : uint8_t { kPlain, kBlocked, kBoth, kNhwc, kAll };

/// The GEMM layouts a template builds: B as [K][N] (layout=NN), as [N][K] (layout=NT), or both.
enum class GemmLayouts : uint8_t { kNN, kNT, kBoth };

/// How a kernel prepares its weights when the workload takes them prepared (WeightForm::kPrepared,
/// common/workload.h): `func`, with parameters (weight, prepared), writes the `floats` floats
/// that the kernel reads in place of the weights.
struct PreparedWeights {
  ir::LoweredFunc func;
  int64_t floats = 0;
};

struct KernelTemplate {
  using SpaceFn = std::function<ConfigSpace(const Workload&, const Target&)>;
  using DefaultFn = std::function<Config(const Workload&, const Target&)>;
  using BuildFn = std::function<absl::StatusOr<ir::LoweredFunc>(
      const Workload&, const Target&, const Config&, std::string_view func_name)>;
  using BuildObjectFn = std::function<absl::StatusOr<std::string>(
      const Workload&, const Target&, const Config&, std::string_view func_name)>;
  using AppliesFn = std::function<bool(const Workload&, const Target&)>;
  using SeedsFn = std::function<std::vector<Config>(const Workload&, const Target&)>;
  using CheckShapeFn = std::function<absl::Status(const Workload&)>;
  using ToleranceFn = std::function<double(const Workload&, const Config&)>;
  using PrepareFn = std::function<absl::StatusOr<PreparedWeights>(
      const Workload&, const Target&, const Config&, std::string_view func_name)>;
  using FeaturesFn = std::function<std::vector<std::string>(const Workload&, const Target&)>;

  std::string_view name;  // e.g. "gemm.cpu.blocked"
  int version;            // bumped whenever the generated code changes meaning or speed
  OpKind op;
  TemplateTargets targets;
  /// The knobs, their candidates (which depend on the workload and the target) and the
  /// constraints between them.
  SpaceFn space;
  /// A decent config that is always valid in `space`.
  DefaultFn default_config;
  /// The kernel for one config, named `func_name`, with parameters in Workload::Arguments()
  /// order. A config outside `space`, another op or another target kind is InvalidArgument.
  /// Empty for templates whose code someone else compiles (build_object).
  BuildFn build;
  /// The external library its kernels call (a name of common/runtime_libs.h, e.g. "dnnl"), or
  /// empty for code tune generates itself. A library template applies only to targets that
  /// name the library in -libs=.
  std::string_view library = {};
  /// The CPU features (common/host_cpu.h's names) a worker must report, beyond its device key,
  /// to run the template's kernels for the workload on the target: the matrix instructions they
  /// use ("amx-tile", "amx-bf16", "avx512bf16", ...). Workers of the key whose CPU or kernel
  /// lacks one (a virtual machine that hides AVX512-BF16, a Linux that does not enable AMX) are
  /// not sent them, and a job waits for one that has them. Empty: every worker of the key.
  FeaturesFn worker_features = {};
  /// True for templates that call the catalog's micro-kernel the target names in -libs=
  /// (codegen/templates/ukernel_templates.h).
  bool uses_extern_kernel = false;
  /// For families of codegen plugins (codegen/plugins/): the kernel for one config as an ELF
  /// relocatable object that defines `func_name` with the canonical C ABI. Empty otherwise.
  BuildObjectFn build_object = {};
  /// Whether the template builds this workload for this target beyond op and target kind (a
  /// plugin's answer); empty: it does.
  AppliesFn applies = {};
  /// Where its default is expected to run faster than the defaults of the templates before it
  /// in the table, so that it should come first for the workload (TemplatesFor): Winograd on 3x3
  /// layers with enough channels, whose default beats the direct template's by 1.8-2.6x on
  /// ResNet-50. Empty: never.
  AppliesFn leads = {};
  /// For conv2d templates: the data layouts it builds (TemplateBuildsForm).
  ConvLayouts conv_layouts = ConvLayouts::kPlain;
  /// For GEMM templates: the layouts of B it builds.
  GemmLayouts gemm_layouts = GemmLayouts::kNN;
  /// The dtypes (workload field dtype=) it builds, each with every output type the dtype
  /// accepts. A template that does not name a dtype is never handed a workload of it.
  DtypeSet dtypes = DtypeSet{Dtype::kF32};
  /// Whether it builds epilogue=requant (i8 output from an integer dtype's accumulators, with a
  /// scale and a zero point); a template that does not is never handed such a workload.
  bool requant = false;
  /// Configs worth measuring right after the default, best guesses first: the variants a
  /// schedule writer would try for this shape class (tile shapes, splits of the reduction).
  /// A search proposes the valid ones it has not measured before its strategy's own. Empty: none.
  SeedsFn seeds = {};
  /// For templates that build only some shapes of their op (Winograd: 3x3, stride 1): OK when
  /// the workload is one of them, else InvalidArgument naming the fields that do not fit and
  /// the accepted form. Empty: every shape.
  CheckShapeFn check_shape = {};
  /// How far the kernel's output may stand from the reference, as a multiple (>= 1) of the
  /// standard bound of common/reference.h, for kernels that compute differently from a direct
  /// sum of the products (Winograd's transforms). Empty: 1.
  ToleranceFn tolerance = {};
  /// For templates whose kernels read weights taken prepared (weights=prepared) in a form of
  /// their own: the function named `func_name` that writes that form from the canonical weights
  /// (`build` then reads it). Empty: the kernel reads the canonical layout, and the prepared
  /// form is a copy of it (PrepareWeights).
  PrepareFn prepare = {};
  /// False for a template that a job gets only by naming it: Catalog::TemplatesFor never offers
  /// it (the tests' fault templates, tests/fault/fault_templates.h).
  bool offered = true;
  /// False when the daemon must not build this template's IR to describe its configs to the
  /// cost model (builds that abort or hang by design: the tests' fault templates); its knobs
  /// describe them instead.
  bool ir_features = true;
};

/// Whether `tpl` builds kernels for targets of `kind`.
bool TemplateBuildsFor(const KernelTemplate& tpl, TargetKind kind);
/// The kinds of targets `tpl` builds for, for messages: "llvm", "cuda", "rocm", "cuda and rocm".
std::string_view TemplateTargetsName(const KernelTemplate& tpl);

/// The library a template's kernels call on a target, as people name it (-libs=) and as
/// workers must have loaded it (Catalog::LibraryOf).
struct TemplateLibrary {
  std::string name;  // e.g. "dnnl", or a micro-kernel manifest's name
  std::string file;  // e.g. "libtune_dnnl.so", or the micro-kernel's library file
};

/// Whether `tpl` builds the form of `workload` beyond its op: its weight form (prepared weights:
/// the CPU templates whose IR tune generates, not codegen plugins' objects nor GPU kernels), its
/// dtype (KernelTemplate::dtypes), its layout (gemm_layouts, conv_layouts) and a requantising
/// epilogue (KernelTemplate::requant).
bool TemplateBuildsForm(const KernelTemplate& tpl, const Workload& workload);
/// OK when `tpl` builds the form of `workload`, else InvalidArgument naming the first field that
/// does not fit, what the template builds and the workload.
absl::Status CheckTemplateForm(const KernelTemplate& tpl, const Workload& workload);
/// "layout=NN|NT", "layout=NHWC", ...: the layouts a template builds, for messages.
std::string TemplateLayoutsText(const KernelTemplate& tpl);

/// Tolerances (KernelTemplate::tolerance) of kernels that compute a convolution through
/// transforms. Winograd F(4,3)'s error is about 17 times F(2,3)'s and a third of the standard
/// bound on ResNet-50's layers with inputs in [-1, 1) (tests/codegen/templates/
/// conv2d_cpu_winograd_test.cc prints it); its transforms amplify rounding by their entries (up
/// to 8), more on inputs of a wider range, so it is held to 4 times the bound. Library
/// algorithms that may use FFT or Winograd with larger tiles get 10, the bound they were verified
/// under before the standard one was tightened.
inline constexpr double kWinogradF43Tolerance = 4;
inline constexpr double kTransformAlgorithmTolerance = 10;

/// OK when `tpl` builds this shape (KernelTemplate::check_shape), else its InvalidArgument.
absl::Status CheckTemplateShape(const KernelTemplate& tpl, const Workload& workload);

/// The multiple of the standard output tolerance that `tpl`'s kernel for `config` is held to
/// (KernelTemplate::tolerance; 1 when the template states none).
double TemplateTolerance(const KernelTemplate& tpl, const Workload& workload, const Config& config);

/// The preparation of the weights of kernel `kernel_name` (a workload with prepared weights):
/// the template's own (KernelTemplate::prepare), else a copy of the canonical weights; the
/// function is named PrepareFunctionName(kernel_name). Not lowered.
absl::StatusOr<PreparedWeights> PrepareWeights(const KernelTemplate& tpl, const Workload& workload,
                                               const Target& target, const Config& config,
                                               std::string_view kernel_name);

/// The preparation of weights a kernel reads in their canonical layout: a function named
/// `func_name` of (weight, prepared) that copies the workload's weights.
PreparedWeights CopyOfWeights(const Workload& workload, std::string_view func_name);

/// The default C function name of a workload, e.g. `tune_gemm_M512_N512_K512` or
/// `tune_conv2d_N1_C64_H56_W56_K64_R3_S3_s1_p1` (with `_d2` for dilation 2 and `_bias`,
/// `_relu` or `_bias_relu` for an epilogue, `_nchw16c` for a blocked layout and `_prepared` for
/// prepared weights). Deterministic:
/// the same workload, the same name.
std::string DefaultFunctionName(const Workload& workload);

}  // namespace tune
