#include "codegen/templates/ukernel_templates.h"

#include <algorithm>
#include <functional>

#include "codegen/templates/cpu_vector_info.h"
#include "codegen/templates/library_call.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

using ir::Allocate;
using ir::Block;
using ir::Buffer;
using ir::Expr;
using ir::For;
using ir::IfThenElse;
using ir::LetStmt;
using ir::Load;
using ir::LoopKind;
using ir::MemoryScope;
using ir::Stmt;
using ir::Store;
using ir::Var;

int64_t RoundUp(int64_t v, int64_t to) { return (v + to - 1) / to * to; }
using ::tune::CeilDiv;
Expr CeilDiv(Expr a, int64_t b) { return (a + (b - 1)) / b; }

// A GEMM C[m][n] (+)= A[m][k] x B[k][n] as the blocking sees it: how to read A, how to pack one
// element of B, where C is, and what the epilogue does to a finished element.
struct GemmView {
  int64_t m = 0, n = 0, k = 0;
  std::function<Expr(Expr row, Expr col)> a;
  std::function<Stmt(const Buffer& dst, Expr index, Expr kk, Expr col)> pack_b;
  Buffer c;
  Expr c_offset = Expr(int64_t{0});
  int64_t ldc = 0;
  std::function<Expr(Expr value, Expr row, Expr col)> epilogue;  // null: none
};

struct Blocking {
  int64_t mc = 0, nc = 0, kc = 0;
  int order = 0;  // 0: column blocks outside reduction blocks; 1: the reverse
  bool parallel = false;
};

Expr MinE(Expr a, Expr b) { return ir::Min::Make(std::move(a), std::move(b)); }

Stmt BlockedGemm(const GemmView& g, const ExternKernel& uk, const Blocking& b,
                 const std::string& prefix) {
  const int64_t mr = uk.mr, nr = uk.nr;
  Buffer b_packed(prefix + "B_packed", MemoryScope::kStack);
  Buffer a_packed(prefix + "A_packed", MemoryScope::kStack);
  Buffer scratch(prefix + "C_edge", MemoryScope::kStack);
  Var jb(prefix + "jb"), pb(prefix + "pb"), ib(prefix + "ib"), jp(prefix + "jp"), ip(prefix + "ip"),
      pp(prefix + "pp"), i(prefix + "i"), j(prefix + "j");
  Var ncur(prefix + "ncur"), kcur(prefix + "kcur"), mcur(prefix + "mcur"), rows(prefix + "rows"),
      cols(prefix + "cols");
  Expr jc = jb * b.nc, pc = pb * b.kc, ic = ib * b.mc;
  const int64_t k_blocks = CeilDiv(g.k, b.kc);

  // B[pc .. pc+kcur)[jc .. jc+ncur) -> panels of kc x nr, zero beyond n.
  Expr col = jc + jp * nr + j;
  Stmt pack_b = For::Make(
      jp, 0, CeilDiv(Expr(ncur), nr), LoopKind::kSerial,
      For::Make(
          pp, 0, kcur, LoopKind::kSerial,
          For::Make(j, 0, nr, LoopKind::kSerial,
                    IfThenElse::Make(
                        col < g.n, g.pack_b(b_packed, (jp * b.kc + pp) * nr + j, pc + pp, col),
                        Store::Make(b_packed, (jp * b.kc + pp) * nr + j, Expr(0.0f))))));
  // A[ic .. ic+mcur)[pc .. pc+kcur) -> panels of kc x mr, zero beyond m.
  Expr row = ic + ip * mr + i;
  Stmt pack_a = For::Make(
      ip, 0, CeilDiv(Expr(mcur), mr), LoopKind::kSerial,
      For::Make(
          pp, 0, kcur, LoopKind::kSerial,
          For::Make(i, 0, mr, LoopKind::kSerial,
                    Store::Make(a_packed, (ip * b.kc + pp) * mr + i,
                                ir::Select::Make(row < g.m, g.a(row, pc + pp), Expr(0.0f))))));

  // One mr x nr block of C.
  Expr r0 = ic + ip * mr, c0 = jc + jp * nr;
  auto c_index = [&](Expr r, Expr c) { return g.c_offset + r * g.ldc + c; };
  Expr accumulate = ir::Select::Make(pb > 0, I32(1), I32(0));
  auto call = [&](Expr c_ptr, Expr ldc, Expr acc) {
    // The role's C function returns void: called as returning int32, whose value is ignored
    // (the same call on x86-64 and AArch64).
    return ir::Evaluate::Make(
        ir::CallExtern::Make(ir::Type::Int32(), uk.symbol,
                             {Expr(kcur), Ptr(a_packed, ip * (b.kc * mr)),
                              Ptr(b_packed, jp * (b.kc * nr)), c_ptr, ldc, acc}));
  };
  Var ei(prefix + "ei"), ej(prefix + "ej");
  Expr cij = c_index(r0 + ei, c0 + ej);
  Stmt copy_out =
      For::Make(ei, 0, rows, LoopKind::kSerial,
                For::Make(ej, 0, cols, LoopKind::kSerial,
                          Store::Make(g.c, cij,
                                      ir::Select::Make(pb > 0, Load::Make(g.c, cij), Expr(0.0f)) +
                                          Load::Make(scratch, ei * nr + ej))));
  Stmt whole = call(Ptr(g.c, c_index(r0, c0)), Expr(g.ldc), accumulate);
  Stmt edge = Block::Make({call(Ptr(scratch), Expr(nr), I32(0)), copy_out});
  std::vector<Stmt> tile = {IfThenElse::Make(Expr(rows) == mr && Expr(cols) == nr, whole, edge)};
  if (g.epilogue) {
    Stmt finish = For::Make(
        ei, 0, rows, LoopKind::kSerial,
        For::Make(ej, 0, cols, LoopKind::kSerial,
                  Store::Make(g.c, cij, g.epilogue(Load::Make(g.c, cij), r0 + ei, c0 + ej))));
    tile.push_back(IfThenElse::Make(Expr(pb) == k_blocks - 1, finish));
  }
  Stmt block =
      LetStmt::Make(rows, MinE(Expr(mr), g.m - r0),
                    LetStmt::Make(cols, MinE(Expr(nr), g.n - c0), Block::Make(std::move(tile))));
  Stmt blocks = For::Make(jp, 0, CeilDiv(Expr(ncur), nr), LoopKind::kSerial,
                          For::Make(ip, 0, CeilDiv(Expr(mcur), mr), LoopKind::kSerial,
                                    Allocate::Make(scratch, mr * nr, block)));

  // Row blocks: A packed per block (private to the thread when the loop is parallel).
  Stmt row_blocks = For::Make(
      ib, 0, CeilDiv(g.m, b.mc), b.parallel ? LoopKind::kParallel : LoopKind::kSerial,
      LetStmt::Make(
          mcur, MinE(Expr(b.mc), g.m - ic),
          Allocate::Make(a_packed, RoundUp(b.mc, mr) * b.kc, Block::Make({pack_a, blocks}))));
  Stmt inner = Block::Make({pack_b, row_blocks});
  Stmt column_then_reduction =
      For::Make(jb, 0, CeilDiv(g.n, b.nc), LoopKind::kSerial,
                LetStmt::Make(ncur, MinE(Expr(b.nc), g.n - jc),
                              For::Make(pb, 0, k_blocks, LoopKind::kSerial,
                                        LetStmt::Make(kcur, MinE(Expr(b.kc), g.k - pc), inner))));
  Stmt reduction_then_column =
      For::Make(pb, 0, k_blocks, LoopKind::kSerial,
                LetStmt::Make(kcur, MinE(Expr(b.kc), g.k - pc),
                              For::Make(jb, 0, CeilDiv(g.n, b.nc), LoopKind::kSerial,
                                        LetStmt::Make(ncur, MinE(Expr(b.nc), g.n - jc), inner))));
  return Allocate::Make(b_packed, RoundUp(b.nc, nr) * b.kc,
                        b.order == 0 ? column_then_reduction : reduction_then_column);
}

// --- spaces -----------------------------------------------------------------------------------

ConfigSpace UkernelSpace(int64_t m, int64_t n, int64_t k, const ExternKernel* uk) {
  ConfigSpace space;
  const int64_t mr = uk != nullptr ? uk->mr : 1, nr = uk != nullptr ? uk->nr : 1;
  std::vector<int64_t> mcs, ncs;
  for (int64_t f : {1, 2, 4, 6, 8, 12, 16, 24, 32}) {
    mcs.push_back(mr * f);
  }
  for (int64_t f : {1, 2, 4, 8, 16, 32, 64}) {
    ncs.push_back(nr * f);
  }
  space.AddKnob("mc", AtMost(mcs, RoundUp(m, mr), mr),
                "rows of A packed per block (a multiple of the micro-kernel's mr)");
  space.AddKnob("nc", AtMost(ncs, RoundUp(n, nr), nr),
                "columns of B packed per block (a multiple of the micro-kernel's nr)");
  space.AddKnob("kc", ClipToExtent({32, 64, 128, 256, 384, 512}, k),
                "reduction depth of a packed panel");
  space.AddKnob("order", {0, 1},
                "0: column blocks outside reduction blocks; 1: reduction blocks outside");
  return space;
}

Config UkernelDefault(const ConfigSpace& space) {
  Config config;
  config["mc"] = LargestAtMost(space.FindKnob("mc")->values, 96);
  config["nc"] = LargestAtMost(space.FindKnob("nc")->values, 512);
  config["kc"] = LargestAtMost(space.FindKnob("kc")->values, 256);
  config["order"] = 0;
  return config;
}

Blocking BlockingOf(const Config& config, const Target& target) {
  return Blocking{KnobValue(config, "mc"), KnobValue(config, "nc"), KnobValue(config, "kc"),
                  static_cast<int>(KnobValue(config, "order")), target.threads > 1};
}

absl::Status NeedUkernel(const UkernelTemplates& set, const KernelTemplate& tpl,
                         const Target& target) {
  if (set.UkernelOf(target) == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("template ", tpl.name,
               " needs a target that names an installed micro-kernel in -libs= "
               "(tune-daemon/tune-compile --extern-kernels FILE.json) and a CPU with its ISA; '",
               target.ToString(), "' does not"));
  }
  return absl::OkStatus();
}

// --- gemm.cpu.ukernel -------------------------------------------------------------------------

ConfigSpace GemmSpace(const UkernelTemplates& set, const Workload& workload, const Target& target) {
  const GemmShape& g = workload.gemm();
  return UkernelSpace(g.m, g.n, g.k, set.UkernelOf(target));
}

absl::StatusOr<ir::LoweredFunc> BuildGemm(const UkernelTemplates& set, const Workload& workload,
                                          const Target& target, const Config& config,
                                          std::string_view func_name) {
  RETURN_IF_ERROR(NeedUkernel(set, set.gemm(), target));
  RETURN_IF_ERROR(CheckBuildRequest(set.gemm(), workload, target, config));
  const ExternKernel& uk = *set.UkernelOf(target);
  const GemmShape& s = workload.gemm();
  std::vector<Buffer> params = KernelParams(workload);
  const Buffer a = params[0], b = params[1], c = params.back();
  GemmView view;
  view.m = s.m;
  view.n = s.n;
  view.k = s.k;
  view.a = [&](Expr row, Expr col) { return Load::Make(a, row * s.k + col); };
  view.pack_b = [&](const Buffer& dst, Expr index, Expr kk, Expr col) {
    return Store::Make(dst, index, Load::Make(b, kk * s.n + col));
  };
  view.c = c;
  view.ldc = s.n;
  if (workload.epilogue() != Epilogue::kNone) {
    const Buffer bias = EpilogueHasBias(workload.epilogue()) ? params[2] : c;
    const Epilogue e = workload.epilogue();
    view.epilogue = [bias, e](Expr value, Expr, Expr col) {
      return ApplyEpilogue(e, value, EpilogueHasBias(e) ? Load::Make(bias, col) : Expr(0.0f));
    };
  }
  ir::LoweredFunc func;
  func.name = std::string(func_name);
  func.body = BlockedGemm(view, uk, BlockingOf(config, target), "");
  func.params = std::move(params);
  func.external_libs = {uk.library_file};
  return func;
}

// --- conv2d.cpu.ukernel -----------------------------------------------------------------------

ConfigSpace ConvSpace(const UkernelTemplates& set, const Workload& workload, const Target& target) {
  const Conv2dShape& s = workload.conv2d();
  return UkernelSpace(s.k, s.p() * s.q(), s.c * s.r * s.s, set.UkernelOf(target));
}

absl::StatusOr<ir::LoweredFunc> BuildConv(const UkernelTemplates& set, const Workload& workload,
                                          const Target& target, const Config& config,
                                          std::string_view func_name) {
  RETURN_IF_ERROR(NeedUkernel(set, set.conv2d(), target));
  RETURN_IF_ERROR(CheckBuildRequest(set.conv2d(), workload, target, config));
  const ExternKernel& uk = *set.UkernelOf(target);
  const Conv2dShape& s = workload.conv2d();
  const int64_t p = s.p(), q = s.q(), pq = p * q, crs = s.c * s.r * s.s;
  if (p < 1 || q < 1) {
    return absl::InvalidArgumentError(
        StrCat("workload '", workload.ToString(), "' has an empty output"));
  }
  std::vector<Buffer> params = KernelParams(workload);
  const Buffer input = params[0], weight = params[1], out = params.back();
  Var img("img");
  GemmView view;
  view.m = s.k;
  view.n = pq;
  view.k = crs;
  view.a = [&](Expr row, Expr col) { return Load::Make(weight, row * crs + col); };
  view.pack_b = [&](const Buffer& dst, Expr index, Expr kk, Expr col) {
    return StoreIm2colElement(dst, index, input, s, img, kk, col);
  };
  view.c = out;
  view.c_offset = img * (s.k * pq);
  view.ldc = pq;
  if (workload.epilogue() != Epilogue::kNone) {
    const Buffer bias = EpilogueHasBias(workload.epilogue()) ? params[2] : out;
    const Epilogue e = workload.epilogue();
    view.epilogue = [bias, e](Expr value, Expr row, Expr) {
      return ApplyEpilogue(e, value, EpilogueHasBias(e) ? Load::Make(bias, row) : Expr(0.0f));
    };
  }
  ir::LoweredFunc func;
  func.name = std::string(func_name);
  func.body = For::Make(img, 0, s.n, LoopKind::kSerial,
                        BlockedGemm(view, uk, BlockingOf(config, target), ""));
  func.params = std::move(params);
  func.external_libs = {uk.library_file};
  return func;
}

}  // namespace

UkernelTemplates::UkernelTemplates(std::vector<ExternKernel> kernels)
    : kernels_(std::move(kernels)) {
  gemm_ = {
      .name = "gemm.cpu.ukernel",
      .version = 1,
      .op = OpKind::kGemm,
      .targets = TemplateTargets::kLlvm,
      .space = [this](const Workload& w, const Target& t) { return GemmSpace(*this, w, t); },
      .default_config = [this](const Workload& w,
                               const Target& t) { return UkernelDefault(GemmSpace(*this, w, t)); },
      .build = [this](const Workload& w, const Target& t, const Config& c,
                      std::string_view name) { return BuildGemm(*this, w, t, c, name); },
      .uses_extern_kernel = true,
  };
  conv2d_ = {
      .name = "conv2d.cpu.ukernel",
      .version = 1,
      .op = OpKind::kConv2d,
      .targets = TemplateTargets::kLlvm,
      .space = [this](const Workload& w, const Target& t) { return ConvSpace(*this, w, t); },
      .default_config = [this](const Workload& w,
                               const Target& t) { return UkernelDefault(ConvSpace(*this, w, t)); },
      .build = [this](const Workload& w, const Target& t, const Config& c,
                      std::string_view name) { return BuildConv(*this, w, t, c, name); },
      .uses_extern_kernel = true,
  };
}

const ExternKernel* UkernelTemplates::Find(std::string_view name) const {
  for (const ExternKernel& k : kernels_) {
    if (k.name == name) {
      return &k;
    }
  }
  return nullptr;
}

const ExternKernel* UkernelTemplates::UkernelOf(const Target& target) const {
  if (target.kind != TargetKind::kLlvm) {
    return nullptr;
  }
  for (const std::string& lib : target.libs) {
    if (const ExternKernel* k = Find(lib); k != nullptr) {
      const CpuVectorInfo cpu = CpuVectorInfoFor(target);
      const bool has_isa = k->isa == "avx512f" ? cpu.lanes >= 16 : cpu.lanes >= 8 && cpu.fma;
      return has_isa ? k : nullptr;
    }
  }
  return nullptr;
}

}  // namespace tune
