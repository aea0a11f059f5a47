// conv2d.cpu.amx's loop nest: an implicit GEMM on AMX tiles whose rows are output pixels, laid
// out so that the 16 rows of any A tile are one strided tile load:
//
//   the input copied into a phased, padded NHWC buffer: for stride st, the padded image split
//     into st x st phases (rows and columns of one residue mod st), each phase hs x ws pixels of
//     cp channels (C padded with zeros to whole tile steps: 32 bf16, 64 8-bit). Output pixel
//     (n, p, q) and tap (r, s) then read phase ((r d) % st, (s d) % st) at
//     (p + (r d) / st, q + (s d) / st): row v = (n hs + p) ws + q of phase (0, 0), offset by
//     a constant per tap. The GEMM's rows are every v (N hs ws of them): those with p >= P or
//     q >= Q are computed from the border and never stored. A 1x1, stride-1, unpadded NHWC layer
//     with whole steps of channels is read in place (its rows are its pixels; the last register
//     block moves back to end at the last pixel, recomputing some, so that no tile reads past
//     the input). Where the filter's columns fold into the channels (a stem's 7 x 3 channels in
//     one tile step, not 7 steps of 3), a copied pixel is (row h, output column q) and holds the
//     S x C inputs of its row of taps, channel s C + c; the taps are R x 1, phases only in H
//   the weights packed into VNNI panels of 16 output channels, the reduction (tap, channel), K
//     padded to whole groups of tn panels (once before the calls with weights=prepared)
//   for each (row block of mc rows, group of tn panels), in the order `order` says (parallel
//   with -threads > 1, each iteration configuring its thread's tiles):
//     for each register block of 16 tm rows: tm x tn accumulator tiles = 0
//       for each tap, each step of 32 or 64 channels: tm A tiles (16 rows, stride cp), tn B
//         tiles, tm tn tile products
//       the tiles stored to a scratch, the valid rows written with the epilogue in the output's
//       layout
//
// bf16 runs tdpbf16ps, i8 tdpbssd (s8 x s8: no shift, no compensation), u8i8 tdpbusd. Tile t:
// accumulators 0 .. tm tn - 1, then the tm A tiles, then the tn B tiles, all 16 rows of 64 bytes.
#include "codegen/templates/conv2d_cpu_amx_nest.h"

#include <string>
#include <utility>
#include <vector>

#include "codegen/templates/conv_cpu_indexing.h"
#include "codegen/templates/template_util.h"

namespace tune {
namespace {

using ir::Allocate;
using ir::AmxTileOp;
using ir::Block;
using ir::Buffer;
using ir::Expr;
using ir::For;
using ir::IfThenElse;
using ir::Load;
using ir::LoopKind;
using ir::MemoryScope;
using ir::Stmt;
using ir::Store;
using ir::Type;
using ir::Var;

constexpr int64_t kRows = kAmxTileRows;

class ConvAmxBuilder {
 public:
  ConvAmxBuilder(const Workload& workload, const ConvAmxPlan& p)
      : p_(p),
        ops_(workload),
        at_(p.s),
        b_packed_(p.prepared ? "weight_prepared" : "weight_packed",
                  p.prepared ? MemoryScope::kGlobal : MemoryScope::kStack, p.types.b),
        phased_("input_phased", MemoryScope::kStack, p.types.a),
        c_tiles_("c_tiles", MemoryScope::kStack, p.types.acc) {}

  ir::LoweredFunc Build(std::string_view name) const {
    ir::LoweredFunc func;
    func.name = std::string(name);
    func.params = ops_.Params(p_.prepared ? b_packed_ : ops_.b());
    Stmt body = ops_.BindScale(Blocks());
    if (!p_.in_place) {
      body = Allocate::Make(phased_, p_.buffer_rows * p_.cp, Block::Make({CopyInput(), body}));
    }
    if (!p_.prepared) {
      body =
          Allocate::Make(b_packed_, p_.panels.Elements(p_.s.k), Block::Make({PackWeights(), body}));
    }
    func.body = body;
    return func;
  }

  PreparedWeights BuildPreparation(std::string_view name) const {
    PreparedWeights out;
    out.func.name = std::string(name);
    out.func.params = {ops_.b(), b_packed_};
    out.func.body = PackWeights();
    const int64_t bytes = p_.panels.Elements(p_.s.k) * (p_.types.b.bits() / 8);
    out.floats = CeilDiv(bytes, 4);
    return out;
  }

 private:
  int64_t G() const { return p_.types.group; }
  int64_t Tiles() const { return p_.tm * p_.tn + p_.tm + p_.tn; }
  int AccTile(int64_t i, int64_t j) const { return static_cast<int>(i * p_.tn + j); }
  int ATile(int64_t i) const { return static_cast<int>(p_.tm * p_.tn + i); }
  int BTile(int64_t j) const { return static_cast<int>(p_.tm * p_.tn + p_.tm + j); }
  int64_t BlockRows() const { return kRows * p_.tm; }
  int64_t GroupCols() const { return kRows * p_.tn; }
  int64_t PhasePixels() const { return p_.s.n * p_.hs * p_.ws; }
  const Buffer& Source() const { return p_.in_place ? ops_.a() : phased_; }

  Stmt PackWeights() const {
    return p_.fold ? PackFoldedWeights()
                   : PackConvPanels(p_.s, p_.panels, p_.types, p_.cp, p_.cp, ops_.b(), b_packed_);
  }

  // Folded: the panels' reduction is (tap r, channel s C + c), zero past S C and K.
  Stmt PackFoldedWeights() const {
    const Conv2dShape& s = p_.s;
    const int64_t g = G(), w = p_.panels.width, groups = p_.cp / g;
    Var j("fj"), r("fr"), cg("fcg"), col("fc"), e("fe");
    const Expr k = j * w + col, folded = cg * g + e;
    const Expr value =
        ir::LoadAsOrZero(ops_.b(),
                         at_.Weight(ir::Min::Make(k, s.k - 1), ir::Min::Make(folded % s.c, s.c - 1),
                                    r, ir::Min::Make(folded / s.c, s.s - 1)),
                         1, k < s.k && folded < s.s * s.c);
    const Expr dst = j * (p_.panels.kp * w) + ((r * groups + cg) * w + col) * g + e;
    return For::Make(
        j, 0, p_.panels.Panels(s.k), LoopKind::kSerial,
        For::Make(r, 0, s.r, LoopKind::kSerial,
                  For::Make(cg, 0, groups, LoopKind::kSerial,
                            For::Make(col, 0, w, LoopKind::kUnrolled,
                                      For::Make(e, 0, g, LoopKind::kUnrolled,
                                                Store::Make(b_packed_, dst,
                                                            ir::Cast::Make(p_.types.b, value)))))));
  }

  // One vector of 512 bits of the input's zero.
  Expr ZeroVector() const {
    const Type t = p_.types.a;
    const Expr zero = IsIntegerDtype(p_.types.dtype)
                          ? ir::Cast::Make(t, ir::Cast::Make(Type::Int32(), Expr(int64_t{0})))
                          : ir::Cast::Make(t, Expr(0.0f));
    return ir::BroadcastTo(zero, static_cast<int>(p_.step));
  }

  // The cp channels of the copy's pixel `dst` from the input's pixel (n, h, w): the last step
  // zeroed first where C is not whole steps, then the C channels in the input's layout.
  Stmt CopyPixel(const Expr& dst, const Expr& n, const Expr& h, const Expr& w) const {
    const Conv2dShape& s = p_.s;
    std::vector<Stmt> steps;
    if (s.c % p_.step != 0) {
      steps.push_back(Store::Make(phased_, dst + (p_.cp - p_.step), ZeroVector()));
    }
    Var c("cc");
    if (s.nhwc) {
      const int64_t whole = s.c / p_.step * p_.step;
      if (whole > 0) {
        steps.push_back(For::Make(c, 0, whole / p_.step, LoopKind::kSerial,
                                  Store::Make(phased_, dst + c * p_.step,
                                              Load::Make(ops_.a(), at_.Input(n, c * p_.step, h, w),
                                                         static_cast<int>(p_.step)))));
      }
      if (whole < s.c) {
        Var e("ce");
        steps.push_back(For::Make(e, whole, s.c - whole, LoopKind::kSerial,
                                  Store::Make(phased_, dst + e, ops_.a()(at_.Input(n, e, h, w)))));
      }
    } else if (s.blocked()) {
      const int64_t b = s.block;
      steps.push_back(For::Make(
          c, 0, s.c / b, LoopKind::kSerial,
          Store::Make(phased_, dst + c * b,
                      Load::Make(ops_.a(), at_.Input(n, c * b, h, w), static_cast<int>(b)))));
    } else {
      steps.push_back(For::Make(c, 0, s.c, LoopKind::kSerial,
                                Store::Make(phased_, dst + c, ops_.a()(at_.Input(n, c, h, w)))));
    }
    return Block::Make(std::move(steps));
  }

  // Every pixel of the phased copy: the image's where the padded position lies inside it, zeros
  // elsewhere (the border, the phases' positions past the padded image, the rows tiles read past
  // the last phase). Parallel over (phase, image, row) with several threads.
  Stmt CopyInput() const {
    const Conv2dShape& s = p_.s;
    const int64_t sh = p_.phase_h, sw = p_.phase_w, hs = p_.hs, ws = p_.ws;
    Var row("prow"), x("px");
    const Expr phase = row / (s.n * hs), n = (row / hs) % s.n, y = row % hs;
    const Expr h = y * sh + phase / sw - s.pad, w = x * sw + phase % sw - s.pad;
    const Expr dst = (row * ws + x) * p_.cp;
    Var c("zc");
    auto zero_pixel = [&](const Expr& at) {
      return For::Make(c, 0, p_.cp / p_.step, LoopKind::kSerial,
                       Store::Make(phased_, at + c * p_.step, ZeroVector()));
    };
    Stmt pixel;
    if (p_.fold) {
      pixel = IfThenElse::Make(h >= 0 && h < s.h,
                               Block::Make({zero_pixel(dst), CopyFoldedPixel(dst, n, h, x)}),
                               zero_pixel(dst));
    } else {
      const Expr inside = h >= 0 && h < s.h && w >= 0 && w < s.w;
      pixel = IfThenElse::Make(inside, CopyPixel(dst, n, h, w), zero_pixel(dst));
    }
    Stmt pixels = For::Make(x, 0, ws, LoopKind::kSerial, pixel);
    Stmt rows = For::Make(row, 0, sh * sw * s.n * hs,
                          p_.parallel ? LoopKind::kParallel : LoopKind::kSerial, pixels);
    Var t("pt");
    const int64_t copied = sh * sw * PhasePixels();
    Stmt slack =
        For::Make(t, copied, p_.buffer_rows - copied, LoopKind::kSerial, zero_pixel(t * p_.cp));
    return Block::Make({rows, slack});
  }

  // Folded: the S x C inputs of output column x's row of taps in image row h (inside the image):
  // one copy where they lie together inside the row (NHWC, no dilation), else input by input,
  // zero outside the row. The pixel's channels past S C are zero already.
  Stmt CopyFoldedPixel(const Expr& dst, const Expr& n, const Expr& h, const Expr& x) const {
    const Conv2dShape& s = p_.s;
    const Expr w0 = x * s.stride - s.pad;
    Var e("fe");
    const Expr w = w0 + (e / s.c) * s.dilation;
    const Stmt one_by_one = For::Make(
        e, 0, s.s * s.c, LoopKind::kSerial,
        Store::Make(phased_, dst + e,
                    ir::Cast::Make(
                        p_.types.a,
                        ir::LoadAsOrZero(
                            ops_.a(),
                            at_.Input(n, e % s.c, h,
                                      ir::Max::Make(ir::Min::Make(w, s.w - 1), Expr(int64_t{0}))),
                            1, w >= 0 && w < s.w))));
    if (!s.nhwc || s.dilation != 1) {
      return one_by_one;
    }
    const Stmt together = Store::Make(
        phased_, dst,
        Load::Make(ops_.a(), at_.Input(n, Expr(int64_t{0}), h, w0), static_cast<int>(s.s * s.c)));
    return IfThenElse::Make(w0 >= 0 && w0 + s.s <= s.w, together, one_by_one);
  }

  // The row offset of tap (r, t) from row v of phase (0, 0).
  Expr TapOffset(const Expr& r, const Expr& t) const {
    if (p_.in_place) {
      return Expr(int64_t{0});  // 1x1
    }
    const int64_t sh = p_.phase_h, sw = p_.phase_w, d = p_.s.dilation;
    const Expr dr = r * d, dt = t * d;
    return ((dr % sh) * sw + dt % sw) * PhasePixels() + (dr / sh) * p_.ws + dt / sw;
  }

  Stmt Configure() const {
    return AmxTileOp::Configure(std::vector<ir::AmxTileShape>(
        static_cast<size_t>(Tiles()), {static_cast<int>(kRows), static_cast<int>(kAmxTileBytes)}));
  }

  // Every (row block, group of panels) pair, in the order the config says.
  Stmt Blocks() const {
    const int64_t blocks = CeilDiv(p_.rows, p_.mc);
    const int64_t groups = CeilDiv(p_.s.k, GroupCols());
    Var t("bt"), ir_var("ir");
    const Expr block = p_.panels_outer ? t % blocks : t / groups;
    const Expr group = p_.panels_outer ? t / blocks : t % groups;
    const Expr first = block * p_.mc;
    const Expr count = ir::Min::Make(Expr(p_.mc), p_.rows - first);
    Expr v0 = first + ir_var * BlockRows();
    if (p_.in_place) {
      v0 = ir::Min::Make(v0, p_.rows - BlockRows());
    }
    Stmt body = For::Make(ir_var, 0, (count + (BlockRows() - 1)) / BlockRows(), LoopKind::kSerial,
                          RegisterBlock(v0, group));
    body = Allocate::Make(c_tiles_, p_.tm * p_.tn * kRows * kRows, body);
    if (p_.parallel) {
      body = Block::Make({Configure(), body, AmxTileOp::Release()});
      return For::Make(t, 0, blocks * groups, LoopKind::kParallel, body);
    }
    return Block::Make({Configure(), For::Make(t, 0, blocks * groups, LoopKind::kSerial, body),
                        AmxTileOp::Release()});
  }

  // The register block of rows v0 .. v0 + 16 tm by the panels of group `group`.
  Stmt RegisterBlock(const Expr& v0, const Expr& group) const {
    const Conv2dShape& s = p_.s;
    std::vector<Stmt> zero;
    for (int64_t i = 0; i < p_.tm; ++i) {
      for (int64_t j = 0; j < p_.tn; ++j) {
        zero.push_back(AmxTileOp::Zero(AccTile(i, j)));
      }
    }
    Var r("r"), t("t"), k("kc");
    const Expr offset = TapOffset(r, t);
    const Expr tap = r * p_.taps_s + t;
    std::vector<Stmt> step;
    for (int64_t i = 0; i < p_.tm; ++i) {
      step.push_back(AmxTileOp::Load(ATile(i), Source(),
                                     (v0 + i * kRows + offset) * p_.cp + k * p_.step, p_.cp));
    }
    const int64_t panel_elems = p_.panels.kp * kRows;
    for (int64_t j = 0; j < p_.tn; ++j) {
      const Expr panel = group * p_.tn + j;
      step.push_back(AmxTileOp::Load(BTile(j), b_packed_,
                                     panel * panel_elems + (tap * p_.cp + k * p_.step) * kRows,
                                     kRows * G()));
    }
    for (int64_t i = 0; i < p_.tm; ++i) {
      for (int64_t j = 0; j < p_.tn; ++j) {
        step.push_back(AmxTileOp::Dot(p_.types.dtype, AccTile(i, j), ATile(i), BTile(j)));
      }
    }
    Stmt reduce = For::Make(r, 0, s.r, LoopKind::kSerial,
                            For::Make(t, 0, p_.taps_s, LoopKind::kSerial,
                                      For::Make(k, 0, p_.cp / p_.step, LoopKind::kSerial,
                                                Block::Make(std::move(step)))));
    return Block::Make({Block::Make(std::move(zero)), reduce, Finish(v0, group)});
  }

  // The block's tiles stored to c_tiles, then each row that is an output pixel written with the
  // epilogue in the output's layout.
  Stmt Finish(const Expr& v0, const Expr& group) const {
    const Conv2dShape& s = p_.s;
    std::vector<Stmt> out;
    for (int64_t i = 0; i < p_.tm; ++i) {
      for (int64_t j = 0; j < p_.tn; ++j) {
        out.push_back(
            AmxTileOp::Store(AccTile(i, j), c_tiles_, Expr(AccTile(i, j) * kRows * kRows), kRows));
      }
    }
    const bool inside = s.k % GroupCols() == 0;
    const int lanes = static_cast<int>(kRows);
    for (int64_t i = 0; i < p_.tm; ++i) {
      Var rr("cr");
      const Expr v = v0 + i * kRows + rr;
      const Expr n = v / (p_.hs * p_.ws), y = (v / p_.ws) % p_.hs, x = v % p_.ws;
      std::vector<Stmt> per_row;
      for (int64_t j = 0; j < p_.tn; ++j) {
        const int64_t tile_base = AccTile(i, j) * kRows * kRows;
        const Expr col0 = (group * p_.tn + j) * kRows;
        per_row.push_back(ops_.StoreColumnsAt(
            [&](const Expr& col) { return at_.Output(n, col, y, x); }, col0, lanes, inside,
            at_.ContiguousOutputChannels(),
            [&](const Expr& off, int n_lanes) {
              return Load::Make(c_tiles_, tile_base + rr * kRows + off, n_lanes);
            }));
      }
      const Expr valid = v < p_.rows && y < s.p() && x < s.q();
      out.push_back(For::Make(rr, 0, kRows, LoopKind::kSerial,
                              IfThenElse::Make(valid, Block::Make(std::move(per_row)))));
    }
    return Block::Make(std::move(out));
  }

  const ConvAmxPlan p_;
  CpuMatrixOperands ops_;
  ConvCpuIndexing at_;
  Buffer b_packed_, phased_, c_tiles_;
};

}  // namespace

bool ConvAmxReadsInPlace(const Workload& workload, int64_t tm) {
  const Conv2dShape& s = workload.conv2d();
  return s.nhwc && s.pointwise() && s.c % AmxStep(workload) == 0 && s.n * s.h * s.w >= kRows * tm;
}

int64_t ConvAmxRows(const Workload& workload) {
  const Conv2dShape& s = workload.conv2d();
  return s.n * CeilDiv(s.h + 2 * s.pad, s.stride) * CeilDiv(s.w + 2 * s.pad, s.stride);
}

bool ConvAmxFolds(const Workload& workload) {
  const Conv2dShape& s = workload.conv2d();
  const int64_t step = AmxStep(workload);
  return s.s > 1 && CeilDiv(s.s * s.c, step) < s.s * CeilDiv(s.c, step);
}

ConvAmxPlan ConvAmxPlanOf(const Workload& workload, const Target& target, int64_t tm, int64_t tn,
                          int64_t mc, bool panels_outer, bool fold) {
  ConvAmxPlan p;
  p.s = workload.conv2d();
  const Conv2dShape& s = p.s;
  p.types = CpuMatrixTypesOf(workload);
  p.step = AmxStep(workload);
  p.fold = fold;
  p.taps_s = fold ? 1 : s.s;
  p.cp = CeilDiv(fold ? s.s * s.c : s.c, p.step) * p.step;
  p.in_place = !fold && ConvAmxReadsInPlace(workload, tm);
  p.phase_h = p.in_place ? 1 : s.stride;
  p.phase_w = p.in_place || fold ? 1 : s.stride;
  p.hs = CeilDiv(s.h + 2 * s.pad, p.phase_h);
  p.ws = fold ? s.q() : CeilDiv(s.w + 2 * s.pad, p.phase_w);
  p.rows = s.n * p.hs * p.ws;
  // Past the last phase, tiles read up to the largest tap offset plus a register block.
  const int64_t reach =
      ((s.r - 1) * s.dilation / p.phase_h) * p.ws + (p.taps_s - 1) * s.dilation / p.phase_w;
  p.buffer_rows = p.phase_h * p.phase_w * p.rows + reach + kRows * tm;
  p.tm = tm;
  p.tn = tn;
  p.mc = mc;
  p.panels_outer = panels_outer;
  p.prepared = workload.prepared_weights();
  p.parallel = target.threads > 1;
  p.panels.width = kRows;
  p.panels.group = p.types.group;
  p.panels.kp = s.r * p.taps_s * p.cp;
  p.panels.columns = CeilDiv(s.k, kRows * tn) * kRows * tn;
  return p;
}

ir::LoweredFunc BuildConvAmxNest(const Workload& workload, const ConvAmxPlan& plan,
                                 std::string_view func_name) {
  return ConvAmxBuilder(workload, plan).Build(func_name);
}

PreparedWeights BuildConvAmxPreparation(const Workload& workload, const ConvAmxPlan& plan,
                                        std::string_view func_name) {
  return ConvAmxBuilder(workload, plan).BuildPreparation(func_name);
}

}  // namespace tune
