#include "codegen/templates/conv_cpu_indexing.h"

namespace tune {

using ir::Expr;
using ir::For;
using ir::LoopKind;
using ir::Stmt;
using ir::Store;
using ir::Var;

ConvCpuIndexing::ConvCpuIndexing(const Conv2dShape& s)
    : ConvCpuIndexing(s, s.h, s.w, s.p(), s.q()) {}

ConvCpuIndexing::ConvCpuIndexing(const Conv2dShape& s, int64_t h, int64_t w, int64_t p, int64_t q)
    : s_(s), h_(h), w_(w), p_(p), q_(q) {}

Expr ConvCpuIndexing::Input(const Expr& n, const Expr& c, const Expr& h, const Expr& w) const {
  if (s_.nhwc) {
    return ((n * h_ + h) * w_ + w) * s_.c + c;
  }
  if (s_.blocked()) {
    const int64_t b = s_.block;
    return (((n * (s_.c / b) + c / b) * h_ + h) * w_ + w) * b + c % b;
  }
  return ((n * s_.c + c) * h_ + h) * w_ + w;
}

Expr ConvCpuIndexing::Weight(const Expr& k, const Expr& c, const Expr& r, const Expr& t) const {
  if (s_.nhwc) {
    return ((k * s_.r + r) * s_.s + t) * s_.c + c;
  }
  if (s_.blocked()) {
    const int64_t b = s_.block;
    return ((((k / b) * (s_.c / b) + c / b) * s_.r + r) * s_.s + t) * (b * b) + (c % b) * b + k % b;
  }
  return ((k * s_.c + c) * s_.r + r) * s_.s + t;
}

Expr ConvCpuIndexing::Output(const Expr& n, const Expr& k, const Expr& p, const Expr& q) const {
  if (s_.nhwc) {
    return ((n * p_ + p) * q_ + q) * s_.k + k;
  }
  if (s_.blocked()) {
    const int64_t b = s_.block;
    return (((n * (s_.k / b) + k / b) * p_ + p) * q_ + q) * b + k % b;
  }
  return ((n * s_.k + k) * p_ + p) * q_ + q;
}

Stmt PackConvPanels(const Conv2dShape& s, const VnniPanels& panels, const CpuMatrixTypes& types,
                    int64_t cp, int64_t cblk, const ir::Buffer& weights, const ir::Buffer& packed) {
  const ConvCpuIndexing at(s);
  const int64_t g = panels.group, w = panels.width, groups = cblk / g;
  const bool guarded = s.k % w != 0 || s.c % g != 0 || cp != s.c;
  Var j("pj"), cb("pcb"), tap("ptap"), cg("pcg"), col("pc"), e("pe");
  const Expr k = j * w + col, c = cb * cblk + cg * g + e, r = tap / s.s, t = tap % s.s;
  const Expr group = j * (panels.kp * w) + (((cb * (s.r * s.s) + tap) * groups + cg) * w + col) * g;
  auto loops = [&](Stmt body) {
    return For::Make(
        j, 0, panels.Panels(s.k), LoopKind::kSerial,
        For::Make(cb, 0, cp / cblk, LoopKind::kSerial,
                  For::Make(tap, 0, s.r * s.s, LoopKind::kSerial,
                            For::Make(cg, 0, groups, LoopKind::kSerial,
                                      For::Make(col, 0, w, LoopKind::kUnrolled, body)))));
  };
  if (!guarded && s.nhwc) {
    // KRSC: a group's channels lie together in the weights as in the panel, one G-lane copy.
    return loops(Store::Make(
        packed, group,
        ir::Load::Make(weights, at.Weight(k, cb * cblk + cg * g, r, t), static_cast<int>(g))));
  }
  const Expr dst = group + e;
  Stmt store;
  if (guarded) {
    const Expr kk = ir::Min::Make(k, s.k - 1), cc = ir::Min::Make(c, s.c - 1);
    const Expr value = ir::LoadAsOrZero(weights, at.Weight(kk, cc, r, t), 1, k < s.k && c < s.c);
    store = Store::Make(packed, dst, ir::Cast::Make(types.b, value));
  } else {
    store = Store::Make(packed, dst, weights(at.Weight(k, c, r, t)));
  }
  return loops(For::Make(e, 0, g, LoopKind::kUnrolled, store));
}

}  // namespace tune
