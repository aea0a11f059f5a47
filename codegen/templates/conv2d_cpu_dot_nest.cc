// conv2d.cpu.dot's loop nest: an implicit GEMM of output pixels (rows) by output channels
// (columns) over the reduction (filter tap, input channel), around gemm.cpu.dot's register tile:
//
//   the input copied into a padded NHWC buffer: the zero border the taps read, channels padded to
//     a multiple of the group G (2 for bf16 and f16, 4 for the 8-bit dtypes) and, for i8, shifted
//     to u8 (a + 128); NHWC or NCHW<b>c input needing none of that is read in place
//   the weights packed into VNNI panels of nr = nv vectors' columns, the reduction in the order
//     (channel block, r, s, channel): the blocks those of NCHW<b>c read in place, else one of
//     all channels; once per call, or once before the calls (weights=prepared)
//   for each (block of pr output rows x qc output columns of one image, panel), in the order
//   `order` says (parallel with -threads > 1):
//     for each output row p of the block, tiles of mr consecutive output pixels q:
//       acc[mr][nv] = 0
//       for each channel block, each tap (r, s), each group of G channels of the block:
//         nv vector loads of the panel, then per pixel one broadcast group of the input and nv
//         dot products
//       (where the border is zero, only the filter rows whose input rows lie inside the image,
//       and in a row's first and last tiles, peeled off the loop, only each tap's pixels that
//       read inside it: at 7 x 7 pixels the border is 18% of a 3 x 3 filter's products)
//       the output written with the epilogue, in the workload's layout
//
// A 1x1 convolution of stride 1 without padding is one row of H*W pixels per image: its tiles
// run across the image's rows.
//
// i8 x i8 has no VNNI instruction: the padded input holds a + 128 as u8 (vpdpbusd's unsigned
// operand; its border 128, the shifted zero), the weights stay s8, and 128 times each output
// channel's sum of weights (taken from the panels by the same instruction) is subtracted at the
// end: sum (a + 128) w = sum a w + 128 sum w.
#include "codegen/templates/conv2d_cpu_dot_nest.h"

#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/templates/conv_cpu_indexing.h"
#include "codegen/templates/template_util.h"

namespace tune {
namespace {

using ir::Allocate;
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

constexpr int64_t kLanes = kConvDotLanes;

Expr I32(int32_t v) { return ir::Cast::Make(Type::Int32(), Expr(int64_t{v})); }

class ConvDotBuilder {
 public:
  ConvDotBuilder(const Workload& workload, const ConvDotPlan& p)
      : p_(p),
        ops_(workload),
        b_packed_(p.prepared ? "weight_prepared" : "weight_packed",
                  p.prepared ? MemoryScope::kGlobal : MemoryScope::kStack, p.types.b),
        in_pad_("input_padded", MemoryScope::kStack, p.shift ? Type::UInt8() : p.types.a),
        comp_("compensation", MemoryScope::kStack, Type::Int32()),
        at_(p.s, p.e.h, p.e.w, p.e.p, p.e.q) {}

  ir::LoweredFunc Build(std::string_view name) const {
    ir::LoweredFunc func;
    func.name = std::string(name);
    func.params = ops_.Params(p_.prepared ? b_packed_ : ops_.b());
    Stmt body = ops_.BindScale(Blocks());
    if (p_.shift) {
      body = Allocate::Make(comp_, p_.panels.Panels(p_.s.k) * p_.panels.width,
                            Block::Make({Compensation(), body}));
    }
    if (!p_.in_place) {
      body = Allocate::Make(in_pad_, p_.s.n * p_.hp * p_.wp * p_.cp,
                            Block::Make({PadBorder(), CopyInput(), body}));
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
    const int64_t bytes = p_.panels.Elements(p_.s.k) * (b_packed_.element_type().bits() / 8);
    out.floats = CeilDiv(bytes, 4);
    return out;
  }

 private:
  int64_t Nr() const { return p_.panels.width; }
  int64_t Groups() const { return p_.cblk / p_.g; }          // channel groups of one block's tap
  int64_t ChannelBlocks() const { return p_.cp / p_.cblk; }  // blocks of the reduction
  LoopKind Outer() const { return p_.parallel ? LoopKind::kParallel : LoopKind::kSerial; }
  const Buffer& Source() const { return p_.in_place ? ops_.a() : in_pad_; }

  // The padded input's element (n, hp, wp, c).
  Expr PaddedIndex(const Expr& n, const Expr& h, const Expr& w, const Expr& c) const {
    return ((n * p_.hp + h) * p_.wp + w) * p_.cp + c;
  }

  // Where the tiles read channel ci of reduction block cb at (n, h, w): the input itself (in
  // place) or the padded copy.
  Expr SourceIndex(const Expr& n, const Expr& cb, const Expr& h, const Expr& w,
                   const Expr& ci) const {
    if (p_.in_place && p_.s.blocked()) {
      return at_.Input(n, cb * p_.cblk, h, w) + ci;
    }
    return PaddedIndex(n, h, w, cb * p_.cblk + ci);
  }

  // The padded input's value of a zero input: 128 for i8's shift, else zero.
  Expr PadValue() const {
    const Type t = in_pad_.element_type();
    if (p_.shift) {
      return ir::Cast::Make(t, I32(128));
    }
    return IsIntegerDtype(p_.types.dtype) ? ir::Cast::Make(t, I32(0))
                                          : ir::Cast::Make(t, Expr(0.0f));
  }

  // `v` (the input's type, any lanes) as the padded input holds it.
  Expr AsPadded(Expr v) const { return p_.shift ? ShiftedToU8(std::move(v)) : v; }

  // `count` elements from input[src] to input_padded[dst]: vectors of a 512-bit register, then
  // the rest one by one.
  Stmt CopyRun(const Expr& dst, const Expr& src, int64_t count) const {
    const int64_t lanes = 512 / ops_.a().element_type().bits();
    std::vector<Stmt> steps;
    if (count >= lanes) {
      Var v("cv");
      steps.push_back(For::Make(
          v, 0, count / lanes, LoopKind::kSerial,
          Store::Make(in_pad_, dst + v * lanes,
                      AsPadded(Load::Make(ops_.a(), src + v * lanes, static_cast<int>(lanes))))));
    }
    if (count % lanes != 0) {
      Var i("ci");
      const int64_t from = count / lanes * lanes;
      steps.push_back(
          For::Make(i, from, count % lanes, LoopKind::kSerial,
                    Store::Make(in_pad_, dst + i, AsPadded(Load::Make(ops_.a(), src + i, 1)))));
    }
    return Block::Make(std::move(steps));
  }

  // The padded input's border (the rows and columns the image does not cover) and, at every
  // pixel, its channels from C to cp.
  Stmt PadBorder() const {
    std::vector<Stmt> steps;
    const int64_t pad = p_.pad, row = p_.wp * p_.cp;
    Var n("bn"), h("bh"), w("bw"), x("bx");
    if (pad > 0) {
      // The top and bottom rows, whole.
      for (int64_t h0 : {int64_t{0}, pad + p_.e.h}) {
        steps.push_back(For::Make(
            n, 0, p_.s.n, LoopKind::kSerial,
            For::Make(h, h0, pad, LoopKind::kSerial,
                      For::Make(x, 0, row, LoopKind::kSerial,
                                Store::Make(in_pad_, (n * p_.hp + h) * row + x, PadValue())))));
      }
      // The left and right columns of the image's rows.
      for (int64_t w0 : {int64_t{0}, pad + p_.e.w}) {
        steps.push_back(For::Make(
            n, 0, p_.s.n, LoopKind::kSerial,
            For::Make(h, pad, p_.e.h, LoopKind::kSerial,
                      For::Make(x, 0, pad * p_.cp, LoopKind::kSerial,
                                Store::Make(in_pad_, PaddedIndex(n, h, Expr(w0), Expr(0)) + x,
                                            PadValue())))));
      }
    }
    if (p_.cp > p_.s.c) {
      Var c("bc");
      steps.push_back(For::Make(
          n, 0, p_.s.n, LoopKind::kSerial,
          For::Make(
              h, pad, p_.e.h, LoopKind::kSerial,
              For::Make(w, pad, p_.e.w, LoopKind::kSerial,
                        For::Make(c, p_.s.c, p_.cp - p_.s.c, LoopKind::kSerial,
                                  Store::Make(in_pad_, PaddedIndex(n, h, w, c), PadValue()))))));
    }
    return Block::Make(std::move(steps));
  }

  // The image into the padded input's interior, from the input's layout.
  Stmt CopyInput() const {
    const Conv2dShape& s = p_.s;
    const int64_t pad = p_.pad, H = p_.e.h, W = p_.e.w;
    Var row("crow"), w("cw");
    if (s.nhwc) {
      // Row by row: a whole row of W*C where no channel is padded, else pixel by pixel.
      const Expr n = row / H, h = row % H;
      Stmt copy = p_.cp == s.c ? CopyRun(PaddedIndex(n, h + pad, Expr(pad), Expr(0)),
                                         at_.Input(n, Expr(0), h, Expr(0)), W * s.c)
                               : For::Make(w, 0, W, LoopKind::kSerial,
                                           CopyRun(PaddedIndex(n, h + pad, w + pad, Expr(0)),
                                                   at_.Input(n, Expr(0), h, w), s.c));
      return For::Make(row, 0, s.n * H, Outer(), copy);
    }
    if (s.blocked()) {
      // Per (image, channel block, row): each pixel's block of b channels, one vector.
      const int64_t b = s.block, blocks = s.c / b;
      const Expr n = row / (blocks * H), cb = (row / H) % blocks, h = row % H;
      const Expr src = at_.Input(n, cb * b, h, w);
      return For::Make(
          row, 0, s.n * blocks * H, Outer(),
          For::Make(w, 0, W, LoopKind::kSerial,
                    Store::Make(in_pad_, PaddedIndex(n, h + pad, w + pad, cb * b),
                                AsPadded(Load::Make(ops_.a(), src, static_cast<int>(b))))));
    }
    // NCHW: per (image, channel, row), element by element.
    const Expr n = row / (s.c * H), c = (row / H) % s.c, h = row % H;
    return For::Make(
        row, 0, s.n * s.c * H, Outer(),
        For::Make(w, 0, W, LoopKind::kSerial,
                  Store::Make(in_pad_, PaddedIndex(n, h + pad, w + pad, c),
                              AsPadded(Load::Make(ops_.a(), at_.Input(n, c, h, w), 1)))));
  }

  // The weights into VNNI panels, the reduction in the order (channel block, r, s, channel).
  Stmt PackWeights() const {
    return PackConvPanels(p_.s, p_.panels, p_.types, p_.cp, p_.cblk, ops_.b(), b_packed_);
  }

  // i8: 128 times each output channel's sum of weights, from the panels.
  Stmt Compensation() const {
    Var j("sj");
    return For::Make(j, 0, p_.panels.Panels(p_.s.k), LoopKind::kSerial,
                     PanelColumnSums(p_.panels, b_packed_, j, [&](int64_t v, const Expr& sums) {
                       const int lanes = static_cast<int>(kLanes);
                       return Store::Make(comp_, ir::Ramp::Make(j * Nr() + v * kLanes, 1, lanes),
                                          sums * ir::BroadcastTo(I32(128), lanes));
                     }));
  }

  // Every (block of pixels, panel) pair, in the order the config says.
  Stmt Blocks() const {
    const int64_t pb = CeilDiv(p_.e.p, p_.pr), qb = CeilDiv(p_.e.q, p_.qc);
    const int64_t blocks = p_.s.n * pb * qb, panels = p_.panels.Panels(p_.s.k);
    Var t("bt");
    const Expr block = p_.panels_outer ? t % blocks : t / panels;
    const Expr jr = p_.panels_outer ? t / blocks : t % panels;
    const Expr n = block / (pb * qb), p0 = ((block / qb) % pb) * p_.pr, q0 = (block % qb) * p_.qc;
    const Expr rows = ir::Min::Make(Expr(p_.pr), p_.e.p - p0);
    const Expr cols = ir::Min::Make(Expr(p_.qc), p_.e.q - q0);
    Var pi("pi"), qt("qt");
    const Expr p = p0 + pi;
    // Every tile starts at a multiple of mr (qc is one, or all of Q): the row's last tile at
    // last_q0, `tail` pixels wide where mr does not divide Q.
    const int64_t tail = p_.e.q % p_.mr;
    const int64_t last_q0 = (p_.e.q - 1) / p_.mr * p_.mr;
    const Expr full = cols / p_.mr;
    std::vector<Stmt> tiles;
    Expr begin(int64_t{0}), end = full;
    if (SkipsBorder()) {
      // The first and last tiles of a row, whose taps reach into the border, are peeled off
      // the loop and leave those taps out.
      const Expr one(int64_t{1}), none(int64_t{0});
      const Expr first = q0 == 0 && full >= 1;
      tiles.push_back(IfThenElse::Make(first, Tile(p_.mr, n, p, none, jr, 0)));
      begin = ir::Select::Make(first, one, none);
      if (tail == 0 && last_q0 > 0) {
        const Expr last = q0 + cols == p_.e.q;
        tiles.push_back(IfThenElse::Make(last, Tile(p_.mr, n, p, Expr(last_q0), jr, last_q0)));
        end = full - ir::Select::Make(last, one, none);
      }
    }
    tiles.push_back(For::Make(qt, begin, end - begin, LoopKind::kSerial,
                              Tile(p_.mr, n, p, q0 + qt * p_.mr, jr)));
    if (tail != 0) {
      // The last block's (at last_q0).
      const Expr tail_q0 = q0 + full * p_.mr;
      tiles.push_back(IfThenElse::Make(
          cols % p_.mr != 0,
          Tile(tail, n, p, tail_q0, jr, SkipsBorder() ? std::optional(last_q0) : std::nullopt)));
    }
    return For::Make(t, 0, blocks * panels, Outer(),
                     For::Make(pi, 0, rows, LoopKind::kSerial, Block::Make(std::move(tiles))));
  }

  // The filter rows (first, count) whose input rows output row p reads: all R, or where the
  // sums skip the border (SkipsBorder), only those inside the image. At 7 x 7 pixels a 3 x 3
  // filter's rows of border are 10% of its products.
  std::pair<Expr, Expr> FilterRowsInside(const Expr& p) const {
    const Conv2dShape& s = p_.s;
    if (!SkipsBorder()) {
      return {Expr(int64_t{0}), Expr(s.r)};
    }
    // Input row p stride + r dilation - pad lies in [0, H) for r in [first, last).
    const Expr top = Expr(p_.pad) - p * s.stride;
    const Expr first = ir::Max::Make((top + (s.dilation - 1)) / s.dilation, Expr(int64_t{0}));
    const Expr last = ir::Min::Make((top + (p_.e.h - 1)) / s.dilation + 1, Expr(s.r));
    return {first, ir::Max::Make(last - first, Expr(int64_t{0}))};
  }

  // Whether the padded input's border is zero, so that the sums may skip the taps that read it
  // (the i8 shift's border of 128 is left in: the compensation counts every tap).
  bool SkipsBorder() const { return p_.pad > 0 && !p_.shift; }

  // The pixels i of a tile starting at output column q0 whose tap t reads inside the image.
  std::vector<int64_t> PixelsInside(int64_t pixels, int64_t q0, int64_t t) const {
    std::vector<int64_t> inside;
    for (int64_t i = 0; i < pixels; ++i) {
      const int64_t w = (q0 + i) * p_.s.stride + t * p_.s.dilation - p_.pad;
      if (w >= 0 && w < p_.e.w) {
        inside.push_back(i);
      }
    }
    return inside;
  }

  // The register tile of `pixels` output pixels from (n, p, q0) by panel jr. Where the tile's
  // first column is known (`known_q0`, given only where the sums skip the border: the first and
  // last tiles of a row), each tap leaves out the pixels that would read the border.
  Stmt Tile(int64_t pixels, const Expr& n, const Expr& p, const Expr& q0, const Expr& jr,
            std::optional<int64_t> known_q0 = std::nullopt) const {
    const Conv2dShape& s = p_.s;
    const int lanes = static_cast<int>(kLanes);
    const int group_lanes = static_cast<int>(kLanes * p_.g);
    Buffer acc(pixels == p_.mr ? "acc" : "acc_edge", MemoryScope::kStack, p_.types.acc);
    auto acc_at = [&](int64_t i, int64_t v) { return Expr(i * Nr() + v * kLanes); };
    const Expr zero = p_.types.acc.is_float()
                          ? ir::BroadcastTo(Expr(0.0f), lanes)
                          : ir::BroadcastTo(ir::Cast::Make(Type::Int32(), 0), lanes);
    std::vector<Stmt> init;
    for (int64_t i = 0; i < pixels; ++i) {
      for (int64_t v = 0; v < p_.nv; ++v) {
        init.push_back(Store::Make(acc, acc_at(i, v), zero));
      }
    }
    // One tap (r, t) of channel block cb for the pixels `ids`: per group of channels, nv vectors
    // of the panel and ids x nv products.
    Var cb("cb"), r("r"), cg("cg");
    const Expr h = p * s.stride + r * s.dilation;
    auto tap = [&](const Expr& t, const std::vector<int64_t>& ids) {
      const Expr panel =
          jr * (p_.panels.kp * Nr()) + ((cb * s.r + r) * s.s + t) * (Groups() * Nr() * p_.g);
      std::vector<Stmt> step;
      std::vector<Expr> b_vectors;
      for (int64_t v = 0; v < p_.nv; ++v) {
        b_vectors.push_back(
            Load::Make(b_packed_, panel + (cg * Nr() + v * kLanes) * p_.g, group_lanes));
      }
      for (int64_t i : ids) {
        const Expr w = (q0 + i) * s.stride + t * s.dilation;
        const Expr a =
            Load::Make(Source(), SourceIndex(n, cb, h, w, cg * p_.g), static_cast<int>(p_.g));
        for (int64_t v = 0; v < p_.nv; ++v) {
          step.push_back(Store::Make(
              acc, acc_at(i, v),
              MatrixDot(p_.types, false, Load::Make(acc, acc_at(i, v), lanes), a, b_vectors[v])));
        }
      }
      return For::Make(cg, 0, Groups(), LoopKind::kSerial, Block::Make(std::move(step)));
    };
    Stmt taps;
    if (known_q0) {
      // Runs of taps whose pixels inside are the same: one loop each.
      std::vector<std::vector<int64_t>> inside;
      for (int64_t t = 0; t < s.s; ++t) {
        inside.push_back(PixelsInside(pixels, *known_q0, t));
      }
      std::vector<Stmt> runs;
      for (int64_t t0 = 0, t1 = 0; t0 < s.s; t0 = t1) {
        const std::vector<int64_t>& ids = inside[t0];
        for (t1 = t0 + 1; t1 < s.s && inside[t1] == ids; ++t1) {
        }
        if (!ids.empty()) {
          Var t("t");
          runs.push_back(For::Make(t, t0, t1 - t0, LoopKind::kSerial, tap(t, ids)));
        }
      }
      taps = Block::Make(std::move(runs));
    } else {
      std::vector<int64_t> all(static_cast<size_t>(pixels));
      std::iota(all.begin(), all.end(), int64_t{0});
      Var t("t");
      taps = For::Make(t, 0, s.s, LoopKind::kSerial, tap(t, all));
    }
    const auto [r_first, r_count] = FilterRowsInside(p);
    Stmt reduce = For::Make(cb, 0, ChannelBlocks(), LoopKind::kSerial,
                            For::Make(r, r_first, r_count, LoopKind::kSerial, taps));

    std::vector<Stmt> write;
    const bool inside = s.k % Nr() == 0;
    for (int64_t i = 0; i < pixels; ++i) {
      for (int64_t v = 0; v < p_.nv; ++v) {
        const Expr col0 = jr * Nr() + v * kLanes;
        write.push_back(
            ops_.StoreColumnsAt([&, i](const Expr& col) { return at_.Output(n, col, p, q0 + i); },
                                col0, lanes, inside, at_.ContiguousOutputChannels(),
                                [&, i, v](const Expr& offset, int n_lanes) {
                                  Expr sum = Load::Make(acc, acc_at(i, v) + offset, n_lanes);
                                  if (p_.shift) {
                                    sum = sum - Load::Make(comp_, col0 + offset, n_lanes);
                                  }
                                  return sum;
                                }));
      }
    }
    return Allocate::Make(
        acc, pixels * Nr(),
        Block::Make({Block::Make(std::move(init)), reduce, Block::Make(std::move(write))}));
  }

  const ConvDotPlan p_;
  CpuMatrixOperands ops_;
  Buffer b_packed_, in_pad_, comp_;
  ConvCpuIndexing at_;
};

}  // namespace

ConvDotExtents ConvDotExtentsOf(const Conv2dShape& s) {
  if (s.pointwise()) {
    return {1, s.h * s.w, 1, s.p() * s.q()};
  }
  return {s.h, s.w, s.p(), s.q()};
}

ConvDotPlan ConvDotPlanOf(const Workload& workload, const Target& target, int64_t mr, int64_t nv,
                          int64_t pr, int64_t qc, bool panels_outer) {
  ConvDotPlan p;
  p.s = workload.conv2d();
  p.e = ConvDotExtentsOf(p.s);
  p.types = CpuMatrixTypesOf(workload);
  p.g = p.types.group;
  p.cp = CeilDiv(p.s.c, p.g) * p.g;
  p.shift = workload.dtype() == Dtype::kI8;
  p.in_place = p.s.pad == 0 && !p.shift &&
               ((p.s.nhwc && p.cp == p.s.c) || (p.s.blocked() && p.s.block % p.g == 0));
  p.cblk = p.in_place && p.s.blocked() ? p.s.block : p.cp;
  p.pad = p.in_place ? 0 : p.s.pad;
  p.hp = p.e.h + 2 * p.pad;
  p.wp = p.e.w + 2 * p.pad;
  p.mr = mr;
  p.nv = nv;
  p.pr = pr;
  p.qc = qc;
  p.panels_outer = panels_outer;
  p.prepared = workload.prepared_weights();
  p.parallel = target.threads > 1;
  p.panels.width = p.nv * kLanes;
  p.panels.group = static_cast<int>(p.g);
  p.panels.kp = p.s.r * p.s.s * p.cp;
  return p;
}

ir::LoweredFunc BuildConvDotNest(const Workload& workload, const ConvDotPlan& plan,
                                 std::string_view func_name) {
  return ConvDotBuilder(workload, plan).Build(func_name);
}

PreparedWeights BuildConvDotPreparation(const Workload& workload, const ConvDotPlan& plan,
                                        std::string_view func_name) {
  return ConvDotBuilder(workload, plan).BuildPreparation(func_name);
}

}  // namespace tune
