#include "codegen/templates/conv2d_cpu_loops.h"

#include <algorithm>

#include "codegen/ir/substitute.h"
#include "common/status.h"

namespace tune {

using ir::Block;
using ir::Expr;
using ir::For;
using ir::IfThenElse;
using ir::LoopKind;
using ir::Stmt;
using ir::Var;

Stmt ForUnrolledBy(const Var& var, const Expr& begin, const Expr& extent, int64_t factor,
                   LoopKind kind, const Stmt& body) {
  TUNE_CHECK(factor >= 1) << "unroll factor " << factor;
  if (factor == 1) {
    return For::Make(var, begin, extent, kind, body);
  }
  Var outer(var.name() + "_o"), inner(var.name() + "_u");
  std::vector<Stmt> parts;
  const std::optional<int64_t> constant = ir::AsConstInt(extent);
  if (!constant || *constant >= factor) {
    Stmt copies = ir::Substitute(body, var, begin + outer * factor + inner);
    parts.push_back(For::Make(outer, 0, extent / factor, LoopKind::kSerial,
                              For::Make(inner, 0, factor, LoopKind::kUnrolled, copies)));
  }
  if (!constant) {
    parts.push_back(For::Make(var, begin + (extent / factor) * factor, extent % factor,
                              LoopKind::kSerial, body));
  } else if (*constant % factor != 0) {
    parts.push_back(For::Make(var, begin + Expr(*constant / factor * factor), *constant % factor,
                              LoopKind::kUnrolled, body));
  }
  return Block::Make(std::move(parts));
}

Expr ReductionChunks::Begin(const Expr& index) const { return index * chunk; }

Expr ReductionChunks::Extent(const Expr& index) const { return GroupExtent(index, chunk, total); }

Stmt ReductionChunks::Init(const Expr& index, Stmt zero, Stmt reload) const {
  if (!index.defined()) {
    return zero;
  }
  return IfThenElse::Make(index == Expr(int64_t{0}), std::move(zero), std::move(reload));
}

Stmt ReductionChunks::Finish(const Expr& index, Stmt final_store, Stmt partial_store) const {
  if (!index.defined() || !partial_store.defined()) {
    return final_store;
  }
  return IfThenElse::Make(index == Expr(count() - 1), std::move(final_store),
                          std::move(partial_store));
}

Expr GroupExtent(const Expr& group, int64_t per_group, int64_t total) {
  if (total % per_group == 0) {
    return Expr(per_group);
  }
  return ir::Min::Make(Expr(per_group), Expr(total) - group * per_group);
}

bool IsFirstOrderOfItsNesting(const std::vector<std::vector<int>>& orders, size_t index,
                              const std::vector<int64_t>& extents) {
  auto nesting = [&](const std::vector<int>& order) {
    std::vector<int> kept;
    for (int loop : order) {
      if (extents[static_cast<size_t>(loop)] > 1) {
        kept.push_back(loop);
      }
    }
    return kept;
  };
  const std::vector<int> mine = nesting(orders[index]);
  for (size_t i = 0; i < index; ++i) {
    if (nesting(orders[i]) == mine) {
      return false;
    }
  }
  return true;
}

FilterLoopKinds FilterKindsFor(int64_t unroll_rs) {
  switch (unroll_rs) {
    case 1:
      return {LoopKind::kUnrolled, LoopKind::kUnrolled};
    case 2:
      return {LoopKind::kSerial, LoopKind::kUnrolled};
    default:
      return {LoopKind::kSerial, LoopKind::kSerial};
  }
}

int64_t UnrolledTaps(int64_t unroll_rs, int64_t r, int64_t s) {
  switch (unroll_rs) {
    case 1:
      return r * s;
    case 2:
      return s;
    default:
      return 1;
  }
}

bool UnrollRsIsKept(int64_t unroll_rs, int64_t preferred, bool r_loop, bool s_loop) {
  // The loops of more than one iteration that a value unrolls: bit 0 r, bit 1 s.
  auto unrolled = [&](int64_t v) {
    return (r_loop && v == 1 ? 1 : 0) | (s_loop && (v == 1 || v == 2) ? 2 : 0);
  };
  const int mine = unrolled(unroll_rs);
  if (unrolled(preferred) == mine) {
    return unroll_rs == preferred;
  }
  for (int64_t v = 0; v < unroll_rs; ++v) {
    if (unrolled(v) == mine) {
      return false;
    }
  }
  return true;
}

}  // namespace tune
