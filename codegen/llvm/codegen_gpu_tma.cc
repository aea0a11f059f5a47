// CodeGenGpu's Hopper copy engine and shared-memory barriers: ir::TensorCopy as
// `cp.async.bulk.tensor` (TMA) and ir::MBarrierOp as `mbarrier.*`, through inline PTX (LLVM 19
// has NVVM intrinsics for neither with transaction counts).
//
// A kernel's tensor maps (TensorMapsOf) are by-value parameters after its buffers, 128 bytes
// aligned to 64, marked `grid_constant` in !nvvm.annotations: the instruction reads the map where
// the launch put it (`cvta.param`), as CUDA's __grid_constant__ does, instead of a local copy
// (which TMA cannot read). Shared addresses are the 32-bit offsets of the shared window.
#include <algorithm>
#include <string>
#include <vector>

#include "codegen/ir/visitor.h"
#include "codegen/llvm/codegen_gpu.h"
#include "codegen/llvm/gpu_launch.h"
#include "common/strings.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/InlineAsm.h"

namespace tune::llvm_backend {

llvm::Type* CodeGenGpu::TensorMapType() {
  return llvm::ArrayType::get(builder_.getInt64Ty(), 16);  // CUtensorMap: 128 opaque bytes
}

void CodeGenGpu::AnnotateGridConstants(llvm::Function* f, unsigned first, unsigned count) {
  if (count == 0) {
    return;
  }
  std::vector<llvm::Metadata*> indexes;  // 1-based parameter positions
  for (unsigned i = 0; i < count; ++i) {
    indexes.push_back(llvm::ValueAsMetadata::get(builder_.getInt32(first + i + 1)));
  }
  llvm::Metadata* ops[] = {llvm::ValueAsMetadata::get(f),
                           llvm::MDString::get(ctx_, "grid_constant"),
                           llvm::MDNode::get(ctx_, indexes)};
  module_->getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx_, ops));
}

namespace {

class SetMaxRegistersFinder final : public ir::IrVisitor {
 public:
  bool found = false;

 protected:
  void Visit(const ir::SetMaxRegisters* op) override { found = true; }
};

}  // namespace

// setmaxnreg moves registers from a known count at entry: ptxas ignores it unless the kernel
// fixes that count, so a kernel with one gets `.maxnreg`, the even share of the
// multiprocessor's registers among the threads of its min_blocks_per_multiprocessor blocks
// (rounded down to a multiple of 8).
void CodeGenGpu::AnnotateRegisterBudget(llvm::Function* f, const ir::LoweredFunc& func,
                                        const GpuLaunch& launch) {
  SetMaxRegistersFinder finder;
  finder.VisitStmt(func.body);
  if (!nvptx() || !finder.found) {
    return;
  }
  const int64_t share = arch_.registers_per_multiprocessor /
                        static_cast<int64_t>(launch.ThreadsPerBlock()) /
                        std::max<int64_t>(1, func.min_blocks_per_multiprocessor) / 8 * 8;
  const int64_t registers = std::min<int64_t>(arch_.max_registers_per_thread, share);
  llvm::Metadata* ops[] = {
      llvm::ValueAsMetadata::get(f), llvm::MDString::get(ctx_, "maxnreg"),
      llvm::ValueAsMetadata::get(builder_.getInt32(static_cast<uint32_t>(registers)))};
  module_->getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(ctx_, ops));
}

llvm::Value* CodeGenGpu::SharedAddress32(const ir::Buffer& buffer, const ir::Expr& index) {
  llvm::Value* ptr =
      builder_.CreateInBoundsGEP(ElementType(buffer), BufferBase(buffer), Emit(index));
  return builder_.CreateTrunc(builder_.CreatePtrToInt(ptr, builder_.getInt64Ty()),
                              builder_.getInt32Ty());
}

void CodeGenGpu::InlinePtx(const std::string& text, const std::string& constraints,
                           const std::vector<llvm::Value*>& operands) {
  std::vector<llvm::Type*> types;
  for (llvm::Value* v : operands) {
    types.push_back(v->getType());
  }
  llvm::FunctionType* fn = llvm::FunctionType::get(builder_.getVoidTy(), types, false);
  const std::string clobbers = constraints.empty() ? "~{memory}" : constraints + ",~{memory}";
  builder_.CreateCall(fn,
                      llvm::InlineAsm::get(fn, text, clobbers,
                                           /*hasSideEffects=*/true),
                      operands);
}

void CodeGenGpu::EmitTensorCopy(const ir::TensorCopy* op) {
  if (!nvptx() || !arch_.name.starts_with("sm_90")) {
    Fail(absl::UnimplementedError(StrCat(
        "GPU codegen: tensor_copy (TMA) is an instruction of cuda -arch=sm_90 and sm_90a, not ",
        arch_.name)));
    return;
  }
  auto map = std::find(tensor_maps_.begin(), tensor_maps_.end(), op->map);
  if (map == tensor_maps_.end()) {
    Fail(absl::InternalError(StrCat("GPU codegen: kernel ", func_name_, " copies through a ",
                                    "tensor map of ", op->map.buffer.name(),
                                    " that is not among its parameters")));
    return;
  }
  const int rank = static_cast<int>(op->coords.size());
  std::vector<llvm::Value*> operands = {SharedAddress32(op->dst, op->dst_index),
                                        tensor_map_args_[map - tensor_maps_.begin()]};
  std::string coords;
  for (int d = 0; d < rank; ++d) {
    operands.push_back(builder_.CreateIntCast(Emit(op->coords[d]), builder_.getInt32Ty(), true));
    StrAppend(&coords, d == 0 ? "" : ", ", "$", 2 + d);
  }
  operands.push_back(SharedAddress32(op->barrier, op->barrier_index));
  std::string constraints = "r,l";
  for (int d = 0; d < rank; ++d) {
    constraints += ",r";
  }
  constraints += ",r";
  // Operands after the barrier: the multicast mask, then the im2col offsets (16 bits each).
  int next = 3 + rank;
  std::string multicast, mask;
  if (op->multicast != 0) {  // the 16-bit mask of the cluster's ranks that receive the box
    operands.push_back(builder_.getInt16(static_cast<uint16_t>(op->multicast)));
    constraints += ",h";
    multicast = ".multicast::cluster";
    mask = StrCat(", $", next++);
  }
  std::string offsets;
  for (size_t i = 0; i < op->offsets.size(); ++i) {
    operands.push_back(
        builder_.CreateIntCast(Emit(op->offsets[i]), builder_.getInt16Ty(), /*isSigned=*/false));
    constraints += ",h";
    StrAppend(&offsets, i == 0 ? ", {" : ", ", "$", next++);
  }
  if (!offsets.empty()) {
    offsets += "}";
  }
  InlinePtx(StrCat("cp.async.bulk.tensor.", rank, "d.shared::cluster.global.",
                   op->map.im2col() ? "im2col" : "tile", ".mbarrier::complete_tx::bytes", multicast,
                   " [$0], [$1, {", coords, "}], [$", 2 + rank, "]", offsets, mask, ";"),
            constraints, operands);
}

void CodeGenGpu::EmitSetMaxRegisters(const ir::SetMaxRegisters* op) {
  if (!nvptx() || arch_.name != "sm_90a") {
    Fail(absl::UnimplementedError(StrCat(
        "GPU codegen: set_max_registers (setmaxnreg) is an instruction of cuda -arch=sm_90a, not ",
        arch_.name)));
    return;
  }
  InlinePtx(
      StrCat("setmaxnreg.", op->increase ? "inc" : "dec", ".sync.aligned.u32 ", op->registers, ";"),
      "", {});
}

void CodeGenGpu::EmitMBarrierOp(const ir::MBarrierOp* op) {
  if (!nvptx() || !arch_.name.starts_with("sm_90")) {
    Fail(absl::UnimplementedError(StrCat(
        "GPU codegen: mbarrier transactions are instructions of cuda -arch=sm_90 and sm_90a, not ",
        arch_.name)));
    return;
  }
  llvm::Value* barrier = SharedAddress32(op->barrier, op->index);
  auto value32 = [&] {
    return builder_.CreateIntCast(Emit(op->value), builder_.getInt32Ty(), true);
  };
  switch (op->op) {
    case ir::MBarrierOpKind::kInit:
      // The fence publishes the initialised barrier to the copy engine (the async proxy).
      InlinePtx("mbarrier.init.shared::cta.b64 [$0], $1;\nfence.mbarrier_init.release.cluster;",
                "r,r", {barrier, value32()});
      return;
    case ir::MBarrierOpKind::kArrive:
      if (op->cta.defined()) {
        // The barrier at the same offset in a peer block of the cluster, releasing at the
        // default (block) scope, as CUTLASS's cluster pipelines do: the arrival releases a stage
        // the thread's warpgroup has read. With .release.cluster instead, a fence in every step
        // of the main loop, clustered pipelines ran at 0.59x their unclustered twins on the H200
        // (2026-12-04); at block scope, 0.94x.
        InlinePtx(
            "{\n.reg .b32 peer;\nmapa.shared::cluster.u32 peer, $0, $1;\n"
            "mbarrier.arrive.shared::cluster.b64 _, [peer];\n}",
            "r,r", {barrier, builder_.CreateIntCast(Emit(op->cta), builder_.getInt32Ty(), true)});
        return;
      }
      InlinePtx("mbarrier.arrive.shared::cta.b64 _, [$0];", "r", {barrier});
      return;
    case ir::MBarrierOpKind::kArriveExpectTx:
      InlinePtx("mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r",
                {barrier, value32()});
      return;
    case ir::MBarrierOpKind::kWait: {
      // try_wait suspends the thread for a while (a hardware time limit) and may return
      // false before the phase completes, so it runs in a loop.
      llvm::Value* parity = value32();
      llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx_, "mbarrier_wait", function_);
      llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_, "mbarrier_done", function_);
      builder_.CreateBr(loop);
      builder_.SetInsertPoint(loop);
      llvm::FunctionType* fn = llvm::FunctionType::get(
          builder_.getInt32Ty(), {builder_.getInt32Ty(), builder_.getInt32Ty()}, false);
      llvm::Value* ready = builder_.CreateCall(
          fn,
          llvm::InlineAsm::get(fn,
                               "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, "
                               "[$1], $2;\nselp.u32 $0, 1, 0, p;\n}",
                               "=r,r,r,~{memory}", /*hasSideEffects=*/true),
          {barrier, parity});
      builder_.CreateCondBr(builder_.CreateICmpNE(ready, builder_.getInt32(0)), done, loop);
      builder_.SetInsertPoint(done);
      return;
    }
  }
}

}  // namespace tune::llvm_backend
