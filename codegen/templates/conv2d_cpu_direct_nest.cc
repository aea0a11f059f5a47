#include "codegen/templates/conv2d_cpu_direct_nest.h"

#include <string>
#include <vector>

#include "codegen/templates/conv2d_cpu_loops.h"
#include "codegen/templates/template_util.h"

namespace tune {
namespace {

using ir::Allocate;
using ir::Block;
using ir::Buffer;
using ir::Expr;
using ir::Fma;
using ir::For;
using ir::IfThenElse;
using ir::Load;
using ir::LoopKind;
using ir::MemoryScope;
using ir::Stmt;
using ir::Store;
using ir::Var;

// Where a register tile sits: channel block `kb`, output rows [p0, p0 + rows), output columns
// [q0, q0 + width), and the reduction chunk (undefined when the reduction is not split).
struct TileAt {
  Expr kb, p0;
  int64_t rows;
  Expr q0;
  int64_t width;
  Expr chunk;
};

class Conv2dBuilder {
 public:
  explicit Conv2dBuilder(const DirectConvPlan& p) : p_(p), chunks_{.total = p.s.c, .chunk = p.cc} {}

  ir::LoweredFunc Build(std::string_view func_name) {
    ir::LoweredFunc func;
    func.name = std::string(func_name);
    func.params = {input_, weight_};
    if (EpilogueHasBias(p_.epilogue)) {
      func.params.push_back(bias_);
    }
    func.params.push_back(output_);

    const Conv2dShape& s = p_.s;
    std::vector<Stmt> per_image;
    if (Padded()) {
      per_image.push_back(PadImage());
    }
    per_image.push_back(Tiles());
    Stmt images = For::Make(n_, 0, s.n, LoopKind::kSerial, Block::Make(std::move(per_image)));
    Stmt body = Block::Make({PackWeights(), images});
    if (Padded()) {
      body = Allocate::Make(padded_, s.c * p_.hp * p_.wp, body);
    }
    body = Allocate::Make(packed_w_, p_.kb * s.c * s.r * s.s * p_.kblk, body);
    func.body = body;
    return func;
  }

 private:
  bool Padded() const { return p_.s.pad > 0; }

  // packed_w[((kb*C + c)*R + r)*S + s)*kblk + kk] = weight[kb*kblk + kk][c][r][s], zero past K.
  Stmt PackWeights() const {
    const Conv2dShape& s = p_.s;
    const int64_t crs = s.c * s.r * s.s;
    Var kb("kb"), e("crs"), kk("kk");
    Expr k = kb * p_.kblk + kk;
    Expr value = ir::Select::Make(k < s.k, weight_(ir::Min::Make(k, s.k - 1) * crs + e), 0.0f);
    return For::Make(
        kb, 0, p_.kb, LoopKind::kSerial,
        For::Make(e, 0, crs, LoopKind::kSerial,
                  For::Make(kk, 0, p_.kblk, LoopKind::kSerial,
                            Store::Make(packed_w_, (kb * crs + e) * p_.kblk + kk, value))));
  }

  // padded[c][hp][wp] = input[n][c][hp - pad][wp - pad], zero outside the input.
  Stmt PadImage() const {
    const Conv2dShape& s = p_.s;
    Var c("c"), hp("hp"), wp("wp");
    Expr h = hp - s.pad, w = wp - s.pad;
    Expr inside = h >= 0 && h < s.h && w >= 0 && w < s.w;
    Expr hc = ir::Min::Make(ir::Max::Make(h, 0), s.h - 1);
    Expr wc = ir::Min::Make(ir::Max::Make(w, 0), s.w - 1);
    Expr value = ir::Select::Make(inside, input_(((n_ * s.c + c) * s.h + hc) * s.w + wc), 0.0f);
    return For::Make(
        c, 0, s.c, LoopKind::kSerial,
        For::Make(hp, 0, p_.hp, LoopKind::kSerial,
                  For::Make(wp, 0, p_.wp, LoopKind::kSerial,
                            Store::Make(padded_, (c * p_.hp + hp) * p_.wp + wp, value))));
  }

  // The input value at channel c, input row h and column w (padded coordinates when padded).
  Expr LoadInput(const Expr& c, const Expr& h, const Expr& w) const {
    const Conv2dShape& s = p_.s;
    if (Padded()) {
      return padded_((c * p_.hp + h) * p_.wp + w);
    }
    return input_(((n_ * s.c + c) * s.h + h) * s.w + w);
  }

  // Every register tile of image n: the parallel loop over (group of kt channel blocks, block
  // of pt output rows), the chunks of the reduction inside or outside it.
  Stmt Tiles() const {
    const int64_t groups = CeilDiv(p_.kb, p_.kt);
    const int64_t row_blocks = CeilDiv(p_.p, p_.pt);
    Var f("f"), ch("ch");
    Expr g, rb;
    if (groups == 1) {
      g = 0;
      rb = f;
    } else if (p_.loop_order == 0) {
      g = f / row_blocks;
      rb = f % row_blocks;
    } else {
      g = f % groups;
      rb = f / groups;
    }
    const Expr chunk = chunks_.split() ? Expr(ch) : Expr();
    Stmt body = RowBlock(g, rb, chunk);
    if (chunks_.split() && !p_.chunk_outer) {
      body = For::Make(ch, 0, chunks_.count(), LoopKind::kSerial, body);
    }
    LoopKind kind = p_.parallel ? LoopKind::kParallel : LoopKind::kSerial;
    Stmt loop = For::Make(f, 0, groups * row_blocks, kind, body);
    if (chunks_.split() && p_.chunk_outer) {
      loop = For::Make(ch, 0, chunks_.count(), LoopKind::kSerial, loop);
    }
    return loop;
  }

  // The tiles of channel-block group g and row block rb; the last row block may be shorter.
  Stmt RowBlock(const Expr& g, const Expr& rb, const Expr& chunk) const {
    const Expr p0 = p_.pt == 1 ? rb : rb * p_.pt;
    const int64_t rest = p_.p % p_.pt;
    if (rest == 0) {
      return Row(g, p0, p_.pt, chunk);
    }
    return IfThenElse::Make(rb < p_.p / p_.pt, Row(g, p0, p_.pt, chunk), Row(g, p0, rest, chunk));
  }

  // The tiles along the output width of `rows` rows from p0 for each channel block of group g,
  // in the order tile_order says.
  Stmt Row(const Expr& g, const Expr& p0, int64_t rows, const Expr& chunk) const {
    const int64_t full = p_.q / p_.qt, rem = p_.q % p_.qt;
    auto tile = [&](const Expr& kb, const Expr& q0, int64_t width) {
      return ChannelBlocks(TileAt{kb, p0, rows, q0, width, chunk});
    };
    // Tiles of the channel block kb(): the full ones in a loop, then the remainder.
    auto tiles = [&](const auto& kb) {
      Var t("t");
      std::vector<Stmt> row;
      row.push_back(For::Make(t, 0, full, LoopKind::kSerial, tile(kb(), t * p_.qt, p_.qt)));
      if (rem > 0) {
        row.push_back(tile(kb(), Expr(p_.q - rem), rem));
      }
      return row;
    };
    if (p_.kt == 1) {
      return Block::Make(tiles([&] { return g; }));
    }
    const Expr extent = GroupExtent(g, p_.kt, p_.kb);
    if (p_.tile_order == 0) {
      Var kg("kg");
      return For::Make(kg, 0, extent, LoopKind::kSerial,
                       Block::Make(tiles([&] { return g * p_.kt + kg; })));
    }
    // Width tiles outer, the group's channel blocks inner (the input tile stays in L1).
    auto blocks = [&](const Expr& q0, int64_t width) {
      Var kg("kg");
      return For::Make(kg, 0, extent, LoopKind::kSerial, tile(g * p_.kt + kg, q0, width));
    };
    Var t("t");
    std::vector<Stmt> row;
    row.push_back(For::Make(t, 0, full, LoopKind::kSerial, blocks(t * p_.qt, p_.qt)));
    if (rem > 0) {
      row.push_back(blocks(Expr(p_.q - rem), rem));
    }
    return Block::Make(std::move(row));
  }

  // The tile; the last channel block stores only the channels below K.
  Stmt ChannelBlocks(const TileAt& at) const {
    const int64_t valid_last = p_.s.k - (p_.kb - 1) * p_.kblk;
    if (p_.kb == 1 || valid_last == p_.kblk) {
      return MicroKernel(at, valid_last);
    }
    return IfThenElse::Make(at.kb < p_.kb - 1, MicroKernel(at, p_.kblk),
                            MicroKernel(at, valid_last));
  }

  // acc[rows * width][kblk] = sum over (c, r, s) of input x packed weights (this chunk's c when
  // the reduction is split: the sums so far reloaded from the output before, stored back after),
  // then the epilogue and a store of the first `channels` channels of each position.
  Stmt MicroKernel(const TileAt& at, int64_t channels) const {
    const Conv2dShape& s = p_.s;
    const int lanes = static_cast<int>(p_.lanes);
    const int64_t positions = at.rows * at.width;
    Buffer acc(at.width == p_.qt ? "acc" : "acc_edge", MemoryScope::kStack);
    auto acc_at = [&](const Expr& jj, const Expr& vv) { return jj * p_.kblk + vv * lanes; };
    // Position (row i, column j) of the tile; with one row, j itself.
    auto pos = [&](const Expr& i, const Expr& j) { return at.rows == 1 ? j : i * at.width + j; };
    auto row = [&](const Expr& i) { return at.rows == 1 ? at.p0 : at.p0 + i; };
    // for i < rows: body(i); with one row, body(0) without a loop.
    auto over_rows = [&](const Var& i, const Stmt& body) {
      return at.rows == 1 ? body : For::Make(i, 0, at.rows, LoopKind::kUnrolled, body);
    };

    Var j("j"), v("v");
    Stmt zero =
        For::Make(j, 0, positions, LoopKind::kUnrolled,
                  For::Make(v, 0, p_.kv, LoopKind::kUnrolled,
                            Store::Make(acc, acc_at(j, v), ir::BroadcastTo(Expr(0.0f), lanes))));

    Var c("c"), r("r"), t("s"), i2("i"), j2("j"), v2("v");
    const FilterLoopKinds filter = FilterKindsFor(p_.unroll_rs);
    Expr w_index = (((at.kb * s.c + c) * s.r + r) * s.s + t) * p_.kblk + v2 * lanes;
    Expr x =
        LoadInput(c, row(i2) * s.stride + r * s.dilation, (at.q0 + j2) * s.stride + t * s.dilation);
    Stmt update =
        Store::Make(acc, acc_at(pos(i2, j2), v2),
                    Fma::Make(ir::BroadcastTo(x, lanes), Load::Make(packed_w_, w_index, lanes),
                              Load::Make(acc, acc_at(pos(i2, j2), v2), lanes)));
    Stmt taps = For::Make(
        r, 0, s.r, filter.r,
        For::Make(t, 0, s.s, filter.s,
                  over_rows(i2, For::Make(j2, 0, at.width, LoopKind::kUnrolled,
                                          For::Make(v2, 0, p_.kv, LoopKind::kUnrolled, update)))));
    Expr c0 = int64_t{0}, c_extent = s.c;
    if (at.chunk.defined()) {
      c0 = chunks_.Begin(at.chunk);
      c_extent = chunks_.Extent(at.chunk);
    }
    Stmt reduce = ForUnrolledBy(c, c0, c_extent, p_.unroll_c, LoopKind::kSerial, taps);

    Var kk("kk"), i3("i"), j3("j");
    Expr k = at.kb * p_.kblk + kk;
    auto out_index = [&](const Expr& i, const Expr& jj) {
      return ((n_ * s.k + k) * p_.p + row(i)) * p_.q + at.q0 + jj;
    };
    auto store = [&](bool epilogue) {
      Expr value = acc(pos(i3, j3) * p_.kblk + kk);
      if (epilogue && EpilogueHasBias(p_.epilogue)) {
        value = value + bias_(k);
      }
      if (epilogue && EpilogueHasRelu(p_.epilogue)) {
        value = ir::Max::Make(value, 0.0f);
      }
      return For::Make(kk, 0, channels, LoopKind::kUnrolled,
                       over_rows(i3, For::Make(j3, 0, at.width, LoopKind::kUnrolled,
                                               Store::Make(output_, out_index(i3, j3), value))));
    };
    Stmt init = zero;
    Stmt finish = store(true);
    if (at.chunk.defined()) {
      // The sums of the earlier chunks, from the output (the channels past K stay zero).
      Stmt reload = For::Make(kk, 0, channels, LoopKind::kUnrolled,
                              over_rows(i3, For::Make(j3, 0, at.width, LoopKind::kUnrolled,
                                                      Store::Make(acc, pos(i3, j3) * p_.kblk + kk,
                                                                  output_(out_index(i3, j3))))));
      if (channels < p_.kblk) {
        reload = Block::Make({zero, reload});
      }
      init = chunks_.Init(at.chunk, zero, reload);
      finish =
          chunks_.Finish(at.chunk, finish, p_.epilogue == Epilogue::kNone ? Stmt() : store(false));
    }
    return Allocate::Make(acc, positions * p_.kblk, Block::Make({init, reduce, finish}));
  }

  const DirectConvPlan p_;
  const ReductionChunks chunks_;
  Var n_{"n"};
  Buffer input_{"input"}, weight_{"weight"}, bias_{"bias"}, output_{"output"};
  Buffer packed_w_{"weight_packed", MemoryScope::kStack};
  Buffer padded_{"input_padded", MemoryScope::kStack};
};

}  // namespace

ir::LoweredFunc BuildDirectConvNest(const DirectConvPlan& plan, std::string_view func_name) {
  return Conv2dBuilder(plan).Build(func_name);
}

}  // namespace tune
