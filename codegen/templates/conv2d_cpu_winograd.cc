#include "codegen/templates/conv2d_cpu_winograd.h"

#include <algorithm>
#include <string>

#include "codegen/templates/cpu_vector_info.h"
#include "codegen/templates/template_util.h"
#include "codegen/templates/winograd_transform.h"
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
using ir::Load;
using ir::LoopKind;
using ir::MemoryScope;
using ir::Stmt;
using ir::Store;
using ir::Var;

absl::Status CheckShape(const Workload& workload) {
  if (workload.op() != OpKind::kConv2d) {
    return absl::InvalidArgumentError(
        StrCat("conv2d.cpu.winograd builds conv2d kernels, not '", workload.ToString(), "'"));
  }
  const Conv2dShape& s = workload.conv2d();
  std::vector<std::string> wrong;
  if (s.r != 3 || s.s != 3) {
    wrong.push_back(StrCat("R=", s.r, ",S=", s.s));
  }
  if (s.stride != 1) {
    wrong.push_back(StrCat("stride=", s.stride));
  }
  if (s.dilation != 1) {
    wrong.push_back(StrCat("dilation=", s.dilation));
  }
  return RefuseShapeUnless("conv2d.cpu.winograd", "3x3 filters with stride 1 and dilation 1",
                           "R=3,S=3,stride=1,dilation=1", workload, wrong);
}

int64_t TilesFor(const Conv2dShape& s, int64_t m) {
  return s.n * CeilDiv(s.p(), m) * CeilDiv(s.q(), m);
}

ConfigSpace Space(const Workload& workload, const Target& target) {
  const Conv2dShape& s = workload.conv2d();
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  const int64_t kvecs = s.k / VectorsOfBlock(std::max<int64_t>(s.block, 1), cpu.lanes).width;
  const int64_t registers = cpu.registers;
  ConfigSpace space;
  space.AddKnob("m", {2, 4}, "output tile m x m: Winograd F(m,3)");
  space.AddKnob("jt", {2, 4, 6, 7, 8, 10, 12, 14}, "tiles in the register tile of the GEMMs");
  std::vector<int64_t> kvs;
  for (int64_t kv : {1, 2, 3, 4}) {
    if (kvecs % kv == 0) {
      kvs.push_back(kv);
    }
  }
  space.AddKnob("kv", kvs, "vectors of output channels in the register tile (dividing K / width)");
  space.AddKnob("tr", {1, 2, 3, 4, 6, 8},
                "order 0: register tiles per block of tiles (tb = jt * tr); order 1: 1");
  space.AddKnob("order", {0, 1},
                "0: filters transformed once, blocks of tiles outer; 1: chunks of kv vectors of "
                "output channels outer, each transforming its filters, all tiles at once");
  space.AddConstraint("order == 1 needs tr == 1 (it takes all tiles at once)", [](const Config& c) {
    return KnobValue(c, "order") == 0 || KnobValue(c, "tr") == 1;
  });
  space.AddConstraint(
      fmt::format("jt*kv + kv + 1 <= {} (accumulators and filter vectors fit the registers)",
                  registers),
      [registers](const Config& c) {
        return KnobValue(c, "jt") * KnobValue(c, "kv") + KnobValue(c, "kv") + 1 <= registers;
      });
  space.AddConstraint("jt * (tr - 1) < tiles of the layer (no block of empty register tiles)",
                      [s](const Config& c) {
                        return KnobValue(c, "jt") * (KnobValue(c, "tr") - 1) <
                               TilesFor(s, KnobValue(c, "m"));
                      });
  return space;
}

// Order 0's register tiles per block: at most 48 tiles a block, split so that the threads'
// contiguous shares of blocks (the parallel loop splits statically) hold equal numbers of tiles;
// the larger block on ties (fewer passes over the transformed filters). On one thread that is
// simply the largest block.
int64_t BalancedTilesPerBlock(int64_t tiles, int64_t jt, const Target& target,
                              const ConfigSpace& space) {
  const int64_t threads = std::max(1, target.threads);
  std::vector<std::pair<int64_t, double>> balance;  // (tr, tiles / (threads * busiest share))
  for (int64_t tr : space.FindKnob("tr")->values) {
    const int64_t tb = tr * jt;
    if (tb <= 48 && jt * (tr - 1) < tiles) {
      const int64_t busiest = std::min(tiles, CeilDiv(CeilDiv(tiles, tb), threads) * tb);
      balance.emplace_back(tr, static_cast<double>(tiles) / static_cast<double>(threads * busiest));
    }
  }
  double most = 0;
  for (const auto& [tr, b] : balance) {
    most = std::max(most, b);
  }
  int64_t best_tr = 1;
  for (const auto& [tr, b] : balance) {
    if (b >= most - 0.02) {
      best_tr = std::max(best_tr, tr);
    }
  }
  return best_tr;
}

// The config of one shape class: F(m,3), the loop order, and the register tile (jt tiles x kv
// vectors, kv <= kv_wanted) that does the most useful FMAs per cycle: the tiles' share of the
// rows computed (a partial register tile computes whole rows) times the FMAs per load (jt * kv
// FMAs take jt broadcasts and kv loads; two of each issue per cycle), the larger tile on ties.
// Order 0's blocks follow BalancedTilesPerBlock.
Config ClassConfig(const Workload& workload, const Target& target, int64_t m, int64_t order,
                   int64_t kv_wanted) {
  const Conv2dShape& s = workload.conv2d();
  const ConfigSpace space = Space(workload, target);
  const int64_t registers = CpuVectorInfoFor(target).registers;
  const int64_t tiles = TilesFor(s, m);
  Config config;
  config["m"] = m;
  config["order"] = order;
  double best = -1;
  for (int64_t kv : space.FindKnob("kv")->values) {
    for (int64_t jt : space.FindKnob("jt")->values) {
      if (kv > std::max<int64_t>(kv_wanted, space.FindKnob("kv")->values.front()) ||
          jt * kv + kv + 1 > registers) {
        continue;
      }
      const double useful =
          static_cast<double>(tiles) / static_cast<double>(CeilDiv(tiles, jt) * jt);
      const double issue =
          std::min(1.0, static_cast<double>(jt * kv) / static_cast<double>(jt + kv));
      const double score = useful * issue + 1e-4 * static_cast<double>(jt * kv);
      if (score > best) {
        best = score;
        config["kv"] = kv;
        config["jt"] = jt;
      }
    }
  }
  config["tr"] = order == 0 ? BalancedTilesPerBlock(tiles, config["jt"], target, space) : 1;
  return config;
}

// Measured on AVX-512 (bench/RESULTS.md): F(4,3) from 32x32 outputs up, F(2,3) below; the
// filters transformed once (order 0) while they fit in a core's L2 cache (2 MiB), else per
// chunk of output channels (order 1).
Config DefaultConfig(const Workload& workload, const Target& target) {
  const Conv2dShape& s = workload.conv2d();
  const int64_t m = std::min(s.p(), s.q()) >= 32 ? 4 : 2;
  const int64_t u_bytes = (m + 2) * (m + 2) * s.c * s.k * 4;
  const int64_t order = u_bytes > (int64_t{2} << 20) ? 1 : 0;
  Config config = ClassConfig(workload, target, m, order, 2);
  TUNE_CHECK(Space(workload, target).IsValid(config)) << ConfigToString(config);
  return config;
}

// Both tile sizes in both orders, with register tiles of up to 2 and of 1 vector.
std::vector<Config> Seeds(const Workload& workload, const Target& target) {
  std::vector<Config> seeds;
  for (int64_t order : {0, 1}) {
    for (int64_t m : {2, 4}) {
      for (int64_t kv : {2, 1}) {
        seeds.push_back(ClassConfig(workload, target, m, order, kv));
      }
    }
  }
  return seeds;
}

struct Plan {
  Conv2dShape s;
  int64_t p, q;        // output height and width
  int64_t b, cb, kbs;  // channels per block, input and output blocks
  int64_t vw, vpb;     // vector width, vectors per block
  int64_t kvecs;       // vectors of output channels (K / vw)
  int64_t m, alpha;    // F(m, 3)
  int64_t th, tw;      // tiles along the height and the width
  int64_t tiles;       // n * th * tw
  int64_t jt, kv, tr;  // register tile (jt tiles x kv vectors), register tiles per block
  int64_t tb;          // tiles per block (order 1: all tiles, rounded up to jt)
  int order;           // 0: blocks of tiles outer; 1: chunks of output channels outer
  bool parallel;
  Epilogue epilogue;
};

class WinogradBuilder {
 public:
  explicit WinogradBuilder(const Plan& p) : p_(p), w_(WinogradFor(p.m)) {}

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
    Stmt per_tile = For::Make(icb, 0, p_.cb, LoopKind::kSerial,
                              For::Make(v, 0, p_.vpb, LoopKind::kSerial, transform));
    return For::Make(j, 0, count, kind, IfThenElse::Make(first + j < padded_tiles(), per_tile));
  }

  // M[xi][j][k0 + ...] = sum_c V[xi][j][c] U[xi][c][...] for the register tiles of tiles
  // first + ... that hold a tile, every point xi, and `vectors` vectors of output channels from
  // k0: register tiles of jt tiles x kv vectors. U element (xi, c, k - k0) is at
  // u[(xi * C + c) * u_stride + k - k0] (order 0 passes the whole U with k0 = 0, order 1 the
  // chunk's buffer, which starts at k0).
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
    Stmt reduce = For::Make(c, 0, s.c, LoopKind::kSerial,
                            For::Make(jj2, 0, p_.jt, LoopKind::kUnrolled,
                                      For::Make(u2, 0, p_.kv, LoopKind::kUnrolled, fma)));
    Stmt store = For::Make(jj3, 0, p_.jt, LoopKind::kUnrolled,
                           For::Make(u3, 0, p_.kv, LoopKind::kUnrolled,
                                     Store::Make(mb_, (row0 + jj3) * s.k + k0 + kl + u3 * p_.vw,
                                                 Load::Make(acc, acc_at(jj3, u3), lanes()))));
    Stmt micro = Allocate::Make(acc, p_.jt * p_.kv * p_.vw, Block::Make({zero, reduce, store}));
    const int64_t register_tiles = p_.tb / p_.jt;
    return For::Make(xi, 0, points(), LoopKind::kSerial,
                     For::Make(kc, 0, vectors / p_.kv, LoopKind::kSerial,
                               For::Make(jr, 0, register_tiles, LoopKind::kSerial,
                                         IfThenElse::Make(first + jr * p_.jt < p_.tiles, micro))));
  }

  // Y = A^T M A for tiles first + j, j < count, and each vector of output channels, the
  // epilogue, and the stores of the positions inside the output.
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
    return For::Make(
        j, 0, count, kind,
        IfThenElse::Make(t < p_.tiles, For::Make(kvec, 0, p_.kvecs, LoopKind::kSerial, transform)));
  }

  const Plan p_;
  const WinogradMatrices& w_;
  Buffer input_{"input"}, weight_{"weight"}, bias_{"bias"}, output_{"output"};
  Buffer u_{"wino_u", MemoryScope::kStack}, uc_{"wino_uc", MemoryScope::kStack},
      v_{"wino_v", MemoryScope::kStack}, mb_{"wino_m", MemoryScope::kStack};
};

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCpuWinograd, workload, target, config));
  Plan p;
  p.s = workload.conv2d();
  p.p = p.s.p();
  p.q = p.s.q();
  p.b = p.s.block;
  p.cb = p.s.c / p.b;
  p.kbs = p.s.k / p.b;
  const BlockVectors v = VectorsOfBlock(p.b, CpuVectorInfoFor(target).lanes);
  p.vw = v.width;
  p.vpb = v.per_block;
  p.m = KnobValue(config, "m");
  p.alpha = p.m + 2;
  p.th = CeilDiv(p.p, p.m);
  p.tw = CeilDiv(p.q, p.m);
  p.tiles = p.s.n * p.th * p.tw;
  p.jt = KnobValue(config, "jt");
  p.kv = KnobValue(config, "kv");
  p.tr = KnobValue(config, "tr");
  p.kvecs = p.s.k / p.vw;
  p.order = static_cast<int>(KnobValue(config, "order"));
  p.tb = p.order == 0 ? p.jt * p.tr : CeilDiv(p.tiles, p.jt) * p.jt;
  p.parallel = target.threads > 1;
  p.epilogue = workload.epilogue();
  return WinogradBuilder(p).Build(func_name);
}

// F(2,3)'s error is within a few percent of the standard bound; F(4,3)'s is not
// (kWinogradF43Tolerance says why).
double Tolerance(const Workload&, const Config& config) {
  return KnobValue(config, "m") == 4 ? kWinogradF43Tolerance : 1.0;
}

}  // namespace

const KernelTemplate kConv2dCpuWinograd = {
    .name = "conv2d.cpu.winograd",
    .version = 1,
    .op = OpKind::kConv2d,
    .target_kind = TargetKind::kLlvm,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .blocked_conv_layout = true,
    .seeds = &Seeds,
    .check_shape = &CheckShape,
    .tolerance = &Tolerance,
};

}  // namespace tune
