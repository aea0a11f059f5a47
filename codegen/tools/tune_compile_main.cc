// tune-compile: builds one shared library plus a C header from workloads, using the best
// configs recorded in a tuning log (or each template's default config when none is recorded).
// For a GPU target ('cuda -arch=sm_90', 'rocm -mcpu=gfx90a') the library is host code that
// embeds the device code and exports `int NAME(<device pointers>, void* stream)`; it links
// libtune_gpurt.so (build/lib or lib/ beside bin/, TUNE_RUNTIME_DIR).
//
//   tune-compile --db tuning.db --target 'llvm -mcpu=native -threads=1'
//       [--workload 'gemm:M=512,N=512,K=512']... [--name NAME]... [--config JSON]...
//       [--template NAME]... [--workloads-file model.txt] [--model resnet50|mobilenetv2|bert]
//       [--onnx model.onnx [--dim NAME=VALUE]...]
//       --out libkernels.so --header kernels.h [--print-ir-after-all] [--emit-llvm FILE]
//       [--log-level L]
//
// Kernels: the --workload ones first (--name / --config / --template apply to them by
// position), then every workload of --workloads-file (common/workload_list.h: one per line, an
// optional weight, which tune-compile ignores), of --model (a built-in list) and of --onnx (an
// ONNX model's Conv, Gemm and MatMul nodes, model_import/onnx_model.h; the nodes it cannot run
// are listed on stderr), in list order and with default names. A list's workload that an
// earlier --workload or list gives too is skipped: it is built once, as the first says. At least
// one of --workload, --workloads-file, --model and --onnx is required.
//
// Exit codes: 0 success, 1 build or I/O failure, 2 bad command line (malformed workload or
// target, unsupported target kind, bad names, a bad or missing workloads file or ONNX model, an
// unknown model).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "codegen/compiler.h"
#include "codegen/plugins/plugin.h"
#include "codegen/tools/tuning_log_lookup.h"
#include "common/extern_kernels.h"
#include "common/files.h"
#include "common/logging.h"
#include "common/shape_range.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/version.h"
#include "common/workload_list.h"
#include "db/tuning_log.h"
#include "model_import/onnx_model.h"

namespace tune {
namespace {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

struct Flags {
  std::string db;
  std::string target;
  std::vector<std::string> workloads;
  std::vector<std::string> names;
  std::vector<std::string> configs;
  std::vector<std::string> templates;
  std::string workloads_file;
  std::string model;
  std::string onnx;
  std::vector<std::string> dims;
  std::string out;
  std::string header;
  bool print_ir_after_all = false;
  std::string emit_llvm;
  std::string log_level;
  std::vector<std::string> extern_kernels;
  std::vector<std::string> codegen_plugins;
};

void Fail(std::string_view what) { fmt::print(stderr, "tune-compile: error: {}\n", what); }

// The requests from --workload, --name, --config and --template; a usage problem is
// InvalidArgument.
absl::StatusOr<std::vector<KernelRequest>> ParseExplicitRequests(const Flags& flags) {
  if (flags.configs.size() > flags.workloads.size()) {
    return absl::InvalidArgumentError(
        StrCat(flags.configs.size(), " --config values for ", flags.workloads.size(),
               " --workload values: give at most one config per workload, in the same order"));
  }
  if (flags.templates.size() > flags.workloads.size()) {
    return absl::InvalidArgumentError(
        StrCat(flags.templates.size(), " --template values for ", flags.workloads.size(),
               " --workload values: give at most one template per workload, in the same order"));
  }
  if (flags.names.size() > flags.workloads.size()) {
    return absl::InvalidArgumentError(
        StrCat(flags.names.size(), " --name values for ", flags.workloads.size(),
               " --workload values: give at most one name per workload, in the same order"));
  }
  std::vector<KernelRequest> requests;
  for (size_t i = 0; i < flags.workloads.size(); ++i) {
    std::optional<ShapeRange> range;
    if (ShapeRange::IsRange(flags.workloads[i])) {
      absl::StatusOr<ShapeRange> parsed = ShapeRange::Parse(flags.workloads[i]);
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(
            StrCat("--workload: ", std::string(parsed.status().message())));
      }
      range = *std::move(parsed);
    }
    absl::StatusOr<Workload> workload =
        range ? range->At(range->hi()) : Workload::Parse(flags.workloads[i]);
    if (!workload.ok()) {
      return absl::InvalidArgumentError(
          StrCat("--workload: ", std::string(workload.status().message())));
    }
    KernelRequest request{*workload, "", std::nullopt, "", range};
    if (i < flags.names.size()) {
      if (!IsCIdentifier(flags.names[i])) {
        return absl::InvalidArgumentError(
            StrCat("--name '", flags.names[i], "' is not a C identifier ([A-Za-z_][A-Za-z0-9_]*)"));
      }
      request.func_name = flags.names[i];
    }
    if (i < flags.configs.size() && !flags.configs[i].empty()) {
      absl::StatusOr<Config> config = ParseConfig(flags.configs[i]);
      if (!config.ok()) {
        return absl::InvalidArgumentError(
            StrCat("--config '", flags.configs[i], "': ", std::string(config.status().message())));
      }
      request.config = *std::move(config);
    }
    if (i < flags.templates.size()) {
      request.template_name = flags.templates[i];
    }
    requests.push_back(std::move(request));
  }
  return requests;
}

// Appends a request with the default name and config choice for each workload of `list` that
// no earlier request names (an explicit --workload keeps its name, config and template).
void AppendListRequests(const std::vector<WeightedWorkload>& list,
                        std::vector<KernelRequest>* requests) {
  std::set<std::string> seen;
  for (const KernelRequest& request : *requests) {
    if (!request.range) {
      seen.insert(request.workload.ToString());
    }
  }
  for (const WeightedWorkload& entry : list) {
    if (seen.insert(entry.workload.ToString()).second) {
      requests->push_back(KernelRequest{entry.workload, "", std::nullopt, ""});
    }
  }
}

// Every kernel of the library: the explicit workloads, then --workloads-file's, then --model's.
// Any problem, a missing or malformed file included, is InvalidArgument (a usage error).
absl::StatusOr<std::vector<KernelRequest>> ParseRequests(const Flags& flags) {
  ASSIGN_OR_RETURN(std::vector<KernelRequest> requests, ParseExplicitRequests(flags));
  if (!flags.workloads_file.empty()) {
    absl::StatusOr<std::vector<WeightedWorkload>> list = ReadWorkloadList(flags.workloads_file);
    if (!list.ok()) {
      // A bad line already reads "FILE:LINE: ..."; a file that cannot be read says only why.
      return absl::InvalidArgumentError(
          list.status().code() == absl::StatusCode::kInvalidArgument
              ? std::string(list.status().message())
              : StrCat("--workloads-file: ", list.status().message()));
    }
    AppendListRequests(*list, &requests);
  }
  if (!flags.model.empty()) {
    absl::StatusOr<std::vector<WeightedWorkload>> list = BuiltinModel(flags.model);
    if (!list.ok()) {
      return absl::InvalidArgumentError(StrCat("--model: ", list.status().message()));
    }
    AppendListRequests(*list, &requests);
  }
  if (!flags.onnx.empty()) {
    ASSIGN_OR_RETURN(OnnxImportOptions options, OnnxOptionsFromDims(flags.dims));
    absl::StatusOr<OnnxWorkloads> model = ReadOnnxModel(flags.onnx, options);
    if (!model.ok()) {
      return absl::InvalidArgumentError(StrCat("--onnx: ", model.status().message()));
    }
    for (const OnnxSkippedNode& s : model->skipped) {
      fmt::print(stderr, "tune-compile: {}: skipped {}\n", flags.onnx, Describe(s));
    }
    AppendListRequests(model->workloads, &requests);
  }
  if (requests.empty()) {
    return absl::InvalidArgumentError(
        "no workload: give at least one --workload, --workloads-file, --model or --onnx");
  }
  return requests;
}

// The lookups over --db, or none when --db is not given or names no file yet.
struct Lookups {
  BestConfigLookup best;
  MeasuredSizesLookup sizes;
};
absl::StatusOr<Lookups> OpenLookup(const std::string& db, const Catalog& catalog) {
  if (db.empty()) {
    fmt::print(stderr, "tune-compile: no --db given: every kernel uses its default config\n");
    return Lookups();
  }
  if (!std::filesystem::exists(db)) {
    fmt::print(stderr,
               "tune-compile: tuning log {} does not exist: every kernel uses its default "
               "config\n",
               db);
    return Lookups();
  }
  ASSIGN_OR_RETURN(std::unique_ptr<TuningLog> opened,
                   TuningLog::Open(db, TuningLog::Mode::kReadOnly));
  std::shared_ptr<TuningLog> log(std::move(opened));
  return Lookups{TuningLogLookup(log, catalog), TuningLogSizes(log)};
}

int Run(const Flags& flags) {
  if (absl::Status s = InitLogging(flags.log_level); !s.ok()) {
    Fail(std::string(s.message()));
    return kExitUsage;
  }
  absl::StatusOr<std::vector<ExternKernel>> kernels = LoadExternKernels(flags.extern_kernels);
  if (!kernels.ok()) {
    Fail(StrCat("--extern-kernels: ", std::string(kernels.status().message())));
    return kExitUsage;
  }
  absl::StatusOr<Catalog> catalog =
      WithCodegenPlugins(Catalog().WithExternKernels(*std::move(kernels)), flags.codegen_plugins);
  if (!catalog.ok()) {
    Fail(StrCat("--codegen-plugin: ", std::string(catalog.status().message())));
    return kExitUsage;
  }
  absl::StatusOr<Target> target = catalog->ParseTarget(flags.target);
  if (!target.ok()) {
    Fail(StrCat("--target: ", std::string(target.status().message())));
    return kExitUsage;
  }
  absl::StatusOr<std::vector<KernelRequest>> requests = ParseRequests(flags);
  if (!requests.ok()) {
    Fail(std::string(requests.status().message()));
    return kExitUsage;
  }
  absl::StatusOr<Lookups> lookup = OpenLookup(flags.db, *catalog);
  if (!lookup.ok()) {
    Fail(StrCat("--db: ", std::string(lookup.status().message())));
    return kExitFailure;
  }

  LowerOptions lower;
  if (flags.print_ir_after_all) {
    lower.after_stage = [](std::string_view stage, const std::string& text) {
      fmt::print(stderr, "// ----- IR after {} -----\n{}\n", stage, text);
    };
  }
  Compiler compiler(*catalog, *target, lookup->best, std::move(lower));
  compiler.SetMeasuredSizes(lookup->sizes);
  absl::StatusOr<LibraryResult> result = compiler.BuildLibrary(*requests, flags.out, flags.header);
  if (!result.ok()) {
    Fail(std::string(result.status().message()));
    return result.status().code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  for (const LibraryKernel& k : result->kernels) {
    fmt::print(stderr, "tune-compile: {} = {}: {} v{} {} ({})\n", k.func_name,
               k.workload.ToString(), k.choice.template_name, k.choice.template_version,
               ConfigToString(k.choice.config), k.origin);
  }
  for (const LibraryRange& r : result->ranges) {
    std::vector<std::string> measured;
    for (int64_t size : r.measured) {
      measured.push_back(StrCat(size));
    }
    fmt::print(stderr, "tune-compile: {} = {}: {} kernels, tuned at {}\n", r.func_name,
               r.range.ToString(), r.kernels.size(),
               measured.empty() ? "no size (the log has none: default configs)"
                                : StrCat(r.range.dim(), "=", Join(measured, ",")));
    for (const LibraryKernel& k : r.kernels) {
      fmt::print(stderr, "tune-compile:   {}: {} v{} {} ({})\n", k.func_name,
                 k.choice.template_name, k.choice.template_version, ConfigToString(k.choice.config),
                 k.origin);
    }
  }
  if (!flags.emit_llvm.empty()) {
    if (absl::Status s = WriteFileAtomically(flags.emit_llvm, result->llvm_ir); !s.ok()) {
      Fail(StrCat("--emit-llvm: ", s.message()));
      return kExitFailure;
    }
  }
  fmt::print(stderr, "tune-compile: wrote {} and {}{}\n", result->so_path, result->header_path,
             result->needed_libs.empty()
                 ? ""
                 : StrCat(" (needs ", Join(result->needed_libs, ", "), " at run time)"));
  return 0;
}

}  // namespace
}  // namespace tune

int main(int argc, char** argv) {
  tune::Flags flags;
  CLI::App app{
      "tune-compile: builds a kernel library (shared object + C header) from the best "
      "configs in a tuning log"};
  app.set_version_flag("--version", std::string(tune::kTuneVersion));
  app.add_option("--db", flags.db,
                 "SQLite tuning log to take the best configs from (optional; without it, or "
                 "when the file does not exist, each kernel uses its template's default config)");
  app.add_option("--target", flags.target,
                 "target, e.g. 'llvm -mcpu=native -threads=1', 'cuda -arch=sm_90' or "
                 "'rocm -mcpu=gfx90a'. GPU targets build a host library that embeds the device "
                 "code (PTX / HSA code object), takes device pointers and a stream (void*, NULL = "
                 "the default stream) after them, and links libtune_gpurt.so")
      ->required();
  app.add_option("--workload", flags.workloads,
                 "workload, e.g. 'gemm:M=512,N=512,K=512' or "
                 "'conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1' (repeatable; these "
                 "come first in the library), or a shape range, e.g. "
                 "'gemm:M=1..4096,N=4096,K=4096': one function taking the size first "
                 "(int64_t), over kernels at the sizes the log measured and between them");
  app.add_option("--workloads-file", flags.workloads_file,
                 "a model's workloads file: one workload per line, optionally followed by a "
                 "weight (ignored here), '#' comments. Each workload becomes a kernel with its "
                 "default name, after the --workload ones; one given with --workload too is "
                 "built once, as --workload says");
  app.add_option("--model", flags.model,
                 tune::StrCat("a built-in model's workloads, like --workloads-file: ",
                              tune::Join(tune::BuiltinModelNames(), ", ")));
  auto* onnx_opt = app.add_option(
      "--onnx", flags.onnx,
      "an ONNX model's Conv, Gemm and MatMul nodes, like --workloads-file (what `tune-client "
      "onnx MODEL` prints); the nodes tune cannot run are listed on stderr");
  app.add_option("--dim", flags.dims,
                 "with --onnx: NAME=VALUE, the size of a symbolic dimension of the model's inputs "
                 "(repeatable), e.g. batch=1")
      ->needs(onnx_opt);
  app.add_option("--name", flags.names,
                 "C function name of the --workload at the same position (repeatable; default "
                 "derived from the workload, e.g. tune_gemm_M512_N512_K512)");
  app.add_option("--config", flags.configs,
                 "config of the --workload at the same position instead of the tuning log's, as "
                 "its JSON text, e.g. '{\"kc\":256,...}'; '' keeps the usual choice (repeatable)");
  app.add_option("--template", flags.templates,
                 "schedule template of the --workload at the same position, e.g. gemm.cpu.blocked "
                 "('' keeps the usual choice; repeatable): its best record, or with --config that "
                 "config of it");
  app.add_option("--out", flags.out, "shared library to write")->required();
  app.add_option("--header", flags.header, "C header to write")->required();
  app.add_flag("--print-ir-after-all", flags.print_ir_after_all,
               "print the loop IR after every lowering stage to stderr");
  app.add_option("--emit-llvm", flags.emit_llvm, "also write the optimised LLVM IR to FILE");
  app.add_option("--codegen-plugin", flags.codegen_plugins,
                 "a codegen plugin executable whose families the tuning log may name; it builds "
                 "their kernels again (repeatable)");
  app.add_option("--extern-kernels", flags.extern_kernels,
                 "a micro-kernel manifest (JSON) that -libs=<its name> in --target refers to; "
                 "repeatable. The library calls it without linking it: load it first");
  app.add_option("--log-level", flags.log_level,
                 "trace, debug, info, warn, error, critical or off (default: TUNE_LOG_LEVEL or "
                 "info)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return tune::kExitUsage;
  }
  return tune::Run(flags);
}
