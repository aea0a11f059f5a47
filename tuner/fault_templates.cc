#include "tuner/fault_templates.h"

#include "absl/status/status.h"
#include "codegen/ir/ir.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune::tuner {
namespace {

enum class Fault { kCrash, kHang };

// The template that a fault template wraps: the first real one for the workload and target.
absl::StatusOr<const KernelTemplate*> Wrapped(const Workload& workload, const Target& target) {
  std::vector<const KernelTemplate*> real = TemplatesFor(workload, target);
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
  ASSIGN_OR_RETURN(const KernelTemplate* tpl, Wrapped(workload, target));
  ASSIGN_OR_RETURN(ir::LoweredFunc func, tpl->build(workload, target, config, func_name));
  const ir::Buffer& out = func.params.back();
  const int64_t n = workload.Arguments().back().NumElements();
  switch (kFault) {
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

constexpr KernelTemplate kGemmCrash{kFaultCrashTemplate, 1,     OpKind::kGemm,
                                    TargetKind::kLlvm,   Space, DefaultConfig,
                                    Build<Fault::kCrash>};
constexpr KernelTemplate kConvCrash{kFaultCrashTemplate, 1,     OpKind::kConv2d,
                                    TargetKind::kLlvm,   Space, DefaultConfig,
                                    Build<Fault::kCrash>};
constexpr KernelTemplate kGemmHang{kFaultHangTemplate, 1,     OpKind::kGemm,
                                   TargetKind::kLlvm,  Space, DefaultConfig,
                                   Build<Fault::kHang>};
constexpr KernelTemplate kConvHang{kFaultHangTemplate, 1,     OpKind::kConv2d,
                                   TargetKind::kLlvm,  Space, DefaultConfig,
                                   Build<Fault::kHang>};

}  // namespace

const KernelTemplate* FindFaultTemplate(std::string_view name, OpKind op) {
  for (const KernelTemplate* t : {&kGemmCrash, &kConvCrash, &kGemmHang, &kConvHang}) {
    if (t->name == name && t->op == op) {
      return t;
    }
  }
  return nullptr;
}

std::vector<std::string_view> FaultTemplateNames() {
  return {kFaultCrashTemplate, kFaultHangTemplate};
}

}  // namespace tune::tuner
