// Loop-building pieces that the conv2d CPU templates (direct, blocked, Winograd) share: a loop
// unrolled by a factor, the reduction split into chunks whose partial sums wait in memory, and
// the rule that keeps loop orders differing only in loops of one iteration out of a space.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/ir/ir.h"

namespace tune {

/// for (var = begin; var < begin + extent; ++var) body, where `body` uses `var`. With factor 1,
/// the single loop For(var, begin, extent, kind). With factor f > 1 (kind is then ignored), an
/// outer serial loop of extent / f steps, each running f unrolled copies of the body, then the
/// extent % f remaining iterations: unrolled when `extent` is a constant, a serial loop when not.
ir::Stmt ForUnrolledBy(const ir::Var& var, const ir::Expr& begin, const ir::Expr& extent,
                       int64_t factor, ir::LoopKind kind, const ir::Stmt& body);

/// A reduction of `total` steps split into chunks of `chunk` (the last one shorter when `chunk`
/// does not divide `total`).
struct ReductionChunks {
  int64_t total = 1, chunk = 1;

  int64_t count() const { return (total + chunk - 1) / chunk; }
  bool split() const { return count() > 1; }
  /// The first step of chunk `index`.
  ir::Expr Begin(const ir::Expr& index) const;
  /// The steps of chunk `index`: a constant when `chunk` divides `total`.
  ir::Expr Extent(const ir::Expr& index) const;
  /// Before a chunk: `zero` for the first, `reload` (the partial sums so far) for the others;
  /// just `zero` when the reduction is not split (`index` undefined).
  ir::Stmt Init(const ir::Expr& index, ir::Stmt zero, ir::Stmt reload) const;
  /// After a chunk: `final_store` (with the epilogue) for the last, `partial_store` for the
  /// others; just `final_store` when the reduction is not split or both are the same
  /// (`partial_store` undefined).
  ir::Stmt Finish(const ir::Expr& index, ir::Stmt final_store, ir::Stmt partial_store) const;
};

/// The extent of the loop over the members of group `group` of `per_group` members out of
/// `total`: `per_group`, or min(per_group, total - group * per_group) when it does not divide.
ir::Expr GroupExtent(const ir::Expr& group, int64_t per_group, int64_t total);

/// Whether orders[index] (a permutation of loop indices, outermost first) is the first of
/// `orders` that nests the loops of more than one iteration (extents[loop] > 1) the same way:
/// the others differ only in where loops of one iteration go, which generates the same work.
bool IsFirstOrderOfItsNesting(const std::vector<std::vector<int>>& orders, size_t index,
                              const std::vector<int64_t>& extents);

/// The loop kinds of the filter loops (r, s) for the knob unroll_rs: 0 neither unrolled, 1
/// both, 2 only s.
struct FilterLoopKinds {
  ir::LoopKind r = ir::LoopKind::kSerial, s = ir::LoopKind::kSerial;
};
FilterLoopKinds FilterKindsFor(int64_t unroll_rs);

/// The taps of an R x S filter whose loops unroll_rs unrolls (1 when none is).
int64_t UnrolledTaps(int64_t unroll_rs, int64_t r, int64_t s);

/// The knob unroll_rs's constraint, so that no two values unroll the same loops of more than one
/// iteration: whether `unroll_rs` is the value kept among those that unroll the same such loops
/// (`r_loop`: the r loop has more than one iteration; `s_loop`: the s loop does and is a loop),
/// `preferred` (the default config's value) where it is among them, else the smallest.
bool UnrollRsIsKept(int64_t unroll_rs, int64_t preferred, bool r_loop, bool s_loop);

/// The most multiply-adds that the unrolled body of a reduction may hold (the code of a
/// register tile stays a few ten KiB; LLVM's compile time stays in seconds).
inline constexpr int64_t kMaxUnrolledFmas = 4096;

}  // namespace tune
