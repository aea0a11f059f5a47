#include "codegen/templates/conv2d_cpu_winograd_nest.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <string>
#include <utility>
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
    func.params = {input_, p_.prepared ? prepared_ : weight_};
    if (EpilogueHasBias(p_.epilogue)) {
      func.params.push_back(bias_);
    }
    func.params.push_back(output_);
    func.body = p_.order == 0 ? TileBlocksOuter() : ChannelChunksOuter();
    return func;
  }

  // Every filter transformed, weight -> prepared (PreparedFilters).
  PreparedWeights BuildPreparation(std::string_view func_name) const {
    const int64_t chunk = PreparedChunk(), vectors_per_chunk = chunk / p_.vw;
    Var kvec("kvec"), icb("icb"), ci("ci");
    const Expr c = icb * p_.b + ci;
    const Expr at = (kvec / vectors_per_chunk) * PreparedChunkFloats() + c * chunk +
                    (kvec % vectors_per_chunk) * p_.vw;
    PreparedWeights out;
    out.func.name = std::string(func_name);
    out.func.params = {weight_, prepared_};
    out.func.body = For::Make(kvec, 0, p_.kvecs, LoopKind::kSerial,
                              For::Make(icb, 0, p_.cb, LoopKind::kSerial,
                                        For::Make(ci, 0, p_.b, LoopKind::kSerial,
                                                  FilterTransform(kvec, icb, ci, prepared_, at,
                                                                  UPointStride(p_.s.c, chunk)))));
    out.floats = p_.s.k / chunk * PreparedChunkFloats();
    return out;
  }

 private:
  // The transformed inputs V[xi][tile][c] and the GEMMs' results M[xi][tile][k] share one
  // buffer (M from MOffset() on), and so do the transformed filters of orders 1 and 2 (from
  // WorkSize() on, `extra` floats): one allocation per call and thread, which the C library
  // keeps for the next call. With several, it returns some of them to the system after each
  // call and the next faults them in again (measured at 7x7: a third more time for order 1,
  // 11-25% more for order 2).
  int64_t MOffset() const { return points() * VPointStride(); }
  int64_t WorkSize() const {
    return MOffset() + points() * MPointStride() * (p_.order == 0 ? 1 : p_.kvecs / p_.kv);
  }

  // The distance between the points xi of V, M and U: their rows of one point, plus a cache line.
  // Without it, a transform's stores (or loads) of the alpha^2 points of one tile or filter are
  // a power of two of bytes apart in many shapes (16 KiB for U of 64 x 64 channels, 32 KiB for V
  // of 16 tiles x 512 channels) and fall into one set of the L1 cache, evicting each other.
  static constexpr int64_t kPointPad = 16;
  int64_t VPointStride() const { return p_.tb * p_.s.c + kPointPad; }
  int64_t MPointStride() const {
    return p_.tb * (p_.order == 0 ? p_.s.k : p_.kv * p_.vw) + kPointPad;
  }
  int64_t UPointStride(int64_t rows, int64_t chunk) const { return rows * chunk + kPointPad; }
  // Prepared filters (p_.prepared): U of every filter, in chunks of PreparedChunk() output
  // channels, U[chunk][xi][c][k - k0] with UPointStride(C, chunk) between points: the layout in
  // which the GEMMs read the U they transform themselves otherwise (order 0: one chunk of K;
  // orders 1 and 2: chunks of kv vectors).
  int64_t PreparedChunk() const { return p_.order == 0 ? p_.s.k : p_.kv * p_.vw; }
  int64_t PreparedChunkFloats() const { return points() * UPointStride(p_.s.c, PreparedChunk()); }

  Stmt AllocateWork(Stmt body, int64_t extra = 0) const {
    return Allocate::Make(work_, WorkSize() + extra, std::move(body));
  }

  // Where M holds output channel kchunk * kv * width + k_in of tile `tile` at point xi. Order 0:
  // M[xi][tile][k]. Orders 1 and 2 fill M one chunk of kv vectors at a time, and keep a chunk's
  // rows together, M[chunk][xi][tile][k in chunk]: rows K floats apart would fall into a few
  // sets of the L1 cache, and the tiles' rows evict each other.
  Expr MAt(const Expr& xi, const Expr& tile, const Expr& kchunk, const Expr& k_in) const {
    const int64_t chunk = p_.kv * p_.vw;
    if (p_.order == 0) {
      return MOffset() + xi * MPointStride() + tile * p_.s.k + kchunk * chunk + k_in;
    }
    return MOffset() + (kchunk * points() + xi) * MPointStride() + tile * chunk + k_in;
  }

  // body(first, count) for contiguous shares [first, first + count) of n iterations, one
  // parallel iteration per thread (the last share may be shorter); on one thread, body(0, n).
  Stmt PerThreadShares(
      int64_t n, const std::function<Stmt(const Expr& first, const Expr& count)>& body) const {
    if (!p_.parallel) {
      return body(Expr(int64_t{0}), Expr(n));
    }
    const int64_t share = CeilDiv(n, p_.threads);
    Var t("t");
    const Expr first = t * share;
    return For::Make(t, 0, CeilDiv(n, share), LoopKind::kParallel,
                     body(first, ir::Min::Make(Expr(share), Expr(n) - first)));
  }

  int lanes() const { return static_cast<int>(p_.vw); }
  int64_t points() const { return p_.alpha * p_.alpha; }
  // Tiles rounded up to whole register tiles: the rows of V that the GEMMs read.
  int64_t padded_tiles() const { return CeilDiv(p_.tiles, p_.jt) * p_.jt; }

  // Order 0: every filter transformed once into U[xi][c][k], then blocks of tb tiles,
  // each through input transform, GEMMs against all of U and output transform.
  // With prepared filters, no transform: the blocks read them.
  Stmt TileBlocksOuter() const {
    const Conv2dShape& s = p_.s;
    const FiltersAt u =
        p_.prepared ? PreparedFilters(Expr(int64_t{0})) : FiltersAt::Whole(u_, s.k, s.c);
    auto block = [&](const Expr& blk) -> Stmt {
      const Expr first = blk * p_.tb;
      return AllocateWork(
          Block::Make({InputTransform(first, p_.tb), Gemms(first, u, Expr(int64_t{0}), p_.kvecs),
                       OutputTransform(first, p_.tb, Expr(int64_t{0}), Expr(p_.kvecs))}));
    };
    Var f("f"), ci("ci");
    // U[xi * UPointStride(C, K) + c * K + k]
    const Expr kvec = f / p_.cb, icb = f % p_.cb;
    const Stmt filters = For::Make(
        f, 0, p_.kvecs * p_.cb, LoopKind::kSerial,
        For::Make(ci, 0, p_.b, LoopKind::kSerial,
                  FilterTransform(kvec, icb, ci, u_, (icb * p_.b + ci) * s.k + kvec * p_.vw,
                                  UPointStride(s.c, s.k))));
    // On several threads each transforms every filter into its own U, then runs its share of
    // the blocks: a U shared by the cores moved between their caches twice per call (each wrote
    // half, both read all of it), and a second parallel loop added a barrier. At 56x56 on two
    // cores this took the two threads from 1.4 to about 2 times one.
    return PerThreadShares(CeilDiv(p_.tiles, p_.tb), [&](const Expr& first, const Expr& mine) {
      Var i("i");
      Stmt blocks = For::Make(i, 0, mine, LoopKind::kSerial, block(first + i));
      if (p_.prepared) {
        return blocks;
      }
      return Allocate::Make(u_, points() * UPointStride(s.c, s.k), Block::Make({filters, blocks}));
    });
  }

  // Orders 1 and 2: every tile's input transform, then chunks of kv vectors of output channels,
  // each running the GEMMs of all tiles against its transformed filters, then every tile's
  // output transform; on several threads each thread does this for a share of the chunks (the
  // input transform in full: it is cheaper than sharing V between cores). For small images with
  // many channels, where U would not fit in cache. Order 1 transforms a chunk's filters for all
  // input channels first, into a buffer that stays in L2. Order 2 takes the reduction in chunks of
  // cc input channels and transforms the filters of the next chunk while the GEMMs of this one run
  // (SoftwarePipelinedGemms), so that the weights stream in while the FMA units work, into two
  // small buffers that stay in L1.
  // With prepared filters, each chunk's GEMMs read them, and order 2 is order 1.
  Stmt ChannelChunksOuter() const {
    const Conv2dShape& s = p_.s;
    const int64_t chunk = p_.kv * p_.vw;
    const bool pipelined = p_.order == 2 && chunks_.split() && !p_.prepared;
    const int64_t u_size = p_.prepared ? 0
                           : pipelined ? 2 * points() * UPointStride(p_.cc, chunk)
                                       : points() * UPointStride(s.c, chunk);
    // The transformed filters, after V and M in the work buffer (each thread's own).
    const FiltersAt u_whole = FiltersAt::Whole(work_, chunk, s.c, Expr(WorkSize()));
    auto chunk_body = [&](const Expr& kc) -> Stmt {
      if (p_.prepared) {
        return Gemms(Expr(int64_t{0}), PreparedFilters(kc), kc, p_.kv);
      }
      if (pipelined) {
        return SoftwarePipelinedGemms(kc, u_whole.buffer, u_whole.base);
      }
      // u[base + xi * UPointStride(C, chunk) + c * chunk + k - k0]
      const Expr kvec0 = kc * p_.kv;
      Var kvec("kvec"), icb("icb"), ci("ci");
      const Expr c = icb * p_.b + ci;
      Stmt filters =
          For::Make(kvec, 0, p_.kv, LoopKind::kSerial,
                    For::Make(icb, 0, p_.cb, LoopKind::kSerial,
                              For::Make(ci, 0, p_.b, LoopKind::kSerial,
                                        FilterTransform(kvec0 + kvec, icb, ci, u_whole.buffer,
                                                        u_whole.base + c * chunk + kvec * p_.vw,
                                                        UPointStride(s.c, chunk)))));
      return Block::Make({filters, Gemms(Expr(int64_t{0}), u_whole, kc, p_.kv)});
    };
    // On several threads each transforms every tile's input into its own V, runs the GEMMs of
    // a contiguous share of the chunks into its own M and transforms those output channels
    // back: nothing one core writes is read by the other, and the threads meet only at the end.
    return PerThreadShares(p_.kvecs / p_.kv, [&](const Expr& first, const Expr& mine) {
      Var i("i");
      return AllocateWork(
          Block::Make({InputTransform(Expr(int64_t{0}), p_.tb),
                       For::Make(i, 0, mine, LoopKind::kSerial, chunk_body(first + i)),
                       OutputTransform(Expr(int64_t{0}), p_.tb, first * p_.kv, mine * p_.kv)}),
          u_size);
    });
  }

  // Order 2's GEMMs for the kv vectors of output channels of chunk kc, over chunks of cc input
  // channels. buffer[base...] holds two slots of transformed filters, slot[xi][c - chunk
  // start][k - k0]: the GEMMs of chunk ch read slot ch % 2 while each iteration of their
  // outermost loop transforms its share of the kv * cc filters of chunk ch + 1 into the other
  // slot. Chunk 0's filters are transformed first.
  Stmt SoftwarePipelinedGemms(const Expr& kc, const Buffer& buffer, const Expr& base) const {
    const Expr kvec0 = kc * p_.kv;
    const int64_t chunk = p_.kv * p_.vw;
    const int64_t filters = p_.kv * p_.cc;
    const int64_t slot = points() * UPointStride(p_.cc, chunk);
    // Filter f of chunk `ch` (the vector f / cc of this call, input channel ch * cc + f % cc),
    // when that channel exists.
    auto transform = [&](const Expr& ch, const Expr& f) {
      const Expr kvec = f / p_.cc, cl = f % p_.cc, c = ch * p_.cc + cl;
      Stmt one = FilterTransform(kvec0 + kvec, c / p_.b, c % p_.b, buffer,
                                 base + (ch % 2) * slot + cl * chunk + kvec * p_.vw,
                                 UPointStride(p_.cc, chunk));
      return IfThenElse::Make(c < p_.s.c, one);
    };
    Var f("f");
    Stmt first = For::Make(f, 0, filters, LoopKind::kSerial, transform(Expr(int64_t{0}), f));
    FiltersAt u = FiltersAt::Whole(buffer, chunk, p_.cc, base + (ch_ % 2) * slot);
    u.chunked = true;
    u.interleave = [&](const Expr& it, int64_t extent) {
      const int64_t per = CeilDiv(filters, extent);
      Var fl("fl");
      const Expr fi = it * per + fl;
      return For::Make(
          fl, 0, per, LoopKind::kSerial,
          IfThenElse::Make(ch_ + 1 < chunks_.count() && fi < filters, transform(ch_ + 1, fi)));
    };
    return Block::Make({first, Gemms(Expr(int64_t{0}), u, kc, p_.kv)});
  }

  // The first input channel of the GEMMs' current reduction chunk (the loop over ch_; 0 when the
  // reduction is not split).
  Expr ReductionBegin() const { return chunks_.split() ? chunks_.Begin(ch_) : Expr(int64_t{0}); }

  // (G g G^T) of the filter of output-channel vector `kvec` and input channel icb * b + ci,
  // point xi stored at dst[at + xi * xi_stride + lane].
  Stmt FilterTransform(const Expr& kvec, const Expr& icb, const Expr& ci, const Buffer& dst,
                       const Expr& at, int64_t xi_stride) const {
    const Expr kob = kvec / p_.vpb, v = kvec % p_.vpb;
    std::vector<std::vector<Expr>> g(3, std::vector<Expr>(3));
    for (int64_t r = 0; r < 3; ++r) {
      for (int64_t t = 0; t < 3; ++t) {
        if (p_.plain) {
          // weight[k][c][r][t] for the vw output channels k of this vector: 9 C floats apart.
          const Expr k0 = kob * p_.b + v * p_.vw, c = icb * p_.b + ci;
          g[r][t] = Load::Make(weight_, Gathered(((k0 * p_.s.c + c) * 3 + r) * 3 + t, 9 * p_.s.c,
                                                 9 * p_.s.k * p_.s.c));
        } else {
          g[r][t] = Load::Make(
              weight_, ((((kob * p_.cb + icb) * 3 + r) * 3 + t) * p_.b + ci) * p_.b + v * p_.vw,
              lanes());
        }
      }
    }
    return TransformTile(w_.g, g, lanes(), [&](int64_t i, int64_t j, Expr value) {
      const int64_t xi = i * p_.alpha + j;
      return Store::Make(dst, at + xi * xi_stride, value);
    });
  }

  // The vw lanes base, base + stride, ... into a tensor of `size` floats: int32 lanes where they
  // hold every index (a gather or scatter of 16 int32 lanes is one instruction, of int64 lanes
  // two of 8).
  Expr Gathered(const Expr& base, int64_t stride, int64_t size) const {
    if (size > std::numeric_limits<int32_t>::max()) {
      return ir::Ramp::Make(base, stride, lanes());
    }
    return ir::Ramp::Make(ir::Cast::Make(ir::Type::Int32(), base),
                          ir::Cast::Make(ir::Type::Int32(), Expr(stride)), lanes());
  }

  // The index of the vector of input channels icb * b + v * vw + [0, vw) at (y, x) of image n:
  // dense in the blocked layout, a gather of H W apart in NCHW.
  Expr InputIndex(const Expr& n, const Expr& icb, const Expr& v, const Expr& y,
                  const Expr& x) const {
    const Conv2dShape& s = p_.s;
    if (p_.plain) {
      return Gathered(((n * s.c + icb * p_.b + v * p_.vw) * s.h + y) * s.w + x, s.h * s.w,
                      s.n * s.c * s.h * s.w);
    }
    return ir::Ramp::Make((((n * p_.cb + icb) * s.h + y) * s.w + x) * p_.b + v * p_.vw, 1, lanes());
  }

  // The same for output channels kob * b + lane0 + [0, vw): a scatter of P Q apart in NCHW.
  Expr OutputIndex(const Expr& n, const Expr& kob, const Expr& lane0, const Expr& y,
                   const Expr& x) const {
    if (p_.plain) {
      return Gathered(((n * p_.s.k + kob * p_.b + lane0) * p_.p + y) * p_.q + x, p_.p * p_.q,
                      p_.s.n * p_.s.k * p_.p * p_.q);
    }
    return ir::Ramp::Make((((n * p_.kbs + kob) * p_.p + y) * p_.q + x) * p_.b + lane0, 1, lanes());
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
  // it_order 0 runs the tiles outer, 1 the channel vectors.
  Stmt InputTransform(const Expr& first, int64_t count) const {
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
        d[i][k] = ir::Select::Make(inside, Load::Make(input_, InputIndex(tile.n, icb, v, yc, xc)),
                                   ir::BroadcastTo(Expr(0.0f), lanes()));
      }
    }
    Stmt transform = TransformTile(w_.bt, d, lanes(), [&](int64_t i, int64_t k, Expr value) {
      const int64_t xi = i * p_.alpha + k;
      return Store::Make(work_, xi * VPointStride() + j * s.c + icb * p_.b + v * p_.vw, value);
    });
    if (p_.it_order == 1) {
      // Channel vectors outer: each pass reads one vector of a block from every tile.
      return For::Make(
          icb, 0, p_.cb, LoopKind::kSerial,
          For::Make(v, 0, p_.vpb, LoopKind::kSerial,
                    For::Make(j, 0, count, LoopKind::kSerial,
                              IfThenElse::Make(first + j < padded_tiles(), transform))));
    }
    Stmt per_tile = For::Make(icb, 0, p_.cb, LoopKind::kSerial,
                              For::Make(v, 0, p_.vpb, LoopKind::kSerial, transform));
    return For::Make(j, 0, count, LoopKind::kSerial,
                     IfThenElse::Make(first + j < padded_tiles(), per_tile));
  }

  // Where the GEMMs find the transformed filters: U element (xi, c, k - k0) at
  // buffer[base + xi * UPointStride(rows, stride) + c' * stride + k - k0], c' = c, or with
  // `chunked` c minus the first channel of the current chunk of the reduction (the buffer holds
  // that chunk's rows).
  // A defined `interleave` gives a statement that each iteration `it` of the GEMMs' outermost
  // loop (of `extent` iterations) runs before its GEMMs.
  struct FiltersAt {
    Buffer buffer;
    int64_t stride = 1, rows = 1;
    Expr base = Expr(int64_t{0});
    bool chunked = false;
    std::function<Stmt(const Expr& it, int64_t extent)> interleave;

    // `rows` rows of the filters' transforms from `base` on, nothing interleaved.
    static FiltersAt Whole(Buffer buffer, int64_t stride, int64_t rows,
                           Expr base = Expr(int64_t{0})) {
      FiltersAt u;
      u.buffer = std::move(buffer);
      u.stride = stride;
      u.rows = rows;
      u.base = std::move(base);
      return u;
    }
  };

  // The prepared filters of chunk `kchunk` of output channels (PreparedChunk).
  FiltersAt PreparedFilters(const Expr& kchunk) const {
    return FiltersAt::Whole(prepared_, PreparedChunk(), p_.s.c, kchunk * PreparedChunkFloats());
  }

  // M[xi][j][k] = sum_c V[xi][j][c] U[xi][c][k] for the register tiles of tiles first + ...
  // that hold a tile, every point xi, and `vectors` vectors of output channels: the chunks of kv
  // vectors from chunk kchunk0 on (see MAt). Register tiles of jt tiles x kv vectors; U as `u`
  // says (order 0 passes the whole U with kchunk0 = 0, orders 1 and 2 the buffer of their chunk,
  // which starts at its first channel). The loops over xi, the chunks of kv vectors and the
  // register tiles nest as gemm_order says; with cc < C a loop over chunks of input channels
  // goes around them, each register tile starting from the sums of the earlier chunks in M.
  Stmt Gemms(const Expr& first, const FiltersAt& u, const Expr& kchunk0, int64_t vectors) const {
    const Conv2dShape& s = p_.s;
    Var xi("xi"), kc("kc"), jr("jr"), c("c");
    Var jj("jj"), uu("u"), jj2("jj"), u2("u"), jj3("jj"), u3("u");
    Buffer acc("acc", MemoryScope::kStack);
    auto acc_at = [&](const Expr& row, const Expr& vec) { return (row * p_.kv + vec) * p_.vw; };
    const Expr row0 = jr * p_.jt;          // the register tile's first row (tile) of this block
    const Expr kl = kc * (p_.kv * p_.vw);  // within the vectors of this call
    Stmt zero = For::Make(
        jj, 0, p_.jt, LoopKind::kUnrolled,
        For::Make(uu, 0, p_.kv, LoopKind::kUnrolled,
                  Store::Make(acc, acc_at(jj, uu), ir::BroadcastTo(Expr(0.0f), lanes()))));
    const Expr u_c = u.chunked ? c - ReductionBegin() : Expr(c);
    Expr filter = Load::Make(
        u.buffer, u.base + xi * UPointStride(u.rows, u.stride) + u_c * u.stride + kl + u2 * p_.vw,
        lanes());
    Expr value =
        ir::BroadcastTo(Load::Make(work_, xi * VPointStride() + (row0 + jj2) * s.c + c), lanes());
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
      return MAt(xi, row0 + row, kchunk0 + kc, vec * p_.vw);
    };
    Stmt store = For::Make(
        jj3, 0, p_.jt, LoopKind::kUnrolled,
        For::Make(u3, 0, p_.kv, LoopKind::kUnrolled,
                  Store::Make(work_, m_index(jj3, u3), Load::Make(acc, acc_at(jj3, u3), lanes()))));
    Stmt init = zero;
    if (chunks_.split()) {
      // The sums of the earlier chunks of input channels, from M.
      Var jj4("jj"), u4("u");
      Stmt reload = For::Make(jj4, 0, p_.jt, LoopKind::kUnrolled,
                              For::Make(u4, 0, p_.kv, LoopKind::kUnrolled,
                                        Store::Make(acc, acc_at(jj4, u4),
                                                    Load::Make(work_, m_index(jj4, u4), lanes()))));
      init = chunks_.Init(ch_, zero, reload);
    }
    Stmt micro = Allocate::Make(acc, p_.jt * p_.kv * p_.vw, Block::Make({init, reduce, store}));
    // The three loops in the order gemm_order says, the guard of a register tile innermost.
    const Var loops[3] = {xi, kc, jr};
    const int64_t extents[3] = {points(), vectors / p_.kv, p_.tb / p_.jt};
    Stmt nest = IfThenElse::Make(first + jr * p_.jt < p_.tiles, micro);
    const std::vector<int>& order = WinogradGemmOrders()[static_cast<size_t>(p_.gemm_order)];
    // The loop whose iterations run u.interleave: the outermost of more than one iteration.
    const auto interleaved =
        std::find_if(order.begin(), order.end() - 1, [&](int loop) { return extents[loop] > 1; });
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (u.interleave && &*it == &*interleaved) {
        nest = Block::Make({u.interleave(loops[*it], extents[*it]), nest});
      }
      nest = For::Make(loops[*it], 0, extents[*it], LoopKind::kSerial, nest);
    }
    if (chunks_.split()) {
      nest = For::Make(ch_, 0, chunks_.count(), LoopKind::kSerial, nest);
    }
    return nest;
  }

  // Y = A^T M A for tiles first + j, j < count, and vectors kvec_begin + ... (kvec_count of
  // them) of output channels, the epilogue, and the stores of the positions inside the output.
  // ot_order 0 runs the tiles outer, 1 the vectors of output channels.
  Stmt OutputTransform(const Expr& first, int64_t count, const Expr& kvec_begin,
                       const Expr& kvec_count) const {
    Var j("j"), kv_local("kvec");
    const Expr kvec = kvec_begin + kv_local;
    const Expr t = first + j;
    const TileAt tile = Tile(t);
    std::vector<std::vector<Expr>> mt(p_.alpha, std::vector<Expr>(p_.alpha));
    for (int64_t i = 0; i < p_.alpha; ++i) {
      for (int64_t k = 0; k < p_.alpha; ++k) {
        mt[i][k] = Load::Make(
            work_, MAt(Expr(i * p_.alpha + k), j, kvec / p_.kv, (kvec % p_.kv) * p_.vw), lanes());
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
      Stmt store = Store::Make(output_, OutputIndex(tile.n, kob, lane0, y, x),
                               ApplyEpilogue(p_.epilogue, value, bias));
      return always_inside ? store : IfThenElse::Make(y < p_.p && x < p_.q, store);
    });
    if (p_.ot_order == 1) {
      // Channel vectors outer: each pass writes one vector of channels of every tile.
      return For::Make(
          kv_local, 0, kvec_count, LoopKind::kSerial,
          For::Make(j, 0, count, LoopKind::kSerial, IfThenElse::Make(t < p_.tiles, transform)));
    }
    return For::Make(j, 0, count, LoopKind::kSerial,
                     IfThenElse::Make(t < p_.tiles, For::Make(kv_local, 0, kvec_count,
                                                              LoopKind::kSerial, transform)));
  }

  const WinogradPlan p_;
  const WinogradMatrices& w_;
  const ReductionChunks chunks_;
  Buffer input_{"input"}, weight_{"weight"}, bias_{"bias"}, output_{"output"};
  Buffer prepared_{"prepared"};
  Buffer u_{"wino_u", MemoryScope::kStack}, work_{"wino_vm", MemoryScope::kStack};
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

PreparedWeights BuildWinogradPreparation(const WinogradPlan& plan, std::string_view func_name) {
  return WinogradBuilder(plan).BuildPreparation(func_name);
}

}  // namespace tune
