#include "codegen/templates/conv2d_cpu_direct.h"

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
  const int64_t lanes = cpu.lanes;
  const int64_t registers = cpu.registers;
  ConfigSpace space;
  space.AddKnob("kv", AtMost({1, 2, 3, 4}, CeilDiv(s.k, lanes), 1),
                "output channels of the register tile, in vectors");
  space.AddKnob("qt", AtMost({1, 2, 3, 4, 6, 8, 10, 12, 14}, s.q(), 1),
                "output positions along the width in the register tile");
  space.AddKnob("unroll_rs", {0, 1}, "unroll the filter loops (r, s)");
  space.AddKnob("loop_order", {0, 1},
                "parallel loop order: 0 channel block outer, output row inner; 1 the reverse");
  space.AddConstraint(
      fmt::format("qt*kv + kv + 1 <= {} (accumulators fit the vector registers)", registers),
      [registers](const Config& c) {
        int64_t kv = KnobValue(c, "kv");
        return KnobValue(c, "qt") * kv + kv + 1 <= registers;
      });
  return space;
}

// Measured on AVX-512 (Emerald Rapids, 64->64 channels 3x3 at 56x56): 2 vectors of output
// channels x 8..10 output positions run at the FMA peak; wider tiles spill registers.
Config DefaultConfig(const Workload& workload, const Target& target) {
  const Conv2dShape& s = workload.conv2d();
  const CpuVectorInfo cpu = CpuVectorInfoFor(target);
  ConfigSpace space = Space(workload, target);
  Config config;
  config["kv"] = LargestAtMost(space.FindKnob("kv")->values, 2);
  config["unroll_rs"] = s.r * s.s <= 25 ? 1 : 0;
  config["loop_order"] = 0;
  // The widest tile up to 10 positions whose accumulators fit beside the weight vectors.
  int64_t kv = config["kv"];
  int64_t qt_limit = (cpu.registers - kv - 1) / kv;
  config["qt"] = LargestAtMost(space.FindKnob("qt")->values, std::min<int64_t>(qt_limit, 10));
  TUNE_CHECK(space.IsValid(config)) << ConfigToString(config);
  return config;
}

struct Plan {
  Conv2dShape s;
  int64_t p, q;  // output height and width
  int64_t lanes;
  int64_t kv, kblk, kb;  // vectors per channel block, channels per block, blocks
  int64_t qt;
  bool unroll_rs;
  int loop_order;
  bool parallel;
  Epilogue epilogue;
  int64_t hp, wp;  // padded input height and width
};

class Conv2dBuilder {
 public:
  explicit Conv2dBuilder(const Plan& p) : p_(p) {}

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

  // Every register tile of image n: the parallel loop over (channel block, output row), then
  // the tiles along the output width.
  Stmt Tiles() const {
    Var f("f"), t("t");
    Expr kb, p;
    if (p_.kb == 1) {
      kb = 0;
      p = f;
    } else if (p_.loop_order == 0) {
      kb = f / p_.p;
      p = f % p_.p;
    } else {
      kb = f % p_.kb;
      p = f / p_.kb;
    }
    std::vector<Stmt> row;
    row.push_back(
        For::Make(t, 0, p_.q / p_.qt, LoopKind::kSerial, ChannelBlocks(kb, p, t * p_.qt, p_.qt)));
    const int64_t rem = p_.q % p_.qt;
    if (rem > 0) {
      row.push_back(ChannelBlocks(kb, p, Expr(p_.q - rem), rem));
    }
    LoopKind kind = p_.parallel ? LoopKind::kParallel : LoopKind::kSerial;
    return For::Make(f, 0, p_.kb * p_.p, kind, Block::Make(std::move(row)));
  }

  // The tile at (kb, p, q0) of width `width`; the last channel block stores only the channels
  // below K.
  Stmt ChannelBlocks(const Expr& kb, const Expr& p, const Expr& q0, int64_t width) const {
    const int64_t valid_last = p_.s.k - (p_.kb - 1) * p_.kblk;
    if (p_.kb == 1 || valid_last == p_.kblk) {
      return MicroKernel(kb, p, q0, width, valid_last);
    }
    return IfThenElse::Make(kb < p_.kb - 1, MicroKernel(kb, p, q0, width, p_.kblk),
                            MicroKernel(kb, p, q0, width, valid_last));
  }

  // acc[width][kblk] = sum over (c, r, s) of input x packed weights, then the epilogue and a
  // store of the first `channels` channels of each position.
  Stmt MicroKernel(const Expr& kb, const Expr& p, const Expr& q0, int64_t width,
                   int64_t channels) const {
    const Conv2dShape& s = p_.s;
    const int lanes = static_cast<int>(p_.lanes);
    Buffer acc(width == p_.qt ? "acc" : "acc_edge", MemoryScope::kStack);
    Var j("j"), v("v");
    auto acc_at = [&](const Expr& jj, const Expr& vv) { return jj * p_.kblk + vv * lanes; };

    Stmt zero =
        For::Make(j, 0, width, LoopKind::kUnrolled,
                  For::Make(v, 0, p_.kv, LoopKind::kUnrolled,
                            Store::Make(acc, acc_at(j, v), ir::BroadcastTo(Expr(0.0f), lanes))));

    Var c("c"), r("r"), t("s"), j2("j"), v2("v");
    LoopKind filter_kind = p_.unroll_rs ? LoopKind::kUnrolled : LoopKind::kSerial;
    Expr w_index = (((kb * s.c + c) * s.r + r) * s.s + t) * p_.kblk + v2 * lanes;
    Expr x = LoadInput(c, p * s.stride + r * s.dilation, (q0 + j2) * s.stride + t * s.dilation);
    Stmt update =
        Store::Make(acc, acc_at(j2, v2),
                    Fma::Make(ir::BroadcastTo(x, lanes), Load::Make(packed_w_, w_index, lanes),
                              Load::Make(acc, acc_at(j2, v2), lanes)));
    Stmt reduce = For::Make(
        c, 0, s.c, LoopKind::kSerial,
        For::Make(r, 0, s.r, filter_kind,
                  For::Make(t, 0, s.s, filter_kind,
                            For::Make(j2, 0, width, LoopKind::kUnrolled,
                                      For::Make(v2, 0, p_.kv, LoopKind::kUnrolled, update)))));

    Var j3("j"), kk("kk");
    Expr k = kb * p_.kblk + kk;
    Expr value = acc(j3 * p_.kblk + kk);
    if (EpilogueHasBias(p_.epilogue)) {
      value = value + bias_(k);
    }
    if (EpilogueHasRelu(p_.epilogue)) {
      value = ir::Max::Make(value, 0.0f);
    }
    Stmt store = For::Make(
        kk, 0, channels, LoopKind::kUnrolled,
        For::Make(j3, 0, width, LoopKind::kUnrolled,
                  Store::Make(output_, ((n_ * s.k + k) * p_.p + p) * p_.q + q0 + j3, value)));
    return Allocate::Make(acc, width * p_.kblk, Block::Make({zero, reduce, store}));
  }

  const Plan p_;
  Var n_{"n"};
  Buffer input_{"input"}, weight_{"weight"}, bias_{"bias"}, output_{"output"};
  Buffer packed_w_{"weight_packed", MemoryScope::kStack};
  Buffer padded_{"input_padded", MemoryScope::kStack};
};

absl::StatusOr<ir::LoweredFunc> Build(const Workload& workload, const Target& target,
                                      const Config& config, std::string_view func_name) {
  RETURN_IF_ERROR(CheckBuildRequest(kConv2dCpuDirect, workload, target, config));
  Plan p;
  p.s = workload.conv2d();
  p.p = p.s.p();
  p.q = p.s.q();
  if (p.p < 1 || p.q < 1) {
    return absl::InvalidArgumentError(
        StrCat("workload '", workload.ToString(), "' has an empty output"));
  }
  p.lanes = CpuVectorInfoFor(target).lanes;
  p.kv = KnobValue(config, "kv");
  p.kblk = p.kv * p.lanes;
  p.kb = CeilDiv(p.s.k, p.kblk);
  p.qt = KnobValue(config, "qt");
  p.unroll_rs = KnobValue(config, "unroll_rs") != 0;
  p.loop_order = static_cast<int>(KnobValue(config, "loop_order"));
  p.parallel = target.threads > 1;
  p.epilogue = workload.epilogue();
  p.hp = p.s.h + 2 * p.s.pad;
  p.wp = p.s.w + 2 * p.s.pad;
  return Conv2dBuilder(p).Build(func_name);
}

}  // namespace

const KernelTemplate kConv2dCpuDirect = {
    .name = "conv2d.cpu.direct",
    .version = 1,
    .op = OpKind::kConv2d,
    .target_kind = TargetKind::kLlvm,
    .space = &Space,
    .default_config = &DefaultConfig,
    .build = &Build,
};

}  // namespace tune
