#include "tests/fault/fault_templates.h"

#include <chrono>
#include <cstdlib>
#include <thread>

#include "absl/status/status.h"
#include "codegen/ir/ir.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune::tuner {
namespace {

enum class Fault { kCrash, kHang, kWrong, kSlow, kExternCall, kBuildCrash, kBuildHang };

// The template that a fault template wraps: the first built-in one for the workload and target.
absl::StatusOr<const KernelTemplate*> Wrapped(const Workload& workload, const Target& target) {
  std::vector<const KernelTemplate*> real = Catalog::BuiltIn().TemplatesFor(workload, target);
  if (real.empty()) {
    return absl::InvalidArgumentError(
        StrCat("no template builds '", workload.ToString(), "' for '", target.ToString(), "'"));
  }
  return real.front();
}

ConfigSpace Space(const Workload& workload, const Target& target) {
  absl::StatusOr<const KernelTemplate*> tpl = Wrapped(workload, target);
  if (!tpl.ok()) {
    return ConfigSpace();
  }
  return (*tpl)->space(workload, target);
}

Config DefaultConfig(const Workload& workload, const Target& target) {
  absl::StatusOr<const KernelTemplate*> tpl = Wrapped(workload, target);
  if (!tpl.ok()) {
    return Config();
  }
  return (*tpl)->default_config(workload, target);
}

template <Fault kFault>
absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  if constexpr (kFault == Fault::kBuildCrash) {
    std::abort();  // as an LLVM fatal error or a failed check in a template would
  }
  if constexpr (kFault == Fault::kBuildHang) {
    while (true) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
  ASSIGN_OR_RETURN(const KernelTemplate* tpl, Wrapped(workload, target));
  ASSIGN_OR_RETURN(ir::LoweredFunc func, tpl->build(workload, target, config, func_name));
  const ir::Buffer& out = func.params.back();
  const int64_t n = workload.Arguments().back().NumElements();
  switch (kFault) {
    case Fault::kWrong: {
      ir::Stmt bump = ir::Store::Make(out, ir::Expr(int64_t{0}),
                                      ir::Load::Make(out, ir::Expr(int64_t{0})) + ir::Expr(1.0f));
      func.body = ir::Block::Make({func.body, bump});
      break;
    }
    case Fault::kSlow: {
      ir::Stmt nap = ir::Evaluate::Make(
          ir::CallExtern::Make(ir::Type::Int32(), "usleep",
                               {ir::Cast::Make(ir::Type::Int32(), ir::Expr(kFaultSlowMicros))}));
      func.body = ir::Block::Make({nap, func.body});
      break;
    }
    case Fault::kExternCall: {
      if (workload.op() != OpKind::kGemm || func.params.size() != 3) {
        return absl::InvalidArgumentError("fault.extern_call builds plain GEMM only");
      }
      auto dim = [](int64_t extent) { return ir::Cast::Make(ir::Type::Int32(), ir::Expr(extent)); };
      ir::Expr call = ir::CallExtern::Make(
          ir::Type::Int32(), std::string(kFaultExternSymbol),
          {ir::AddressOf::Make(func.params[0], ir::Expr(int64_t{0})),
           ir::AddressOf::Make(func.params[1], ir::Expr(int64_t{0})),
           ir::AddressOf::Make(func.params[2], ir::Expr(int64_t{0})), dim(workload.gemm().m),
           dim(workload.gemm().n), dim(workload.gemm().k)});
      func.body = ir::Evaluate::Make(call);
      func.external_libs = {std::string(kFaultExternLibrary)};
      break;
    }
    case Fault::kBuildCrash:
    case Fault::kBuildHang:
    case Fault::kCrash: {
      // 4 TiB below the output: unmapped in every x86-64 process layout.
      ir::Stmt poke = ir::Store::Make(out, ir::Expr(-(int64_t{1} << 40)), ir::Expr(1.0f));
      func.body = ir::Block::Make({poke, func.body});
      break;
    }
    case Fault::kHang: {
      // Each iteration depends on the previous one through memory, so no optimiser removes it.
      ir::Var i("fault_i");
      ir::Stmt step = ir::Store::Make(
          out, i % ir::Expr(n),
          ir::Load::Make(out, (i + ir::Expr(int64_t{1})) % ir::Expr(n)) + ir::Expr(1.0f));
      ir::Stmt spin = ir::For::Make(i, ir::Expr(int64_t{0}), ir::Expr(int64_t{1} << 50),
                                    ir::LoopKind::kSerial, step);
      func.body = ir::Block::Make({func.body, spin});
      break;
    }
  }
  return func;
}

// A fault template: offered to no job that does not name it, and described to the cost model by
// its knobs (its builds may abort or hang).
KernelTemplate FaultTemplate(std::string_view name, OpKind op, KernelTemplate::BuildFn build) {
  return KernelTemplate{.name = name,
                        .version = 1,
                        .op = op,
                        .targets = TemplateTargets::kLlvm,
                        .space = &Space,
                        .default_config = &DefaultConfig,
                        .build = std::move(build),
                        .offered = false,
                        .ir_features = false};
}

// Each fault for GEMM and conv2d, in the order of FaultTemplateNames().
const std::vector<KernelTemplate>& Table() {
  static const auto* const table = new std::vector<KernelTemplate>{
      FaultTemplate(kFaultCrashTemplate, OpKind::kGemm, &Build<Fault::kCrash>),
      FaultTemplate(kFaultCrashTemplate, OpKind::kConv2d, &Build<Fault::kCrash>),
      FaultTemplate(kFaultHangTemplate, OpKind::kGemm, &Build<Fault::kHang>),
      FaultTemplate(kFaultHangTemplate, OpKind::kConv2d, &Build<Fault::kHang>),
      FaultTemplate(kFaultWrongTemplate, OpKind::kGemm, &Build<Fault::kWrong>),
      FaultTemplate(kFaultWrongTemplate, OpKind::kConv2d, &Build<Fault::kWrong>),
      FaultTemplate(kFaultSlowTemplate, OpKind::kGemm, &Build<Fault::kSlow>),
      FaultTemplate(kFaultSlowTemplate, OpKind::kConv2d, &Build<Fault::kSlow>),
      FaultTemplate(kFaultExternCallTemplate, OpKind::kGemm, &Build<Fault::kExternCall>),
      FaultTemplate(kFaultExternCallTemplate, OpKind::kConv2d, &Build<Fault::kExternCall>),
      FaultTemplate(kFaultBuildCrashTemplate, OpKind::kGemm, &Build<Fault::kBuildCrash>),
      FaultTemplate(kFaultBuildCrashTemplate, OpKind::kConv2d, &Build<Fault::kBuildCrash>),
      FaultTemplate(kFaultBuildHangTemplate, OpKind::kGemm, &Build<Fault::kBuildHang>),
      FaultTemplate(kFaultBuildHangTemplate, OpKind::kConv2d, &Build<Fault::kBuildHang>),
  };
  return *table;
}

}  // namespace

std::vector<const KernelTemplate*> FaultTemplates() {
  std::vector<const KernelTemplate*> out;
  for (const KernelTemplate& t : Table()) {
    out.push_back(&t);
  }
  return out;
}

const KernelTemplate* FindFaultTemplate(std::string_view name, OpKind op) {
  for (const KernelTemplate& t : Table()) {
    if (t.name == name && t.op == op) {
      return &t;
    }
  }
  return nullptr;
}

std::vector<std::string_view> FaultTemplateNames() {
  return {kFaultCrashTemplate,    kFaultHangTemplate,       kFaultWrongTemplate,
          kFaultSlowTemplate,     kFaultExternCallTemplate, kFaultBuildCrashTemplate,
          kFaultBuildHangTemplate};
}

}  // namespace tune::tuner
