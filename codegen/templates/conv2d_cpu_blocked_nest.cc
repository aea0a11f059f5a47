#include "codegen/templates/conv2d_cpu_blocked_nest.h"

#include <algorithm>
#include <functional>
#include <optional>
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

// Where a register tile sits: image n, output blocks [kob0, kob0 + kb), output rows [p0, p0 +
// rows), positions [q0, q0 + width) (`edge_q0`: q0 as a constant for a tile whose window crosses
// the left or right border, nullopt inside), and the reduction chunk (undefined when the
// reduction is not split).
struct TileAt {
  Expr n, kob0, p0;
  int64_t rows;
  Expr q0;
  int64_t width;
  std::optional<int64_t> edge_q0;
  Expr chunk;
};

class BlockedConvBuilder {
 public:
  explicit BlockedConvBuilder(const BlockedConvPlan& p)
      : p_(p), chunks_{.total = p.cb, .chunk = p.cbc} {}

  ir::LoweredFunc Build(std::string_view func_name) const {
    ir::LoweredFunc func;
    func.name = std::string(func_name);
    func.params = {input_, weight_};
    if (EpilogueHasBias(p_.epilogue)) {
      func.params.push_back(bias_);
    }
    func.params.push_back(output_);
    func.body = Rows();
    return func;
  }

 private:
  int64_t groups() const { return p_.kbs / p_.kb; }

  // The parallel loop over (image, group of kt register tiles of output blocks, block of pt
  // output rows), the chunks of the reduction inside or outside it.
  Stmt Rows() const {
    const int64_t tiles = CeilDiv(groups(), p_.kt), row_blocks = CeilDiv(p_.p, p_.pt);
    Var f("f"), ch("ch");
    Expr rest = f % (tiles * row_blocks);
    Expr n = f / (tiles * row_blocks);
    Expr g = p_.loop_order == 0 ? rest / row_blocks : rest % tiles;
    Expr rb = p_.loop_order == 0 ? rest % row_blocks : rest / tiles;
    const Expr chunk = chunks_.split() ? Expr(ch) : Expr();
    Stmt body = RowBlock(n, g, rb, chunk);
    if (chunks_.split() && !p_.chunk_outer) {
      body = For::Make(ch, 0, chunks_.count(), LoopKind::kSerial, body);
    }
    const LoopKind kind = p_.parallel ? LoopKind::kParallel : LoopKind::kSerial;
    Stmt loop = For::Make(f, 0, p_.s.n * tiles * row_blocks, kind, body);
    if (chunks_.split() && p_.chunk_outer) {
      loop = For::Make(ch, 0, chunks_.count(), LoopKind::kSerial, loop);
    }
    return loop;
  }

  // Row block rb (the last one may be shorter) of group g.
  Stmt RowBlock(const Expr& n, const Expr& g, const Expr& rb, const Expr& chunk) const {
    const Expr p0 = p_.pt == 1 ? rb : rb * p_.pt;
    const int64_t rest = p_.p % p_.pt;
    if (rest == 0) {
      return Group(n, g, p0, p_.pt, chunk);
    }
    return IfThenElse::Make(rb < p_.p / p_.pt, Group(n, g, p0, p_.pt, chunk),
                            Group(n, g, p0, rest, chunk));
  }

  // The register tiles of group g in `rows` rows from p0, in the order tile_order says.
  Stmt Group(const Expr& n, const Expr& g, const Expr& p0, int64_t rows, const Expr& chunk) const {
    auto tile = [&](const Expr& kob0, const Expr& q0, int64_t width, std::optional<int64_t> edge) {
      return MicroKernel(TileAt{n, kob0, p0, rows, q0, width, edge, chunk});
    };
    if (p_.kt == 1) {
      return Segments([&](const Expr& q0, int64_t width, std::optional<int64_t> edge) {
        return tile(g * p_.kb, q0, width, edge);
      });
    }
    const Expr extent = GroupExtent(g, p_.kt, groups());
    if (p_.tile_order == 0) {
      Var kg("kg");
      return For::Make(kg, 0, extent, LoopKind::kSerial,
                       Segments([&](const Expr& q0, int64_t width, std::optional<int64_t> edge) {
                         return tile((g * p_.kt + kg) * p_.kb, q0, width, edge);
                       }));
    }
    // Each tile along the width for every register tile of output blocks of the group.
    return Segments([&](const Expr& q0, int64_t width, std::optional<int64_t> edge) {
      Var kg("kg");
      return For::Make(kg, 0, extent, LoopKind::kSerial,
                       tile((g * p_.kt + kg) * p_.kb, q0, width, edge));
    });
  }

  // A whole output row of tiles: left border, interior tiles, right border. Tiles whose window
  // crosses the left or right border start at constant positions, so that the taps falling
  // outside are left out when the kernel is generated; the tiles in between start at
  // loop-dependent positions and check nothing.
  using TileFn = std::function<Stmt(const Expr& q0, int64_t width, std::optional<int64_t> edge)>;
  Stmt Segments(const TileFn& tile) const {
    std::vector<Stmt> segments;
    const auto [left, right] = InteriorTilesOf(p_.s, p_.qt);
    auto edge_tiles = [&](int64_t begin, int64_t end) {
      for (int64_t q0 = begin; q0 < end; q0 += p_.qt) {
        const int64_t width = std::min(p_.qt, end - q0);
        segments.push_back(tile(Expr(q0), width, q0));
      }
    };
    edge_tiles(0, left);
    const int64_t full = (right - left) / p_.qt, rem = (right - left) % p_.qt;
    if (full > 0) {
      Var t("t");
      segments.push_back(
          For::Make(t, 0, full, LoopKind::kSerial, tile(left + t * p_.qt, p_.qt, std::nullopt)));
    }
    if (rem > 0) {
      segments.push_back(tile(Expr(left + full * p_.qt), rem, std::nullopt));
    }
    edge_tiles(right, p_.q);
    return Block::Make(std::move(segments));
  }

  Expr InputIndex(const Expr& n, const Expr& cb, const Expr& y, const Expr& x,
                  const Expr& ci) const {
    return (((n * p_.cb + cb) * p_.s.h + y) * p_.s.w + x) * p_.b + ci;
  }

  // acc[rows * width][kb * vpb] = the tile, then the epilogue and whole-vector stores. With the
  // reduction in chunks, the sums so far come from the output before a chunk and go back after.
  Stmt MicroKernel(const TileAt& at) const {
    const Conv2dShape& s = p_.s;
    const int lanes = static_cast<int>(p_.vw);
    const int64_t vectors = p_.kb * p_.vpb;
    const int64_t positions = at.rows * at.width;
    Buffer acc(at.edge_q0 ? "acc_edge" : (at.width == p_.qt ? "acc" : "acc_rest"),
               MemoryScope::kStack);
    auto acc_at = [&](const Expr& j, const Expr& u) { return (j * vectors + u) * p_.vw; };
    auto pos = [&](const Expr& i, const Expr& j) { return at.rows == 1 ? j : i * at.width + j; };
    auto row = [&](const Expr& i) { return at.rows == 1 ? at.p0 : at.p0 + i; };
    auto over_rows = [&](const Var& i, const Stmt& body) {
      return at.rows == 1 ? body : For::Make(i, 0, at.rows, LoopKind::kUnrolled, body);
    };

    Var j("j"), u("u");
    Stmt zero =
        For::Make(j, 0, positions, LoopKind::kUnrolled,
                  For::Make(u, 0, vectors, LoopKind::kUnrolled,
                            Store::Make(acc, acc_at(j, u), ir::BroadcastTo(Expr(0.0f), lanes))));

    Var cb("cb"), r("r"), t("s"), ci("ci"), u2("u");
    auto y_of = [&](const Expr& i) { return row(i) * s.stride - s.pad + r * s.dilation; };
    // Weight vector u of the tile: block kob0 + u / vpb, lanes (u % vpb) * vw.
    auto w_index = [&](const Expr& tap) {
      return ((((at.kob0 + u2 / p_.vpb) * p_.cb + cb) * s.r + r) * s.s + tap) * p_.b * p_.b +
             ci * p_.b + (u2 % p_.vpb) * p_.vw;
    };
    // With several rows and padding, a row of the window above or below the input reads zeros
    // (a load at a clamped row, then a select), so that all rows share the weight loads.
    const bool masked_rows = at.rows > 1 && s.pad > 0;
    // The FMAs of position `jp` of the tile, input row y and tap `tap` (input column x) for
    // every weight vector.
    auto fmas = [&](const Expr& jp, const Expr& y, const Expr& tap, const Expr& x) {
      Expr value;
      if (masked_rows) {
        const Expr yc = ir::Max::Make(ir::Min::Make(y, Expr(s.h - 1)), Expr(int64_t{0}));
        value = ir::LoadOrZero(input_, InputIndex(at.n, cb, yc, x, ci), 1, y >= 0 && y < s.h);
      } else {
        value = input_(InputIndex(at.n, cb, y, x, ci));
      }
      return For::Make(u2, 0, vectors, LoopKind::kUnrolled,
                       Store::Make(acc, acc_at(jp, u2),
                                   Fma::Make(ir::BroadcastTo(value, lanes),
                                             Load::Make(weight_, w_index(tap), lanes),
                                             Load::Make(acc, acc_at(jp, u2), lanes))));
    };
    const FilterLoopKinds filter = FilterKindsFor(p_.unroll_rs);
    auto channels = [&](const Stmt& body) {
      return p_.unroll_ci <= 1
                 ? ForUnrolledBy(ci, 0, p_.b, 1,
                                 p_.unroll_ci == 1 ? LoopKind::kUnrolled : LoopKind::kSerial, body)
                 : ForUnrolledBy(ci, 0, p_.b, p_.unroll_ci, LoopKind::kSerial, body);
    };
    // The window of filter row r for every row of the tile.
    Stmt window;
    if (!at.edge_q0) {
      Var i2("i"), j2("j");
      Stmt inner = For::Make(
          j2, 0, at.width, LoopKind::kUnrolled,
          fmas(pos(i2, j2), y_of(i2), t, (at.q0 + j2) * s.stride - s.pad + t * s.dilation));
      window = For::Make(t, 0, s.s, filter.s, channels(over_rows(i2, inner)));
    } else {
      // Each tap with the positions whose input column lies inside, known here.
      std::vector<Stmt> taps;
      for (int64_t tap = 0; tap < s.s; ++tap) {
        std::vector<Stmt> at_tap;
        for (int64_t i = 0; i < at.rows; ++i) {
          for (int64_t jj = 0; jj < at.width; ++jj) {
            const int64_t x = (*at.edge_q0 + jj) * s.stride - s.pad + tap * s.dilation;
            if (x >= 0 && x < s.w) {
              at_tap.push_back(fmas(pos(Expr(i), Expr(jj)), y_of(Expr(i)), Expr(tap), Expr(x)));
            }
          }
        }
        if (!at_tap.empty()) {
          taps.push_back(channels(Block::Make(std::move(at_tap))));
        }
      }
      if (taps.empty()) {
        taps.push_back(Block::Make({}));
      }
      window = Block::Make(std::move(taps));
    }
    if (s.pad > 0 && at.rows == 1) {
      // A row of the window above or below the input contributes nothing.
      const Expr y = y_of(Expr(int64_t{0}));
      window = IfThenElse::Make(y >= 0 && y < s.h, window);
    }
    Expr cb0 = int64_t{0}, cb_extent = p_.cb;
    if (at.chunk.defined()) {
      cb0 = chunks_.Begin(at.chunk);
      cb_extent = chunks_.Extent(at.chunk);
    }
    Stmt reduction =
        For::Make(cb, cb0, cb_extent, LoopKind::kSerial, For::Make(r, 0, s.r, filter.r, window));

    Var i3("i"), j3("j"), u3("u");
    Expr kob = at.kob0 + u3 / p_.vpb;
    Expr lane0 = (u3 % p_.vpb) * p_.vw;
    Expr out_index = (((at.n * p_.kbs + kob) * p_.p + row(i3)) * p_.q + at.q0 + j3) * p_.b + lane0;
    auto store = [&](bool epilogue) {
      Expr result = Load::Make(acc, acc_at(pos(i3, j3), u3), lanes);
      if (epilogue && EpilogueHasBias(p_.epilogue)) {
        result = result + Load::Make(bias_, kob * p_.b + lane0, lanes);
      }
      if (epilogue && EpilogueHasRelu(p_.epilogue)) {
        result = ir::Max::Make(result, ir::BroadcastTo(Expr(0.0f), lanes));
      }
      return over_rows(i3, For::Make(j3, 0, at.width, LoopKind::kUnrolled,
                                     For::Make(u3, 0, vectors, LoopKind::kUnrolled,
                                               Store::Make(output_, out_index, result))));
    };
    Stmt init = zero;
    Stmt finish = store(true);
    if (at.chunk.defined()) {
      Stmt reload =
          over_rows(i3, For::Make(j3, 0, at.width, LoopKind::kUnrolled,
                                  For::Make(u3, 0, vectors, LoopKind::kUnrolled,
                                            Store::Make(acc, acc_at(pos(i3, j3), u3),
                                                        Load::Make(output_, out_index, lanes)))));
      init = chunks_.Init(at.chunk, zero, reload);
      finish =
          chunks_.Finish(at.chunk, finish, p_.epilogue == Epilogue::kNone ? Stmt() : store(false));
    }
    return Allocate::Make(acc, positions * vectors * p_.vw, Block::Make({init, reduction, finish}));
  }

  const BlockedConvPlan p_;
  const ReductionChunks chunks_;
  Buffer input_{"input"}, weight_{"weight"}, bias_{"bias"}, output_{"output"};
};

}  // namespace

InteriorTiles InteriorTilesOf(const Conv2dShape& s, int64_t qt) {
  // Positions whose window lies inside the input along the width, [qa, qb): q * stride - pad >= 0
  // and q * stride - pad + (S - 1) * dilation <= W - 1.
  const int64_t q = s.q();
  const int64_t qa = std::min(q, (s.pad + s.stride - 1) / s.stride);
  const int64_t last = s.w - 1 + s.pad - (s.s - 1) * s.dilation;
  const int64_t qb = std::clamp<int64_t>(last >= 0 ? last / s.stride + 1 : 0, qa, q);
  InteriorTiles span;
  span.left = qa > 0 ? std::min(q, CeilDiv(qa, qt) * qt) : 0;
  span.right = qb < q ? std::max(span.left, q - CeilDiv(q - qb, qt) * qt) : q;
  return span;
}

ir::LoweredFunc BuildBlockedConvNest(const BlockedConvPlan& plan, std::string_view func_name) {
  return BlockedConvBuilder(plan).Build(func_name);
}

}  // namespace tune
