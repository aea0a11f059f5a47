#include "codegen/ir/loop_features.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <unordered_map>

namespace tune::ir {
namespace {

constexpr size_t kNestLevels = 6;

constexpr std::array<std::string_view, kLoopFeatureCount> kNames = {
    "serial_loops",
    "parallel_loops",
    "vectorized_loops",
    "unrolled_loops",
    "max_depth",
    "parallel_extent",
    "vector_lanes",
    "unroll_product",
    "nest_extent_0",
    "nest_extent_1",
    "nest_extent_2",
    "nest_extent_3",
    "nest_extent_4",
    "nest_extent_5",
    "fma_lanes",
    "float_op_lanes",
    "load_elements",
    "store_elements",
    "global_load_elements",
    "local_load_elements",
    "load_invariant_share",
    "load_contiguous_share",
    "load_strided_share",
    "store_contiguous_share",
    "footprint_bytes_inner0",
    "footprint_bytes_inner1",
    "footprint_bytes_inner2",
    "footprint_bytes_inner3",
    "footprint_bytes_inner4",
    "footprint_bytes_inner5",
    "arithmetic_intensity",
    "stack_bytes",
    "fma_lanes_per_load_element",
    "fma_lanes_per_global_load_element",
};

float Log(double x) { return static_cast<float>(std::log2(1.0 + std::max(0.0, x))); }

struct Loop {
  const Variable* var;
  int64_t extent;
  LoopKind kind;
};

class Extractor {
 public:
  explicit Extractor(const LoweredFunc& func) : func_(func) {
    for (size_t i = 0; i < func.params.size() && i < func.param_elements.size(); ++i) {
      param_elements_[func.params[i].get()] = func.param_elements[i];
    }
  }

  std::vector<float> Run() {
    Walk(func_.body);
    std::vector<float> f(kLoopFeatureCount, 0.0f);
    f[0] = static_cast<float>(loops_by_kind_[0]);
    f[1] = static_cast<float>(loops_by_kind_[1]);
    f[2] = static_cast<float>(loops_by_kind_[2]);
    f[3] = static_cast<float>(loops_by_kind_[3]);
    f[4] = static_cast<float>(max_depth_);
    f[5] = Log(parallel_extent_);
    f[6] = static_cast<float>(vector_lanes_);
    f[7] = Log(unroll_product_);
    for (size_t i = 0; i < kNestLevels && i < heaviest_nest_.size(); ++i) {
      f[8 + i] = Log(static_cast<double>(heaviest_nest_[i]));
    }
    f[14] = Log(fma_);
    f[15] = Log(float_ops_);
    f[16] = Log(loads_);
    f[17] = Log(stores_);
    f[18] = Log(global_loads_);
    f[19] = Log(loads_ - global_loads_);
    const double loads = std::max(loads_, 1.0);
    f[20] = static_cast<float>(load_class_[0] / loads);
    f[21] = static_cast<float>(load_class_[1] / loads);
    f[22] = static_cast<float>(load_class_[2] / loads);
    f[23] = static_cast<float>(store_contiguous_ / std::max(stores_, 1.0));
    for (size_t d = 0; d < kNestLevels; ++d) {
      f[24 + d] = Log(4.0 * footprint_[d]);
    }
    f[30] = static_cast<float>((2.0 * fma_ + float_ops_) / std::max(4.0 * global_footprint_, 1.0));
    f[31] = Log(stack_bytes_);
    // Reuse in registers: how many multiply-adds each element loaded feeds. A register tile of
    // mr x nr accumulators loads mr + nr elements for mr * nr multiply-adds; this is the figure
    // that decides whether the FMA units or the load ports bound the inner loop.
    f[32] = static_cast<float>(fma_ / loads);
    f[33] = static_cast<float>(fma_ / std::max(global_loads_, 1.0));
    return f;
  }

 private:
  // The value of an integer expression under the current bindings (unbound variables are 0:
  // the first iteration of their loop); nullopt for what it cannot evaluate.
  std::optional<int64_t> Eval(const Expr& e) const {
    if (!e.defined()) {
      return std::nullopt;
    }
    auto binary = [&](const BinaryExprNode* op, auto fn) -> std::optional<int64_t> {
      std::optional<int64_t> a = Eval(op->a), b = Eval(op->b);
      if (!a || !b) {
        return std::nullopt;
      }
      return fn(*a, *b);
    };
    switch (e.kind()) {
      case ExprKind::kIntImm:
        return e.As<IntImm>()->value;
      case ExprKind::kVar: {
        auto it = env_.find(e.As<Variable>());
        return it == env_.end() ? 0 : it->second;
      }
      case ExprKind::kCast:
        return Eval(e.As<Cast>()->value);
      case ExprKind::kRamp:
        return Eval(e.As<Ramp>()->base);
      case ExprKind::kShuffle:
        return Eval(e.As<Shuffle>()->vectors.front());
      case ExprKind::kBroadcast:
        return Eval(e.As<Broadcast>()->value);
      case ExprKind::kSelect:
        return Eval(e.As<Select>()->true_value);
      case ExprKind::kAdd:
        return binary(e.As<Add>(), [](int64_t a, int64_t b) { return a + b; });
      case ExprKind::kSub:
        return binary(e.As<Sub>(), [](int64_t a, int64_t b) { return a - b; });
      case ExprKind::kMul:
        return binary(e.As<Mul>(), [](int64_t a, int64_t b) { return a * b; });
      case ExprKind::kDiv:
        return binary(e.As<Div>(), [](int64_t a, int64_t b) {
          return b == 0 ? 0 : (a >= 0 ? a / b : -((-a + b - 1) / b));
        });
      case ExprKind::kMod:
        return binary(e.As<Mod>(),
                      [](int64_t a, int64_t b) { return b == 0 ? 0 : ((a % b) + b) % b; });
      case ExprKind::kMin:
        return binary(e.As<Min>(), [](int64_t a, int64_t b) { return std::min(a, b); });
      case ExprKind::kMax:
        return binary(e.As<Max>(), [](int64_t a, int64_t b) { return std::max(a, b); });
      case ExprKind::kFloatImm:
      case ExprKind::kEQ:
      case ExprKind::kNE:
      case ExprKind::kLT:
      case ExprKind::kLE:
      case ExprKind::kGT:
      case ExprKind::kGE:
      case ExprKind::kAnd:
      case ExprKind::kOr:
      case ExprKind::kNot:
      case ExprKind::kReinterpret:
      case ExprKind::kLoad:
      case ExprKind::kFma:
      case ExprKind::kDotAccumulate:
      case ExprKind::kCallExtern:
      case ExprKind::kAddressOf:
        return std::nullopt;
    }
    return std::nullopt;
  }

  double Trips() const {
    double trips = 1;
    for (const Loop& loop : loops_) {
      trips *= static_cast<double>(loop.extent);
    }
    return trips;
  }

  // How `index` moves when loop `level` advances by one (others held): 0, or its step.
  int64_t Step(const Expr& index, size_t level) {
    const Variable* var = loops_[level].var;
    auto saved = env_.find(var);
    const std::optional<int64_t> old =
        saved == env_.end() ? std::nullopt : std::optional<int64_t>(saved->second);
    env_[var] = 0;
    std::optional<int64_t> at0 = Eval(index);
    env_[var] = 1;
    std::optional<int64_t> at1 = Eval(index);
    if (old) {
      env_[var] = *old;
    } else {
      env_.erase(var);
    }
    return at0 && at1 ? *at1 - *at0 : 1;  // unknown: assume it moves
  }

  void Access(const Buffer& buffer, const Expr& index, int lanes, bool store) {
    const double elements = static_cast<double>(lanes) * Trips();
    int stride_class = 1;
    const Ramp* ramp = index.As<Ramp>();
    if (ramp != nullptr && Eval(ramp->stride) == 1) {
      stride_class = 1;
    } else if (!loops_.empty()) {
      const int64_t step = Step(index, loops_.size() - 1);
      stride_class = step == 0 ? 0 : (step == 1 || step == -1 ? 1 : 2);
    }
    if (store) {
      stores_ += elements;
      store_contiguous_ += stride_class == 1 ? elements : 0;
    } else {
      loads_ += elements;
      load_class_[stride_class] += elements;
      if (buffer.scope() == MemoryScope::kGlobal) {
        global_loads_ += elements;
      }
    }
    // Elements touched from each loop level inward (level d counts the d+1 innermost loops).
    double touched = lanes;
    for (size_t d = 0; d < loops_.size(); ++d) {
      const size_t level = loops_.size() - 1 - d;
      if (Step(index, level) != 0) {
        touched *= static_cast<double>(loops_[level].extent);
      }
      if (d < kNestLevels) {
        footprint_[d] += touched;
      }
    }
    for (size_t d = loops_.size(); d < kNestLevels; ++d) {
      footprint_[d] += touched;
    }
    if (buffer.scope() == MemoryScope::kGlobal) {
      auto known = param_elements_.find(buffer.get());
      global_footprint_ +=
          known == param_elements_.end() ? touched : std::min(touched, double(known->second));
    }
  }

  void Walk(const Expr& e) {
    if (!e.defined()) {
      return;
    }
    const int lanes = e.type().lanes();
    const bool is_float = e.type().is_float();
    switch (e.kind()) {
      case ExprKind::kFma: {
        const Fma* op = e.As<Fma>();
        fma_ += lanes * Trips();
        fma_here_ += lanes * Trips();
        Walk(op->a);
        Walk(op->b);
        Walk(op->c);
        return;
      }
      case ExprKind::kDotAccumulate: {  // a multiply-add per element of a group
        const DotAccumulate* op = e.As<DotAccumulate>();
        const double macs = lanes * DotGroup(op->kind) * Trips();
        fma_ += macs;
        fma_here_ += macs;
        Walk(op->acc);
        Walk(op->a);
        Walk(op->b);
        return;
      }
      case ExprKind::kLoad: {
        const Load* op = e.As<Load>();
        Access(op->buffer, op->index, lanes, /*store=*/false);
        Walk(op->index);
        return;
      }
      case ExprKind::kAdd:
      case ExprKind::kSub:
      case ExprKind::kMul:
      case ExprKind::kDiv:
      case ExprKind::kMin:
      case ExprKind::kMax: {
        const auto* op = static_cast<const BinaryExprNode*>(e.get());
        if (is_float) {
          float_ops_ += lanes * Trips();
        }
        Walk(op->a);
        Walk(op->b);
        return;
      }
      case ExprKind::kSelect: {
        const Select* op = e.As<Select>();
        Walk(op->condition);
        Walk(op->true_value);
        Walk(op->false_value);
        return;
      }
      case ExprKind::kCast:
        Walk(e.As<Cast>()->value);
        return;
      case ExprKind::kReinterpret:
        Walk(e.As<Reinterpret>()->value);
        return;
      case ExprKind::kBroadcast:
        vector_lanes_ = std::max<int64_t>(vector_lanes_, e.As<Broadcast>()->lanes);
        Walk(e.As<Broadcast>()->value);
        return;
      case ExprKind::kRamp:
        vector_lanes_ = std::max<int64_t>(vector_lanes_, e.As<Ramp>()->lanes);
        return;
      case ExprKind::kShuffle:
        vector_lanes_ = std::max<int64_t>(vector_lanes_, e.type().lanes());
        for (const Expr& v : e.As<Shuffle>()->vectors) {
          Walk(v);
        }
        return;
      case ExprKind::kCallExtern:
        for (const Expr& arg : e.As<CallExtern>()->args) {
          Walk(arg);
        }
        return;
      // Not counted, nor walked below: leaves, integer Mod, comparisons, logic, addresses.
      case ExprKind::kIntImm:
      case ExprKind::kFloatImm:
      case ExprKind::kVar:
      case ExprKind::kMod:
      case ExprKind::kEQ:
      case ExprKind::kNE:
      case ExprKind::kLT:
      case ExprKind::kLE:
      case ExprKind::kGT:
      case ExprKind::kGE:
      case ExprKind::kAnd:
      case ExprKind::kOr:
      case ExprKind::kNot:
      case ExprKind::kAddressOf:
        return;
    }
  }

  void Walk(const Stmt& s) {
    if (!s.defined()) {
      return;
    }
    switch (s.kind()) {
      case StmtKind::kFor: {
        const For* op = s.As<For>();
        const int64_t extent = std::max<int64_t>(1, Eval(op->extent).value_or(1));
        switch (op->loop_kind) {
          case LoopKind::kParallel:
          case LoopKind::kGpuBlock:
          case LoopKind::kGpuThread:
            ++loops_by_kind_[1];
            break;
          case LoopKind::kVectorized:
            ++loops_by_kind_[2];
            vector_lanes_ = std::max(vector_lanes_, extent);
            break;
          case LoopKind::kUnrolled:
            ++loops_by_kind_[3];
            break;
          case LoopKind::kSerial:
            ++loops_by_kind_[0];
            break;
        }
        loops_.push_back(Loop{op->var.get(), extent, op->loop_kind});
        max_depth_ = std::max(max_depth_, loops_.size());
        double parallel = 1, unrolled = 1;
        for (const Loop& loop : loops_) {
          parallel *= loop.kind == LoopKind::kParallel || IsGpuLoop(loop.kind) ? loop.extent : 1;
          unrolled *= loop.kind == LoopKind::kUnrolled ? loop.extent : 1;
        }
        parallel_extent_ = std::max(parallel_extent_, parallel);
        unroll_product_ = std::max(unroll_product_, unrolled);
        Walk(op->body);
        loops_.pop_back();
        return;
      }
      case StmtKind::kBlock:
        for (const Stmt& stmt : s.As<Block>()->stmts) {
          Walk(stmt);
        }
        return;
      case StmtKind::kIfThenElse: {
        const IfThenElse* op = s.As<IfThenElse>();
        Walk(op->condition);
        Walk(op->then_case);
        Walk(op->else_case);
        return;
      }
      case StmtKind::kLetStmt: {
        const LetStmt* op = s.As<LetStmt>();
        Walk(op->value);
        if (std::optional<int64_t> value = Eval(op->value)) {
          env_[op->var.get()] = *value;
        }
        Walk(op->body);
        env_.erase(op->var.get());
        return;
      }
      case StmtKind::kAllocate: {
        const Allocate* op = s.As<Allocate>();
        if (op->buffer.scope() != MemoryScope::kGlobal) {  // a workspace is module memory
          stack_bytes_ += 4.0 * static_cast<double>(op->size);
        }
        Walk(op->body);
        return;
      }
      case StmtKind::kStore: {
        const Store* op = s.As<Store>();
        fma_here_ = 0;
        Walk(op->value);
        Walk(op->index);
        Access(op->buffer, op->index, op->value.type().lanes(), /*store=*/true);
        NoteHeaviest(fma_here_);
        return;
      }
      case StmtKind::kEvaluate:
        Walk(s.As<Evaluate>()->value);
        return;
      case StmtKind::kBarrier:
        return;
      case StmtKind::kWarpMma: {
        // Per lane: its 1/32 of the warp's multiply-adds, and the fragments it loads (16 bytes
        // of A per row pair and of B per tile pair, as ldmatrix moves them).
        const WarpMma* op = s.As<WarpMma>();
        const double tiles = double(op->m_tiles) * op->n_tiles;
        const double fmas = tiles * 16 * 8 * double(WarpMmaK(op->dtype)) / 32 * Trips();
        fma_ += fmas;
        NoteHeaviest(fmas);
        Access(op->a, op->a_index, 4 * op->m_tiles, /*store=*/false);
        Access(op->b, op->b_index, 2 * op->n_tiles, /*store=*/false);
        return;
      }
      case StmtKind::kWaveMma: {
        // Per lane: its share of the wavefront's multiply-adds, and the operand runs it reads
        // from shared memory (one per tile of A and of B).
        const WaveMma* op = s.As<WaveMma>();
        const double tile = WaveMmaTile(op->shape);
        const double fmas = double(op->m_tiles) * op->n_tiles * tile * tile * op->k /
                            WaveMmaLanes(op->shape) * Trips();
        fma_ += fmas;
        NoteHeaviest(fmas);
        const int run = WaveMmaKPerLane(op->shape, op->k);
        Access(op->a, op->a_index, run * op->m_tiles, /*store=*/false);
        Access(op->b, op->b_index, run * op->n_tiles, /*store=*/false);
        return;
      }
      case StmtKind::kWarpGroupMma: {
        // Per thread: its 1/128 of the warpgroup's multiply-adds. The operands stay in shared
        // memory (read by the tensor cores through descriptors): one access each per k-step.
        const WarpGroupMma* op = s.As<WarpGroupMma>();
        const double fmas =
            64.0 * op->n * double(WarpMmaK(op->dtype)) * op->k_steps / 128 * Trips();
        fma_ += fmas;
        NoteHeaviest(fmas);
        Access(op->a, op->a_index, op->k_steps, /*store=*/false);
        Access(op->b, op->b_index, op->k_steps, /*store=*/false);
        return;
      }
      case StmtKind::kTensorCopy: {
        // The issuing thread moves the whole box from global to shared memory (the copy
        // engine's work, counted as that thread's accesses).
        const TensorCopy* op = s.As<TensorCopy>();
        int64_t elements = 1;
        for (int64_t b : op->map.box) {
          elements *= b;
        }
        Access(op->map.buffer, op->coords[0], static_cast<int>(elements), /*store=*/false);
        Access(op->dst, op->dst_index, static_cast<int>(elements), /*store=*/true);
        return;
      }
      case StmtKind::kFetchAdd: {
        const FetchAdd* op = s.As<FetchAdd>();
        Access(op->buffer, op->index, 1, /*store=*/true);
        return;
      }
      case StmtKind::kAmxTileOp: {
        // Counted at a full tile's size (16 rows of 64 bytes), which the templates use but at
        // the edges of a matrix.
        const AmxTileOp* op = s.As<AmxTileOp>();
        if (op->op == AmxTileOpKind::kLoad || op->op == AmxTileOpKind::kStore) {
          const int elements = 16 * 64 / (op->buffer.element_type().bits() / 8);
          Access(op->buffer, op->index, elements, op->op == AmxTileOpKind::kStore);
        } else if (op->op == AmxTileOpKind::kDot) {
          const double macs = 16.0 * 16 * (op->dtype == Dtype::kBf16 ? 32 : 64) * Trips();
          fma_ += macs;
          fma_here_ += macs;
        }
        return;
      }
      case StmtKind::kMBarrierOp:
      case StmtKind::kSetMaxRegisters:
        return;
    }
  }

  // Keeps the loop nest of the statement with the most multiply-adds (`fmas` of this one).
  void NoteHeaviest(double fmas) {
    if (fmas > heaviest_fma_) {
      heaviest_fma_ = fmas;
      heaviest_nest_.clear();
      for (const Loop& loop : loops_) {
        heaviest_nest_.push_back(loop.extent);
      }
    }
  }

  const LoweredFunc& func_;
  std::unordered_map<const BufferNode*, int64_t> param_elements_;
  std::unordered_map<const Variable*, int64_t> env_;
  std::vector<Loop> loops_;
  std::array<int, 4> loops_by_kind_ = {0, 0, 0, 0};
  size_t max_depth_ = 0;
  double parallel_extent_ = 1, unroll_product_ = 1;
  int64_t vector_lanes_ = 1;
  double fma_ = 0, float_ops_ = 0, loads_ = 0, stores_ = 0, global_loads_ = 0;
  std::array<double, 3> load_class_ = {0, 0, 0};
  double store_contiguous_ = 0;
  std::array<double, kNestLevels> footprint_ = {};
  double global_footprint_ = 0, stack_bytes_ = 0;
  double fma_here_ = 0, heaviest_fma_ = 0;
  std::vector<int64_t> heaviest_nest_;
};

}  // namespace

const std::array<std::string_view, kLoopFeatureCount>& LoopFeatureNames() { return kNames; }

std::vector<float> LoopFeatures(const LoweredFunc& func) { return Extractor(func).Run(); }

}  // namespace tune::ir
