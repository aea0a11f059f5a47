#include "codegen/templates/conv2d_cpu_blocked.h"

#include <algorithm>
#include <optional>
#include <string>

#include "codegen/templates/cpu_vector_info.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"
#include "common/strings.h"

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

ConfigSpace Space(const Workload& workload, const Target& target) {
  const Conv2dShape& s = workload.conv2d();
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  const int64_t blocks = s.k / std::max<int64_t>(s.block, 1);
  const int64_t per_block = VectorsOfBlock(std::max<int64_t>(s.block, 1), cpu.lanes).per_block;
  const int64_t registers = cpu.registers;
  ConfigSpace space;
  std::vector<int64_t> kbs;
  for (int64_t kb : {1, 2, 3, 4}) {
    if (blocks % kb == 0) {
      kbs.push_back(kb);
    }
  }
  space.AddKnob("kb", kbs, "blocks of output channels in the register tile (dividing K / block)");
  space.AddKnob("qt", AtMost({1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 28}, s.q(), 1),
                "output positions along the width in the register tile");
  space.AddKnob("unroll_rs", {0, 1}, "unroll the filter loops (r, s)");
  space.AddKnob("unroll_ci", {0, 1}, "unroll the loop over the channels of an input block");
  space.AddKnob("loop_order", {0, 1},
                "parallel loop order: 0 channel-block group outer, output row inner; 1 the "
                "reverse");
  space.AddConstraint(
      fmt::format("qt*kb*{0} + kb*{0} + 1 <= {1} (accumulators and weight vectors fit the vector "
                  "registers)",
                  per_block, registers),
      [per_block, registers](const Config& c) {
        const int64_t vectors = KnobValue(c, "kb") * per_block;
        return KnobValue(c, "qt") * vectors + vectors + 1 <= registers;
      });
  return space;
}

// Two blocks of output channels where K allows, and the widest tile of positions (up to 14) that
// fits beside their weight vectors: the shape of the NCHW template's fastest tiles.
Config DefaultConfig(const Workload& workload, const Target& target) {
  const ConfigSpace space = Space(workload, target);
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  const int64_t per_block = VectorsOfBlock(workload.conv2d().block, cpu.lanes).per_block;
  Config config;
  config["unroll_rs"] = workload.conv2d().r * workload.conv2d().s <= 9 ? 1 : 0;
  config["unroll_ci"] = 0;
  config["loop_order"] = 0;
  for (int64_t kb : {2, 1}) {
    config["kb"] = LargestAtMost(space.FindKnob("kb")->values, kb);
    const int64_t vectors = config["kb"] * per_block;
    const int64_t qt_limit = (cpu.registers - vectors - 1) / vectors;
    config["qt"] = LargestAtMost(space.FindKnob("qt")->values, std::min<int64_t>(qt_limit, 14));
    if (space.IsValid(config)) {
      break;
    }
  }
  TUNE_CHECK(space.IsValid(config)) << ConfigToString(config);
  return config;
}

struct Plan {
  Conv2dShape s;
  int64_t p, q;     // output height and width
  int64_t b;        // channels per block
  int64_t cb, kbs;  // input and output channel blocks
  int64_t vw, vpb;  // vector width, vectors per block
  int64_t kb, qt;   // register tile: output blocks x positions
  bool unroll_rs, unroll_ci;
  int loop_order;
  bool parallel;
  Epilogue epilogue;
  int64_t qa, qb;  // positions [qa, qb) read no padding along the width
};

class BlockedConvBuilder {
 public:
  explicit BlockedConvBuilder(const Plan& p) : p_(p) {}

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
  // The parallel loop over (image, group of kb output blocks, output row); each iteration does a
  // whole output row of its group: left border, interior tiles, right border.
  Stmt Rows() const {
    const int64_t groups = p_.kbs / p_.kb;
    Var f("f");
    Expr rest = f % (groups * p_.p);
    Expr n = f / (groups * p_.p);
    Expr group = p_.loop_order == 0 ? rest / p_.p : rest % groups;
    Expr row = p_.loop_order == 0 ? rest % p_.p : rest / groups;
    // Tiles whose window crosses the left or right border start at constant positions, so
    // that the taps falling outside are left out when the kernel is generated; the tiles in
    // between start at loop-dependent positions and check nothing.
    std::vector<Stmt> segments;
    const int64_t left = p_.qa > 0 ? std::min(p_.q, CeilDiv(p_.qa, p_.qt) * p_.qt) : 0;
    const int64_t right =
        p_.qb < p_.q ? std::max(left, p_.q - CeilDiv(p_.q - p_.qb, p_.qt) * p_.qt) : p_.q;
    auto edge_tiles = [&](int64_t begin, int64_t end) {
      for (int64_t q0 = begin; q0 < end; q0 += p_.qt) {
        const int64_t width = std::min(p_.qt, end - q0);
        segments.push_back(MicroKernel(n, group * p_.kb, row, Expr(q0), width, q0));
      }
    };
    edge_tiles(0, left);
    const int64_t full = (right - left) / p_.qt, rem = (right - left) % p_.qt;
    if (full > 0) {
      Var t("t");
      segments.push_back(
          For::Make(t, 0, full, LoopKind::kSerial,
                    MicroKernel(n, group * p_.kb, row, left + t * p_.qt, p_.qt, std::nullopt)));
    }
    if (rem > 0) {
      segments.push_back(
          MicroKernel(n, group * p_.kb, row, Expr(left + full * p_.qt), rem, std::nullopt));
    }
    edge_tiles(right, p_.q);
    const LoopKind kind = p_.parallel ? LoopKind::kParallel : LoopKind::kSerial;
    return For::Make(f, 0, p_.s.n * groups * p_.p, kind, Block::Make(std::move(segments)));
  }

  Expr InputIndex(const Expr& n, const Expr& cb, const Expr& y, const Expr& x,
                  const Expr& ci) const {
    return (((n * p_.cb + cb) * p_.s.h + y) * p_.s.w + x) * p_.b + ci;
  }

  // acc[width][kb * vpb] = the tile at output blocks [kob0, kob0 + kb), row `row`, positions
  // [q0, q0 + width), then the epilogue and whole-vector stores. `edge_q0`: q0 as a constant, for
  // a tile whose window crosses the left or right border (its taps outside the input are not
  // generated); nullopt for a tile inside the input.
  Stmt MicroKernel(const Expr& n, const Expr& kob0, const Expr& row, const Expr& q0, int64_t width,
                   std::optional<int64_t> edge_q0) const {
    const Conv2dShape& s = p_.s;
    const int lanes = static_cast<int>(p_.vw);
    const int64_t vectors = p_.kb * p_.vpb;
    Buffer acc(edge_q0 ? "acc_edge" : (width == p_.qt ? "acc" : "acc_rest"), MemoryScope::kStack);
    auto acc_at = [&](const Expr& j, const Expr& u) { return (j * vectors + u) * p_.vw; };

    Var j("j"), u("u");
    Stmt zero =
        For::Make(j, 0, width, LoopKind::kUnrolled,
                  For::Make(u, 0, vectors, LoopKind::kUnrolled,
                            Store::Make(acc, acc_at(j, u), ir::BroadcastTo(Expr(0.0f), lanes))));

    Var cb("cb"), r("r"), t("s"), ci("ci"), u2("u");
    const Expr y = row * s.stride - s.pad + r * s.dilation;
    // Weight vector u of the tile: block kob0 + u / vpb, lanes (u % vpb) * vw.
    auto w_index = [&](const Expr& tap) {
      return ((((kob0 + u2 / p_.vpb) * p_.cb + cb) * s.r + r) * s.s + tap) * p_.b * p_.b +
             ci * p_.b + (u2 % p_.vpb) * p_.vw;
    };
    // The FMAs of position j and tap `tap` (input column x) for every weight vector.
    auto fmas = [&](const Expr& j2, const Expr& tap, const Expr& x) {
      Expr value = input_(InputIndex(n, cb, y, x, ci));
      return For::Make(u2, 0, vectors, LoopKind::kUnrolled,
                       Store::Make(acc, acc_at(j2, u2),
                                   Fma::Make(ir::BroadcastTo(value, lanes),
                                             Load::Make(weight_, w_index(tap), lanes),
                                             Load::Make(acc, acc_at(j2, u2), lanes))));
    };
    const LoopKind filter = p_.unroll_rs ? LoopKind::kUnrolled : LoopKind::kSerial;
    const LoopKind channel = p_.unroll_ci ? LoopKind::kUnrolled : LoopKind::kSerial;
    Stmt window;
    if (!edge_q0) {
      Var j2("j");
      Stmt inner = For::Make(ci, 0, p_.b, channel,
                             For::Make(j2, 0, width, LoopKind::kUnrolled,
                                       fmas(j2, t, (q0 + j2) * s.stride - s.pad + t * s.dilation)));
      window = For::Make(t, 0, s.s, filter, inner);
    } else {
      // Each tap with the positions whose input column lies inside, known here.
      std::vector<Stmt> taps;
      for (int64_t tap = 0; tap < s.s; ++tap) {
        std::vector<Stmt> positions;
        for (int64_t jj = 0; jj < width; ++jj) {
          const int64_t x = (*edge_q0 + jj) * s.stride - s.pad + tap * s.dilation;
          if (x >= 0 && x < s.w) {
            positions.push_back(fmas(Expr(jj), Expr(tap), Expr(x)));
          }
        }
        if (!positions.empty()) {
          taps.push_back(For::Make(ci, 0, p_.b, channel, Block::Make(std::move(positions))));
        }
      }
      if (taps.empty()) {
        taps.push_back(Block::Make({}));
      }
      window = Block::Make(std::move(taps));
    }
    if (s.pad > 0) {
      // Rows of the window above or below the input contribute nothing.
      window = IfThenElse::Make(y >= 0 && y < s.h, window);
    }
    Stmt reduce = For::Make(cb, 0, p_.cb, LoopKind::kSerial, For::Make(r, 0, s.r, filter, window));

    Var j3("j"), u3("u");
    Expr kob = kob0 + u3 / p_.vpb;
    Expr lane0 = (u3 % p_.vpb) * p_.vw;
    Expr result = Load::Make(acc, acc_at(j3, u3), lanes);
    if (EpilogueHasBias(p_.epilogue)) {
      result = result + Load::Make(bias_, kob * p_.b + lane0, lanes);
    }
    if (EpilogueHasRelu(p_.epilogue)) {
      result = ir::Max::Make(result, ir::BroadcastTo(Expr(0.0f), lanes));
    }
    Expr out_index = (((n * p_.kbs + kob) * p_.p + row) * p_.q + q0 + j3) * p_.b + lane0;
    Stmt store = For::Make(
        j3, 0, width, LoopKind::kUnrolled,
        For::Make(u3, 0, vectors, LoopKind::kUnrolled, Store::Make(output_, out_index, result)));
    return Allocate::Make(acc, width * vectors * p_.vw, Block::Make({zero, reduce, store}));
  }

  const Plan p_;
  Buffer input_{"input"}, weight_{"weight"}, bias_{"bias"}, output_{"output"};
};

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCpuBlocked, workload, target, config));
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
  p.kb = KnobValue(config, "kb");
  p.qt = KnobValue(config, "qt");
  p.unroll_rs = KnobValue(config, "unroll_rs") != 0;
  p.unroll_ci = KnobValue(config, "unroll_ci") != 0;
  p.loop_order = static_cast<int>(KnobValue(config, "loop_order"));
  p.parallel = target.threads > 1;
  p.epilogue = workload.epilogue();
  // Positions whose window lies inside the input along the width: q * stride - pad >= 0 and
  // q * stride - pad + (S - 1) * dilation <= W - 1.
  const Conv2dShape& s = p.s;
  p.qa = std::min(p.q, (s.pad + s.stride - 1) / s.stride);
  const int64_t last = s.w - 1 + s.pad - (s.s - 1) * s.dilation;
  p.qb = std::clamp<int64_t>(last >= 0 ? last / s.stride + 1 : 0, p.qa, p.q);
  return BlockedConvBuilder(p).Build(func_name);
}

}  // namespace

const KernelTemplate kConv2dCpuBlocked = {
    .name = "conv2d.cpu.blocked",
    .version = 1,
    .op = OpKind::kConv2d,
    .target_kind = TargetKind::kLlvm,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
    .blocked_conv_layout = true,
};

}  // namespace tune
