#include "codegen/templates/conv2d_cpu_winograd_nest.h"

#include <string>
#include <vector>

#include "codegen/templates/conv2d_cpu_loops.h"
#include "codegen/templates/template_util.h"
#include "codegen/templates/winograd_transform.h"

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
using ir::Var;

class WinogradBuilder {
 public:
  explicit WinogradBuilder(const WinogradPlan& p)
      : p_(p), w_(WinogradFor(p.m)), chunks_{.total = p.s.c, .chunk = p.cc} {}

  ir::LoweredFunc Build(std::string_view func_name) const {
    ir::LoweredFunc func;
    func.name = std::string(func_name);
    func.params = {input_, weight_};
    if (EpilogueHasBias(p_.epilogue)) {
      func.params.push_back(bias_);
    }
    func.params.push_back(output_);
    func.body = p_.order == 0 ? TileBlocksOuter() : ChannelChunksOuter();
    return func;
  }

 private:
  LoopKind Outer() const { return p_.parallel ? LoopKind::kParallel : LoopKind::kSerial; }
  int lanes() const { return static_cast<int>(p_.vw); }
  int64_t points() const { return p_.alpha * p_.alpha; }
  // Tiles rounded up to whole register tiles: the rows of V that the GEMMs read.
  int64_t padded_tiles() const { return CeilDiv(p_.tiles, p_.jt) * p_.jt; }

  // Order 0: every filter transformed once into U[xi][c][k], then blocks of tb tiles (parallel)
  // each through input transform, GEMMs against all of U and output transform.
  Stmt TileBlocksOuter() const {
    const Conv2dShape& s = p_.s;
    Var blk("blk");
    const Expr first = blk * p_.tb;
    Stmt body = Block::Make({InputTransform(first, p_.tb, LoopKind::kSerial),
                             Gemms(first, u_, p_.s.k, Expr(int64_t{0}), p_.kvecs),
                             OutputTransform(first, p_.tb, LoopKind::kSerial)});
    body = Allocate::Make(mb_, points() * p_.tb * s.k, body);
    body = Allocate::Make(v_, points() * p_.tb * s.c, body);
    Stmt blocks = For::Make(blk, 0, CeilDiv(p_.tiles, p_.tb), Outer(), body);
    Var f("f");
    Stmt filters = For::Make(f, 0, p_.kvecs * p_.cb, Outer(),
                             FilterTransform(f / p_.cb, f % p_.cb, u_, s.k, (f / p_.cb) * p_.vw));
    return Allocate::Make(u_, points() * s.c * s.k, Block::Make({filters, blocks}));
  }

  // Order 1: every tile's input transform, then chunks of kv vectors of output channels
  // (parallel), each transforming its filters into a buffer that stays in cache and running the
  // GEMMs of all tiles against it, then every tile's output transform. For small images with
  // many channels, where U would not fit in cache.
  Stmt ChannelChunksOuter() const {
    const Conv2dShape& s = p_.s;
    const int64_t chunk = p_.kv * p_.vw;
    Var kc("kc"), kvec("kvec"), icb("icb");
    const Expr kvec0 = kc * p_.kv;
    Stmt filters =
        For::Make(kvec, 0, p_.kv, LoopKind::kSerial,
                  For::Make(icb, 0, p_.cb, LoopKind::kSerial,
                            FilterTransform(kvec0 + kvec, icb, uc_, chunk, kvec * p_.vw)));
    Stmt chunks = For::Make(
        kc, 0, p_.kvecs / p_.kv, Outer(),
        Allocate::Make(
            uc_, points() * s.c * chunk,
            Block::Make({filters, Gemms(Expr(int64_t{0}), uc_, chunk, kvec0 * p_.vw, p_.kv)})));
    Stmt body = Block::Make({InputTransform(Expr(int64_t{0}), p_.tb, Outer()), chunks,
                             OutputTransform(Expr(int64_t{0}), p_.tb, Outer())});
    body = Allocate::Make(mb_, points() * p_.tb * s.k, body);
    return Allocate::Make(v_, points() * p_.tb * s.c, body);
  }

  // (G g G^T) of the filters of output-channel vector `kvec` and input block `icb`, stored at
  // dst[(xi * C + c) * k_stride + k_offset + lane].
  Stmt FilterTransform(const Expr& kvec, const Expr& icb, const Buffer& dst, int64_t k_stride,
                       const Expr& k_offset) const {
    const Conv2dShape& s = p_.s;
    Var ci("ci");
    const Expr kob = kvec / p_.vpb, v = kvec % p_.vpb;
    std::vector<std::vector<Expr>> g(3, std::vector<Expr>(3));
    for (int64_t r = 0; r < 3; ++r) {
      for (int64_t t = 0; t < 3; ++t) {
        g[r][t] = Load::Make(
            weight_, ((((kob * p_.cb + icb) * 3 + r) * 3 + t) * p_.b + ci) * p_.b + v * p_.vw,
            lanes());
      }
    }
    Stmt transform = TransformTile(w_.g, g, lanes(), [&](int64_t i, int64_t j, Expr value) {
      const int64_t xi = i * p_.alpha + j;
      return Store::Make(dst, (xi * s.c + icb * p_.b + ci) * k_stride + k_offset, value);
    });
    return For::Make(ci, 0, p_.b, LoopKind::kSerial, transform);
  }

  // The image and tile coordinates of tile `t`.
  struct TileAt {
    Expr n, ty, tx;
  };
  TileAt Tile(const Expr& t) const {
    const int64_t per_image = p_.th * p_.tw;
    return {t / per_image, (t % per_image) / p_.tw, t % p_.tw};
  }

  // V[xi][j][c] for tiles first + j, j < count: rows past the last tile up to a whole register
  // tile repeat the last tile (their results are not stored); rows past that are left alone.
  // it_order 0 runs the tiles outer (the loop of `kind`), 1 the channel vectors.
  Stmt InputTransform(const Expr& first, int64_t count, LoopKind kind) const {
    const Conv2dShape& s = p_.s;
    Var j("j"), icb("icb"), v("v");
    const TileAt tile = Tile(ir::Min::Make(first + j, Expr(p_.tiles - 1)));
    const Expr y0 = tile.ty * p_.m - s.pad, x0 = tile.tx * p_.m - s.pad;
    std::vector<std::vector<Expr>> d(p_.alpha, std::vector<Expr>(p_.alpha));
    for (int64_t i = 0; i < p_.alpha; ++i) {
      const Expr y = y0 + i;
      const Expr yc = ir::Max::Make(ir::Min::Make(y, Expr(s.h - 1)), Expr(int64_t{0}));
      for (int64_t k = 0; k < p_.alpha; ++k) {
        const Expr x = x0 + k;
        const Expr xc = ir::Max::Make(ir::Min::Make(x, Expr(s.w - 1)), Expr(int64_t{0}));
        const Expr inside = y >= Expr(int64_t{0}) && y < s.h && x >= Expr(int64_t{0}) && x < s.w;
        d[i][k] = ir::LoadOrZero(
            input_, (((tile.n * p_.cb + icb) * s.h + yc) * s.w + xc) * p_.b + v * p_.vw, lanes(),
            inside);
      }
    }
    Stmt transform = TransformTile(w_.bt, d, lanes(), [&](int64_t i, int64_t k, Expr value) {
      const int64_t xi = i * p_.alpha + k;
      return Store::Make(v_, (xi * p_.tb + j) * s.c + icb * p_.b + v * p_.vw, value);
    });
    if (p_.it_order == 1) {
      // Channel vectors outer: each pass reads one vector of a block from every tile.
      return For::Make(
          icb, 0, p_.cb, kind,
          For::Make(v, 0, p_.vpb, LoopKind::kSerial,
                    For::Make(j, 0, count, LoopKind::kSerial,
                              IfThenElse::Make(first + j < padded_tiles(), transform))));
    }
    Stmt per_tile = For::Make(icb, 0, p_.cb, LoopKind::kSerial,
                              For::Make(v, 0, p_.vpb, LoopKind::kSerial, transform));
    return For::Make(j, 0, count, kind, IfThenElse::Make(first + j < padded_tiles(), per_tile));
  }

  // M[xi][j][k0 + ...] = sum_c V[xi][j][c] U[xi][c][...] for the register tiles of tiles
  // first + ... that hold a tile, every point xi, and `vectors` vectors of output channels from
  // k0: register tiles of jt tiles x kv vectors. U element (xi, c, k - k0) is at
  // u[(xi * C + c) * u_stride + k - k0] (order 0 passes the whole U with k0 = 0, order 1 the
  // chunk's buffer, which starts at k0). The loops over xi, the chunks of kv vectors and the
  // register tiles nest as gemm_order says; with cc < C a loop over chunks of input channels
  // goes around them, each register tile starting from the sums of the earlier chunks in M.
  Stmt Gemms(const Expr& first, const Buffer& u, int64_t u_stride, const Expr& k0,
             int64_t vectors) const {
    const Conv2dShape& s = p_.s;
    Var xi("xi"), kc("kc"), jr("jr"), c("c");
    Var jj("jj"), uu("u"), jj2("jj"), u2("u"), jj3("jj"), u3("u");
    Buffer acc("acc", MemoryScope::kStack);
    auto acc_at = [&](const Expr& row, const Expr& vec) { return (row * p_.kv + vec) * p_.vw; };
    const Expr row0 = xi * p_.tb + jr * p_.jt;
    const Expr kl = kc * (p_.kv * p_.vw);  // within the vectors of this call
    Stmt zero = For::Make(
        jj, 0, p_.jt, LoopKind::kUnrolled,
        For::Make(uu, 0, p_.kv, LoopKind::kUnrolled,
                  Store::Make(acc, acc_at(jj, uu), ir::BroadcastTo(Expr(0.0f), lanes()))));
    Expr filter = Load::Make(u, (xi * s.c + c) * u_stride + kl + u2 * p_.vw, lanes());
    Expr value = ir::BroadcastTo(Load::Make(v_, (row0 + jj2) * s.c + c), lanes());
    Stmt fma = Store::Make(acc, acc_at(jj2, u2),
                           ir::Fma::Make(value, filter, Load::Make(acc, acc_at(jj2, u2), lanes())));
    Expr c0 = int64_t{0}, c_extent = s.c;
    if (chunks_.split()) {
      c0 = chunks_.Begin(ch_);
      c_extent = chunks_.Extent(ch_);
    }
    Stmt reduce = ForUnrolledBy(c, c0, c_extent, p_.unroll_c, LoopKind::kSerial,
                                For::Make(jj2, 0, p_.jt, LoopKind::kUnrolled,
                                          For::Make(u2, 0, p_.kv, LoopKind::kUnrolled, fma)));
    auto m_index = [&](const Expr& row, const Expr& vec) {
      return (row0 + row) * s.k + k0 + kl + vec * p_.vw;
    };
    Stmt store = For::Make(
        jj3, 0, p_.jt, LoopKind::kUnrolled,
        For::Make(u3, 0, p_.kv, LoopKind::kUnrolled,
                  Store::Make(mb_, m_index(jj3, u3), Load::Make(acc, acc_at(jj3, u3), lanes()))));
    Stmt init = zero;
    if (chunks_.split()) {
      // The sums of the earlier chunks of input channels, from M.
      Var jj4("jj"), u4("u");
      Stmt reload = For::Make(
          jj4, 0, p_.jt, LoopKind::kUnrolled,
          For::Make(u4, 0, p_.kv, LoopKind::kUnrolled,
                    Store::Make(acc, acc_at(jj4, u4), Load::Make(mb_, m_index(jj4, u4), lanes()))));
      init = chunks_.Init(ch_, zero, reload);
    }
    Stmt micro = Allocate::Make(acc, p_.jt * p_.kv * p_.vw, Block::Make({init, reduce, store}));
    // The three loops in the order gemm_order says, the guard of a register tile innermost.
    const Var loops[3] = {xi, kc, jr};
    const int64_t extents[3] = {points(), vectors / p_.kv, p_.tb / p_.jt};
    Stmt nest = IfThenElse::Make(first + jr * p_.jt < p_.tiles, micro);
    const std::vector<int>& order = WinogradGemmOrders()[static_cast<size_t>(p_.gemm_order)];
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      nest = For::Make(loops[*it], 0, extents[*it], LoopKind::kSerial, nest);
    }
    if (chunks_.split()) {
      nest = For::Make(ch_, 0, chunks_.count(), LoopKind::kSerial, nest);
    }
    return nest;
  }

  // Y = A^T M A for tiles first + j, j < count, and each vector of output channels, the
  // epilogue, and the stores of the positions inside the output. ot_order 0 runs the tiles outer
  // (the loop of `kind`), 1 the vectors of output channels.
  Stmt OutputTransform(const Expr& first, int64_t count, LoopKind kind) const {
    const Conv2dShape& s = p_.s;
    Var j("j"), kvec("kvec");
    const Expr t = first + j;
    const TileAt tile = Tile(t);
    std::vector<std::vector<Expr>> mt(p_.alpha, std::vector<Expr>(p_.alpha));
    for (int64_t i = 0; i < p_.alpha; ++i) {
      for (int64_t k = 0; k < p_.alpha; ++k) {
        mt[i][k] = Load::Make(mb_, ((i * p_.alpha + k) * p_.tb + j) * s.k + kvec * p_.vw, lanes());
      }
    }
    const Expr kob = kvec / p_.vpb, lane0 = (kvec % p_.vpb) * p_.vw;
    Expr bias;
    if (EpilogueHasBias(p_.epilogue)) {
      bias = Load::Make(bias_, kvec * p_.vw, lanes());
    }
    const bool always_inside = p_.p % p_.m == 0 && p_.q % p_.m == 0;
    Stmt transform = TransformTile(w_.at, mt, lanes(), [&](int64_t i, int64_t k, Expr value) {
      const Expr y = tile.ty * p_.m + i, x = tile.tx * p_.m + k;
      Stmt store =
          Store::Make(output_, (((tile.n * p_.kbs + kob) * p_.p + y) * p_.q + x) * p_.b + lane0,
                      ApplyEpilogue(p_.epilogue, value, bias));
      return always_inside ? store : IfThenElse::Make(y < p_.p && x < p_.q, store);
    });
    if (p_.ot_order == 1) {
      // Channel vectors outer: each pass writes one vector of channels of every tile.
      return For::Make(
          kvec, 0, p_.kvecs, kind,
          For::Make(j, 0, count, LoopKind::kSerial, IfThenElse::Make(t < p_.tiles, transform)));
    }
    return For::Make(
        j, 0, count, kind,
        IfThenElse::Make(t < p_.tiles, For::Make(kvec, 0, p_.kvecs, LoopKind::kSerial, transform)));
  }

  const WinogradPlan p_;
  const WinogradMatrices& w_;
  const ReductionChunks chunks_;
  Buffer input_{"input"}, weight_{"weight"}, bias_{"bias"}, output_{"output"};
  Buffer u_{"wino_u", MemoryScope::kStack}, uc_{"wino_uc", MemoryScope::kStack},
      v_{"wino_v", MemoryScope::kStack}, mb_{"wino_m", MemoryScope::kStack};
  Var ch_{"ch"};  // the chunk of input channels of the GEMMs' reduction
};

}  // namespace

const std::vector<std::vector<int>>& WinogradGemmOrders() {
  static const std::vector<std::vector<int>> orders = {
      {kGemmPoints, kGemmChannelChunks, kGemmTileRows},  // 0: one point's GEMM at a time
      {kGemmPoints, kGemmTileRows, kGemmChannelChunks},
      {kGemmChannelChunks, kGemmPoints, kGemmTileRows},
      {kGemmChannelChunks, kGemmTileRows, kGemmPoints},
      {kGemmTileRows, kGemmPoints, kGemmChannelChunks},
      {kGemmTileRows, kGemmChannelChunks, kGemmPoints},
  };
  return orders;
}

ir::LoweredFunc BuildWinogradNest(const WinogradPlan& plan, std::string_view func_name) {
  return WinogradBuilder(plan).Build(func_name);
}

}  // namespace tune
