#include "codegen/llvm/gpu_launch.h"

#include <algorithm>
#include <array>
#include <optional>

#include "codegen/ir/params.h"
#include "codegen/ir/visitor.h"
#include "common/strings.h"

namespace tune {
namespace {

constexpr std::array<char, 3> kAxisNames = {'x', 'y', 'z'};
// CUDA's grid limits (y and z); x may reach 2^31 - 1. AMD's are looser.
constexpr int64_t kMaxGridX = (int64_t{1} << 31) - 1;
constexpr int64_t kMaxGridYZ = 65535;

// One recursive walk over the statements with the context of the enclosing loops.
class ShapeChecker {
 public:
  explicit ShapeChecker(const ir::LoweredFunc& func)
      : func_(func), shared_alignment_(GpuSharedAlignment(func.body)) {}

  absl::Status Check() {
    has_block_loops_ = HasBlockLoop(func_.body);
    Walk(func_.body, Context{});
    return status_;
  }

  std::array<std::optional<int64_t>, 3> grid;
  std::array<std::optional<int64_t>, 3> block;
  int64_t shared_bytes = 0;
  int64_t workspace_bytes = 0;  // global allocations: module memory
  bool has_warp_mma = false;
  bool has_warp_group_mma = false;
  int wave_mma_lanes = 0;             // the widest wavefront a wave_mma needs (0: none)
  bool has_hopper_async = false;      // tensor_copy or mbarrier operations (sm_90)
  int64_t named_barrier_threads = 0;  // the most threads a named barrier waits for (0: none)

 private:
  struct Context {
    bool in_block = false;     // inside a gpu_block loop
    bool in_thread = false;    // inside a gpu_thread loop
    bool in_serial = false;    // inside a non-GPU loop
    bool in_shared = false;    // inside a gpu_shared allocation
    bool conditional = false;  // under an IfThenElse inside the thread loops
    // Every IfThenElse around this point (inside the thread loops) has branches that pass the
    // same number of cluster barriers (ClusterBarriersPassed), so that a cluster barrier under
    // them is still one that every thread of the cluster reaches.
    bool cluster_barriers_agree = true;
    std::array<bool, 3> block_axes = {false, false, false};
    std::array<bool, 3> thread_axes = {false, false, false};
  };

  static bool HasBlockLoop(const ir::Stmt& s) {
    if (!s.defined()) {
      return false;
    }
    switch (s.kind()) {
      case ir::StmtKind::kFor: {
        const auto* op = s.As<ir::For>();
        return op->loop_kind == ir::LoopKind::kGpuBlock || HasBlockLoop(op->body);
      }
      case ir::StmtKind::kBlock:
        for (const ir::Stmt& c : s.As<ir::Block>()->stmts) {
          if (HasBlockLoop(c)) {
            return true;
          }
        }
        return false;
      case ir::StmtKind::kIfThenElse: {
        const auto* op = s.As<ir::IfThenElse>();
        return HasBlockLoop(op->then_case) || HasBlockLoop(op->else_case);
      }
      case ir::StmtKind::kLetStmt:
        return HasBlockLoop(s.As<ir::LetStmt>()->body);
      case ir::StmtKind::kAllocate:
        return HasBlockLoop(s.As<ir::Allocate>()->body);
      case ir::StmtKind::kStore:
      case ir::StmtKind::kEvaluate:
      case ir::StmtKind::kBarrier:
      case ir::StmtKind::kWarpMma:
      case ir::StmtKind::kWarpGroupMma:
      case ir::StmtKind::kWaveMma:
      case ir::StmtKind::kTensorCopy:
      case ir::StmtKind::kMBarrierOp:
      case ir::StmtKind::kSetMaxRegisters:
      case ir::StmtKind::kFetchAdd:
      case ir::StmtKind::kAmxTileOp:
        return false;
    }
    return false;
  }

  // The cluster barriers every run of `s` passes, or nullopt where that depends on the path:
  // an IfThenElse whose branches pass different numbers, or a loop that holds one.
  static std::optional<int64_t> ClusterBarriersPassed(const ir::Stmt& s) {
    if (!s.defined()) {
      return 0;
    }
    switch (s.kind()) {
      case ir::StmtKind::kBarrier:
        return s.As<ir::Barrier>()->cluster ? 1 : 0;
      case ir::StmtKind::kBlock: {
        int64_t passed = 0;
        for (const ir::Stmt& c : s.As<ir::Block>()->stmts) {
          const std::optional<int64_t> n = ClusterBarriersPassed(c);
          if (!n) {
            return std::nullopt;
          }
          passed += *n;
        }
        return passed;
      }
      case ir::StmtKind::kIfThenElse: {
        const auto* op = s.As<ir::IfThenElse>();
        const std::optional<int64_t> then_passed = ClusterBarriersPassed(op->then_case);
        if (then_passed != ClusterBarriersPassed(op->else_case)) {
          return std::nullopt;
        }
        return then_passed;
      }
      case ir::StmtKind::kFor: {
        const std::optional<int64_t> n = ClusterBarriersPassed(s.As<ir::For>()->body);
        return n == 0 ? n : std::nullopt;
      }
      case ir::StmtKind::kLetStmt:
        return ClusterBarriersPassed(s.As<ir::LetStmt>()->body);
      case ir::StmtKind::kAllocate:
        return ClusterBarriersPassed(s.As<ir::Allocate>()->body);
      case ir::StmtKind::kStore:
      case ir::StmtKind::kEvaluate:
      case ir::StmtKind::kWarpMma:
      case ir::StmtKind::kWarpGroupMma:
      case ir::StmtKind::kWaveMma:
      case ir::StmtKind::kTensorCopy:
      case ir::StmtKind::kMBarrierOp:
      case ir::StmtKind::kSetMaxRegisters:
      case ir::StmtKind::kFetchAdd:
      case ir::StmtKind::kAmxTileOp:
        return 0;
    }
    return 0;
  }

  void Fail(std::string message) {
    if (status_.ok()) {
      status_ = absl::InvalidArgumentError(StrCat("GPU kernel ", func_.name, ": ", message));
    }
  }

  void Walk(const ir::Stmt& s, Context ctx) {
    if (!s.defined() || !status_.ok()) {
      return;
    }
    switch (s.kind()) {
      case ir::StmtKind::kFor:
        WalkFor(s.As<ir::For>(), ctx);
        return;
      case ir::StmtKind::kBlock:
        for (const ir::Stmt& c : s.As<ir::Block>()->stmts) {
          Walk(c, ctx);
        }
        return;
      case ir::StmtKind::kIfThenElse: {
        const auto* op = s.As<ir::IfThenElse>();
        Context inner = ctx;
        inner.conditional = ctx.in_thread || ctx.conditional;
        if (ctx.in_thread) {
          inner.cluster_barriers_agree =
              ctx.cluster_barriers_agree && ClusterBarriersPassed(s).has_value();
        }
        Walk(op->then_case, inner);
        Walk(op->else_case, inner);
        return;
      }
      case ir::StmtKind::kLetStmt:
        Walk(s.As<ir::LetStmt>()->body, ctx);
        return;
      case ir::StmtKind::kAllocate:
        WalkAllocate(s.As<ir::Allocate>(), ctx);
        return;
      case ir::StmtKind::kBarrier: {
        const auto* op = s.As<ir::Barrier>();
        if (op->named()) {
          // Only some threads reach it, so it may sit under a condition.
          if (!ctx.in_thread) {
            Fail(StrCat("barrier(id ", op->id, ", ", op->threads,
                        " threads) outside the gpu_thread loops: threads reach a named barrier"));
          }
          named_barrier_threads = std::max(named_barrier_threads, op->threads);
          return;
        }
        if (!ctx.in_thread) {
          Fail(
              "barrier() outside the gpu_thread loops: a barrier must sit inside the thread "
              "loops, where every thread of the block reaches it");
        } else if (op->cluster && ctx.conditional && !ctx.cluster_barriers_agree) {
          Fail(
              "cluster barrier under an if whose branches pass different numbers of cluster "
              "barriers: every thread of the cluster must pass each one, so the branches of "
              "every if around it (split by warp) pass as many, outside loops");
        } else if (!op->cluster && ctx.conditional) {
          Fail(
              "barrier() under an if: every thread of the block must reach a barrier, so it "
              "may not depend on a condition");
        }
        return;
      }
      case ir::StmtKind::kStore:
        if (has_block_loops_ && !ctx.in_block) {
          Fail(StrCat("store to ", s.As<ir::Store>()->buffer.name(),
                      " outside the gpu_block loops: every thread of every block would run it; "
                      "block loops must be outermost"));
        }
        return;
      case ir::StmtKind::kEvaluate:
        return;
      case ir::StmtKind::kAmxTileOp:
        Fail("an AMX tile instruction: AMX is an x86-64 CPU's, not a GPU's");
        return;
      case ir::StmtKind::kWarpMma:
        if (!ctx.in_thread) {
          Fail("warp_mma outside the gpu_thread loops: the lanes of a warp execute it together");
        }
        has_warp_mma = true;
        return;
      case ir::StmtKind::kWarpGroupMma:
        if (!ctx.in_thread) {
          Fail(
              "warpgroup_mma outside the gpu_thread loops: the 128 threads of a warpgroup "
              "execute it together");
        }
        has_warp_group_mma = true;
        return;
      case ir::StmtKind::kWaveMma: {
        const auto* op = s.As<ir::WaveMma>();
        if (!ctx.in_thread) {
          Fail(
              "wave_mma outside the gpu_thread loops: the lanes of a wavefront execute it "
              "together");
        }
        wave_mma_lanes = std::max(wave_mma_lanes, ir::WaveMmaLanes(op->shape));
        return;
      }
      case ir::StmtKind::kTensorCopy:
        if (!ctx.in_thread) {
          Fail("tensor_copy outside the gpu_thread loops: a thread issues it");
        }
        has_hopper_async = true;
        return;
      case ir::StmtKind::kMBarrierOp:
        if (!ctx.in_thread) {
          Fail("an mbarrier operation outside the gpu_thread loops: threads execute it");
        }
        has_hopper_async = true;
        return;
      case ir::StmtKind::kSetMaxRegisters:
        if (!ctx.in_thread) {
          Fail("set_max_registers outside the gpu_thread loops: a warpgroup executes it");
        }
        has_warp_group_mma = true;  // whole warpgroups, as for wgmma
        return;
      case ir::StmtKind::kFetchAdd:
        if (!ctx.in_thread) {
          Fail("fetch_add outside the gpu_thread loops: a thread executes it");
        }
        return;
    }
  }

  void WalkFor(const ir::For* op, Context ctx) {
    if (!ir::IsGpuLoop(op->loop_kind)) {
      Context inner = ctx;
      inner.in_serial = true;
      Walk(op->body, inner);
      return;
    }
    const bool is_block = op->loop_kind == ir::LoopKind::kGpuBlock;
    const char axis = kAxisNames[static_cast<size_t>(op->thread_axis)];
    std::string what = StrCat(ir::LoopKindName(op->loop_kind), " loop over ", op->var.name(),
                              " (axis ", std::string(1, axis), ")");
    std::optional<int64_t> min = ir::AsConstInt(op->min);
    std::optional<int64_t> extent = ir::AsConstInt(op->extent);
    if (!min || *min != 0) {
      return Fail(StrCat(what, " must start at 0"));
    }
    if (!extent) {
      return Fail(StrCat(what,
                         " has a non-constant extent; GPU loops need constant extents "
                         "(the launch geometry is read off them)"));
    }
    if (*extent < 1) {
      return Fail(StrCat(what, " has extent ", *extent, "; GPU loops need an extent >= 1"));
    }
    auto axis_index = static_cast<size_t>(op->thread_axis);
    Context inner = ctx;
    if (is_block) {
      if (ctx.in_thread) {
        return Fail(StrCat(what,
                           " is inside a gpu_thread loop; block loops must be outside "
                           "the thread loops"));
      }
      if (ctx.in_serial || ctx.in_shared) {
        return Fail(StrCat(what, " is inside a ",
                           ctx.in_serial ? "serial loop"
                                         : "gpu_shared "
                                           "allocation",
                           "; block loops must be outermost"));
      }
      if (ctx.block_axes[axis_index]) {
        return Fail(StrCat(what, " binds axis ", std::string(1, axis),
                           " a second time; each block axis may be bound once"));
      }
      inner.in_block = true;
      inner.block_axes[axis_index] = true;
    } else {
      if (!ctx.in_block) {
        return Fail(StrCat(what,
                           " is outside the gpu_block loops; thread loops must be inside "
                           "the block loops"));
      }
      if (ctx.thread_axes[axis_index]) {
        return Fail(StrCat(what, " binds axis ", std::string(1, axis),
                           " a second time; each thread axis may be bound once"));
      }
      inner.in_thread = true;
      inner.thread_axes[axis_index] = true;
    }
    std::optional<int64_t>& slot = is_block ? grid[axis_index] : block[axis_index];
    if (slot && *slot != *extent) {
      return Fail(StrCat(what, " has extent ", *extent, " but another ",
                         ir::LoopKindName(op->loop_kind), " loop on axis ", std::string(1, axis),
                         " has extent ", *slot, "; every loop on one axis must have one extent"));
    }
    slot = *extent;
    Walk(op->body, inner);
  }

  void WalkAllocate(const ir::Allocate* op, Context ctx) {
    switch (op->buffer.scope()) {
      case ir::MemoryScope::kGpuShared:
        if (ctx.in_thread) {
          return Fail(StrCat("gpu_shared allocation ", op->buffer.name(),
                             " is inside the gpu_thread loops; shared arrays belong between the "
                             "block and the thread loops"));
        }
        if (has_block_loops_ && !ctx.in_block) {
          return Fail(StrCat("gpu_shared allocation ", op->buffer.name(),
                             " is outside the gpu_block loops; shared arrays belong between the "
                             "block and the thread loops"));
        }
        // Each array aligned as GpuSharedAlignment says.
        shared_bytes += (op->size * op->buffer.element_type().Bytes() + shared_alignment_ - 1) /
                        shared_alignment_ * shared_alignment_;
        ctx.in_shared = true;
        break;
      case ir::MemoryScope::kGpuLocal:
        break;
      case ir::MemoryScope::kGlobal:  // a workspace: module memory, outside the GPU loops
        if (ctx.in_block || ctx.in_thread) {
          return Fail(StrCat("global allocation (workspace) ", op->buffer.name(),
                             " inside the GPU loops; a workspace is module memory, allocated "
                             "outside them"));
        }
        workspace_bytes += op->size * op->buffer.element_type().Bytes();
        break;
      case ir::MemoryScope::kStack:
        return Fail(StrCat("allocation ", op->buffer.name(),
                           " in stack memory; GPU kernels allocate gpu_shared, gpu_local or "
                           "(outside the GPU loops) global memory"));
    }
    Walk(op->body, ctx);
  }

  const ir::LoweredFunc& func_;
  const int64_t shared_alignment_;
  bool has_block_loops_ = false;
  absl::Status status_;
};

class GpuLoopFinder final : public ir::IrVisitor {
 public:
  bool found = false;

 protected:
  void Visit(const ir::For* op) override {
    found = found || ir::IsGpuLoop(op->loop_kind);
    IrVisitor::Visit(op);
  }
};

// Whether the body has a statement that reads or writes shared memory in the 128-byte swizzle.
class SwizzledSharedFinder final : public ir::IrVisitor {
 public:
  bool found = false;

 protected:
  void Visit(const ir::WarpGroupMma* op) override { found = true; }
  void Visit(const ir::TensorCopy* op) override { found = found || op->map.swizzle_bytes != 0; }
};

class TensorMapCollector final : public ir::IrVisitor {
 public:
  std::vector<ir::TensorMap> maps;

 protected:
  void Visit(const ir::TensorCopy* op) override {
    if (std::find(maps.begin(), maps.end(), op->map) == maps.end()) {
      maps.push_back(op->map);
    }
    IrVisitor::Visit(op);
  }
};

}  // namespace

bool HasGpuLoops(const ir::Stmt& stmt) {
  GpuLoopFinder finder;
  finder.VisitStmt(stmt);
  return finder.found;
}

int64_t GpuSharedAlignment(const ir::Stmt& body) {
  SwizzledSharedFinder finder;
  finder.VisitStmt(body);
  return finder.found ? kSwizzledSharedAlignment : 16;
}

std::vector<ir::TensorMap> TensorMapsOf(const ir::Stmt& body) {
  TensorMapCollector collector;
  collector.VisitStmt(body);
  return std::move(collector.maps);
}

bool UsesDynamicSharedMemory(int64_t shared_bytes, const GpuArch* arch) {
  return arch != nullptr && shared_bytes > arch->max_shared_bytes_per_block &&
         shared_bytes <= arch->max_dynamic_shared_bytes_per_block;
}

absl::StatusOr<GpuLaunch> GpuLaunchOf(const ir::LoweredFunc& func, const GpuArch* arch) {
  if (!func.body.defined()) {
    return absl::InvalidArgumentError(StrCat("GPU kernel ", func.name, " has no body"));
  }
  ShapeChecker checker(func);
  if (absl::Status status = checker.Check(); !status.ok()) {
    return status;
  }
  GpuLaunch launch;
  int64_t threads = 1;
  for (size_t a = 0; a < 3; ++a) {
    int64_t g = checker.grid[a].value_or(1);
    int64_t b = checker.block[a].value_or(1);
    int64_t max_grid = a == 0 ? kMaxGridX : kMaxGridYZ;
    if (g > max_grid) {
      return absl::InvalidArgumentError(StrCat("GPU kernel ", func.name, ": grid axis ",
                                               std::string(1, kAxisNames[a]), " has ", g,
                                               " blocks; the limit is ", max_grid));
    }
    if (b > 1024) {
      return absl::InvalidArgumentError(StrCat("GPU kernel ", func.name, ": block axis ",
                                               std::string(1, kAxisNames[a]), " has ", b,
                                               " threads; the limit is 1024"));
    }
    launch.grid[a] = static_cast<uint32_t>(g);
    launch.block[a] = static_cast<uint32_t>(b);
    threads *= b;
    const int64_t c = func.cluster[a];
    if (c < 1 || g % c != 0) {
      return absl::InvalidArgumentError(
          StrCat("GPU kernel ", func.name, ": a cluster of ", c, " blocks along grid axis ",
                 std::string(1, kAxisNames[a]), ", whose ", g, " blocks it must divide"));
    }
    launch.cluster[a] = static_cast<uint32_t>(c);
  }
  if (arch != nullptr && threads > arch->max_threads_per_block) {
    return absl::InvalidArgumentError(StrCat(
        "GPU kernel ", func.name, ": ", threads, " threads per block (block=(", launch.block[0],
        ",", launch.block[1], ",", launch.block[2], ")) exceed the max_threads_per_block limit of ",
        arch->name, " (", arch->max_threads_per_block, ")"));
  }
  if (checker.has_warp_group_mma && threads % 128 != 0) {
    return absl::InvalidArgumentError(StrCat(
        "GPU kernel ", func.name, ": warpgroup_mma needs whole warpgroups, but the block has ",
        threads, " threads (not a multiple of 128)"));
  }
  if (checker.named_barrier_threads > threads) {
    return absl::InvalidArgumentError(StrCat(
        "GPU kernel ", func.name, ": a named barrier waits for ", checker.named_barrier_threads,
        " threads, but the block has ", threads, " (it would never complete)"));
  }
  if (checker.has_warp_mma && threads % 32 != 0) {
    return absl::InvalidArgumentError(StrCat("GPU kernel ", func.name,
                                             ": warp_mma needs whole warps, but the block has ",
                                             threads, " threads (not a multiple of 32)"));
  }
  if (checker.wave_mma_lanes > 0 && threads % checker.wave_mma_lanes != 0) {
    return absl::InvalidArgumentError(
        StrCat("GPU kernel ", func.name, ": wave_mma needs whole wavefronts of ",
               checker.wave_mma_lanes, " lanes, but the block has ", threads,
               " threads (not a multiple of ", checker.wave_mma_lanes, ")"));
  }
  const bool dynamic = UsesDynamicSharedMemory(checker.shared_bytes, arch);
  if (arch != nullptr && !dynamic && checker.shared_bytes > arch->max_shared_bytes_per_block) {
    return absl::InvalidArgumentError(StrCat(
        "GPU kernel ", func.name, ": ", checker.shared_bytes,
        " bytes of shared memory (gpu_shared allocations) exceed the "
        "max_shared_bytes_per_block limit of ",
        arch->name, " (", arch->max_shared_bytes_per_block, " bytes",
        arch->max_dynamic_shared_bytes_per_block > 0
            ? StrCat(", or ", arch->max_dynamic_shared_bytes_per_block, " allocated dynamically")
            : "",
        ")"));
  }
  if (checker.shared_bytes > UINT32_MAX) {
    return absl::InvalidArgumentError(
        StrCat("GPU kernel ", func.name, ": ", checker.shared_bytes, " bytes of shared memory"));
  }
  (dynamic ? launch.dynamic_shared_bytes : launch.static_shared_bytes) =
      static_cast<uint32_t>(checker.shared_bytes);
  for (int param : ir::AtomicallyAccumulatedParams(func)) {
    launch.zeroed_args.push_back(static_cast<uint32_t>(param));
  }
  launch.workspace_bytes = static_cast<uint64_t>(checker.workspace_bytes);
  if (checker.has_hopper_async && arch != nullptr &&
      (arch->kind != TargetKind::kCuda || !arch->name.starts_with("sm_90"))) {
    return absl::InvalidArgumentError(StrCat("GPU kernel ", func.name,
                                             ": TMA copies and mbarrier transactions need ",
                                             "cuda -arch=sm_90 or sm_90a, not ", arch->name));
  }
  for (const ir::TensorMap& map : TensorMapsOf(func.body)) {
    auto param = std::find_if(func.params.begin(), func.params.end(),
                              [&](const ir::Buffer& p) { return p.same_as(map.buffer); });
    if (param == func.params.end()) {
      return absl::InvalidArgumentError(StrCat("GPU kernel ", func.name, ": a tensor map of ",
                                               map.buffer.name(), ", which is not a parameter"));
    }
    GpuTensorMap out;
    out.arg = static_cast<uint32_t>(param - func.params.begin());
    out.element_bytes = static_cast<uint32_t>(map.buffer.element_type().Bytes());
    out.rank = static_cast<uint32_t>(map.dims.size());
    for (size_t d = 0; d < map.dims.size(); ++d) {
      out.dims[d] = static_cast<uint64_t>(map.dims[d]);
      out.box[d] = static_cast<uint32_t>(map.box[d]);
      if (d > 0) {
        out.strides[d - 1] = static_cast<uint64_t>(map.strides[d - 1]) * out.element_bytes;
      }
    }
    out.swizzle_bytes = static_cast<uint32_t>(map.swizzle_bytes);
    out.im2col = map.im2col();
    for (size_t d = 0; d < map.lower_corner.size(); ++d) {
      out.lower_corner[d] = static_cast<int32_t>(map.lower_corner[d]);
      out.upper_corner[d] = static_cast<int32_t>(map.upper_corner[d]);
    }
    for (size_t d = 0; d < map.dims.size(); ++d) {
      out.element_strides[d] = static_cast<uint32_t>(map.ElementStride(d));
    }
    launch.tensor_maps.push_back(out);
  }
  return launch;
}

}  // namespace tune
