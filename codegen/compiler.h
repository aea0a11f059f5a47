// tune::Compiler: from (workload, template, config) to loadable machine code. It builds single
// artifacts for the tuning daemon's build pool, and whole kernel libraries (one shared library
// plus a C header) for tune-compile, picking each kernel's config from the tuning log.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/ir/ir.h"
#include "codegen/llvm/c_identifier.h"
#include "codegen/llvm/cpu_backend.h"
#include "codegen/llvm/range_entry.h"
#include "codegen/lower.h"
#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"
#include "common/artifact_hash.h"
#include "common/gpu_arch.h"
#include "common/shape_range.h"
#include "common/target.h"
#include "common/workload.h"
#include "search/config_space.h"

namespace tune {

/// One kernel of a library.
struct KernelRequest {
  Workload workload;
  std::string func_name;         // empty: DefaultFunctionName(workload)
  std::optional<Config> config;  // set: build exactly this config (it must be valid)
  std::string template_name;  // empty: the best template for the workload (Catalog::TemplatesFor)
  /// A shape range: the library gets one entry point `func_name` taking the size first
  /// (codegen/llvm/range_entry.h) over kernels at sizes of the range; `workload` is then the
  /// range's workload at its largest size, and `config` must be unset.
  std::optional<ShapeRange> range = {};
};

/// The template and config chosen for a kernel.
struct KernelChoice {
  std::string template_name;
  int template_version = 0;
  Config config;
  bool from_log = false;  // true when the tuning log supplied the config
  std::string note = {};  // from the lookup: how the record matched the target (exact or a
                          // fallback, and with which target it was measured)
  std::optional<double> secs = {};  // from the lookup: the record's median seconds
};

/// Where best configs come from (tune-compile wires the SQLite tuning log in; tests may pass a
/// lambda): the best (template, config) recorded for (workload, target), with a note saying how
/// the record matched the target, or nullopt when nothing is recorded. A non-empty
/// `only_template` restricts the records to that template (a request that names one). An error
/// aborts the library build.
using BestConfigLookup = std::function<absl::StatusOr<std::optional<KernelChoice>>(
    const Workload&, const Target&, std::string_view only_template)>;

/// The sizes of a shape range that the tuning log holds successful records of on the target's
/// device (tune-compile wires the log in), ascending.
using MeasuredSizesLookup =
    std::function<absl::StatusOr<std::vector<int64_t>>(const ShapeRange&, const Target&)>;

/// The build output for one config.
struct Artifact {
  CodeFormat format = CodeFormat::kSharedObject;
  std::string code;                        // what `format` says: x86-64 .so, PTX, HSA code obj.
  std::string entry_symbol;                // the kernel's C symbol (GPU: the kernel's name)
  GpuLaunch launch;                        // kPtx / kHsaco: launch geometry read off the IR
  std::string hash;                        // ArtifactHash(format, code)
  std::vector<std::string> needed_libs;    // runtime libraries besides libc, e.g. libgomp.so.1
  std::vector<std::string> external_libs;  // libraries its calls resolve against, which whoever
                                           // runs it must have loaded (LoweredFunc)
  std::string template_name;
  int template_version = 0;
  std::string config;          // canonical config text
  double tolerance_scale = 1;  // TemplateTolerance: the output check's multiple of the standard
                               // bound (common/reference.h)
  std::string llvm_ir;         // optimised LLVM IR of the kernel
};

/// One config's kernel after lowering (Compiler::Lower): what Compiler::Emit compiles. With the
/// target and the template, its `text` decides the artifact's code, so a builder remembers
/// artifacts by it.
struct LoweredKernel {
  const KernelTemplate* tpl = nullptr;  // templates live for the program
  Workload workload;
  Config config;
  std::string func_name;
  ir::LoweredFunc source = {};              // the template's IR of the kernel, before lowering
  std::vector<ir::LoweredFunc> funcs = {};  // lowered: the kernel, then its weights' preparation
                                            // (prepared weights)
  std::vector<ExportedConstant> constants = {};  // the prepared weights' size (PreparedFloatsName)
  std::string text = {};                         // canonical text of `funcs` and `constants`
};

/// One kernel of a built library, with where its config came from.
struct LibraryKernel {
  std::string func_name;
  Workload workload;
  KernelChoice choice;
  std::string origin;  // "the tuning log", "default config (...why...)" or "given config"
};

/// A shape range's entry point in a built library, with its kernels by ascending size (each a
/// LibraryKernel named `<entry>__<dim><size>`).
struct LibraryRange {
  std::string func_name;
  ShapeRange range;
  std::vector<LibraryKernel> kernels;
  std::vector<int64_t> measured;  // the sizes whose configs the log measured
};

struct LibraryResult {
  std::string so_path;
  std::string header_path;
  std::vector<LibraryKernel> kernels;      // in request order, ranges left out
  std::vector<LibraryRange> ranges;        // in request order
  std::vector<std::string> needed_libs;    // linked (DT_NEEDED): libgomp.so.1 when threads > 1,
                                           // the runtime shims of library kernels
                                           // (libtune_dnnl.so, found through RUNPATH)
  std::vector<std::string> external_libs;  // called but not linked: they must be loaded
                                           // (RTLD_GLOBAL) before this library
  std::string llvm_ir;                     // optimised LLVM IR of the whole library
};

class Compiler {
 public:
  /// `catalog` names the templates requests and records may use; `target` is an llvm, cuda or
  /// rocm target; `lookup` may be empty (every kernel then uses its template's default config).
  /// `lower` is passed to the lowering pipeline of every kernel (e.g. to print the IR after
  /// each stage).
  Compiler(Catalog catalog, Target target, BestConfigLookup lookup = nullptr,
           LowerOptions lower = {});

  const Catalog& catalog() const { return catalog_; }
  /// Where BuildLibrary learns which sizes of a range the log measured (none when unset).
  void SetMeasuredSizes(MeasuredSizesLookup sizes) { sizes_ = std::move(sizes); }
  const Target& target() const { return target_; }

  /// Builds the template's IR for one config and lowers it, with the weights' preparation for
  /// prepared weights. NotFound for templates whose code someone else compiles (build_object);
  /// a config outside the template's space, a workload the template does not build or a
  /// function name that is not a C identifier is InvalidArgument; a lowering error otherwise.
  absl::StatusOr<LoweredKernel> Lower(const Workload& workload, const KernelTemplate& tpl,
                                      const Config& config, std::string_view func_name) const;

  /// Compiles a kernel this compiler lowered: LLVM -> object -> shared library, read back into
  /// memory. For cuda / rocm targets, a kernel with GPU loops becomes PTX (kPtx) or an HSA code
  /// object (kHsaco) with its launch geometry; one without GPU loops (a library candidate's host
  /// code) is a host shared object built for generic x86-64. A codegen or link failure is the
  /// backend's status. Thread-safe (no shared mutable state).
  absl::StatusOr<Artifact> Emit(const LoweredKernel& kernel) const;

  /// Builds one artifact for one config: Lower, then Emit; for a codegen plugin's family, the
  /// plugin's object, linked and checked. Used by tune-compile's callers and tests; the tuning
  /// daemon's builder calls Lower and Emit itself, to remember artifacts by the lowered text.
  absl::StatusOr<Artifact> BuildArtifact(const Workload& workload, const KernelTemplate& tpl,
                                         const Config& config, std::string_view func_name) const;

  /// Picks the template and config of one kernel: the request's own config when given, else
  /// the lookup's record when it is still valid today, else the template's default config;
  /// `origin` (optional) receives a sentence saying which and why. A request naming an
  /// unknown template, an invalid given config or a workload no template builds is
  /// InvalidArgument. A stale record (unknown template, or a config outside today's space) is
  /// not an error: it is logged as a warning and the default is used.
  absl::StatusOr<KernelChoice> Choose(const KernelRequest& request, std::string* origin = nullptr);

  /// Chooses a config per kernel, builds them all into ONE shared library at `so_path` and
  /// writes a C header documenting each function to `header_path`. A range request gets kernels
  /// at the range's measured sizes (their logged configs) and at ShapeRange::KernelSizes (the
  /// config measured at the nearest measured size, when it is valid there; else the size's own
  /// choice), and one entry point over them (codegen/llvm/range_entry.h; the library then needs
  /// libtune_range.so). For a cuda or rocm target
  /// the library is a host library with the GPU host ABI (device pointers and a stream) that
  /// embeds one device module (codegen/gpu_library.h). Function names must be
  /// distinct C identifiers (InvalidArgument otherwise); unwritable paths are errors naming
  /// the path. Nothing is left at `so_path` or `header_path` when the build fails.
  absl::StatusOr<LibraryResult> BuildLibrary(const std::vector<KernelRequest>& requests,
                                             const std::string& so_path,
                                             const std::string& header_path);

 private:
  /// The GPU part of BuildLibrary (cuda / rocm targets): device code plus host stubs
  /// (codegen/gpu_library.h), with the same contract.
  absl::StatusOr<LibraryResult> BuildGpuLibrary(const std::vector<KernelRequest>& requests,
                                                const std::string& so_path,
                                                const std::string& header_path);

  /// Range requests, expanded: the plain requests first (in order), then every range's kernels
  /// (in order), with the entries that dispatch to them.
  struct ExpandedRequests {
    std::vector<KernelRequest> requests;
    size_t plain = 0;  // requests before the ranges' kernels
    std::vector<RangeEntry> entries;
    std::vector<LibraryRange> ranges;  // kernels filled in after the build
  };
  absl::StatusOr<ExpandedRequests> ExpandRanges(const std::vector<KernelRequest>& requests);
  /// The range entries' object, linked beside the kernels: adds its link arguments (the caller
  /// adds kRangeRuntimeLibrary to the needed libraries), and moves the ranges' kernels from
  /// result.kernels to result.ranges.
  absl::StatusOr<std::string> RangeObject(ExpandedRequests& expanded, LibraryResult& result,
                                          std::vector<std::string>& link_args);

  Catalog catalog_;
  Target target_;
  BestConfigLookup lookup_;
  MeasuredSizesLookup sizes_;
  LowerOptions lower_;
};

}  // namespace tune
