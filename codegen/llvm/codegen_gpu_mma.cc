// CodeGenGpu's warp-level tensor-core step (ir::WarpMma): ldmatrix fragment loads and
// mma.sync.aligned.m16n8k<K>.row.col, through NVVM intrinsics where LLVM 19 has them and inline
// PTX for the 8-bit floats (mma with e4m3/e5m2 operands, PTX ISA 8.4, sm_89 on).
//
// Every fragment row the instruction reads is 32 bytes of K (16 bf16/f16, 8 tf32, 32 8-bit
// values), so one addressing scheme serves every dtype: `ldmatrix.x4` of A at row lane % 16,
// byte column 16 (lane / 16), gives a0..a3 of m16n8k<K>; `ldmatrix.x4` of B stored [n][k] at row
// 8 (lane / 16) + lane % 8, byte column 16 ((lane / 8) % 2), gives b0, b1 of two n-tiles; B
// stored [k][n] (16-bit only) is read with `.trans` at row lane % 16, column 8 (lane / 16).
#include <array>
#include <string>
#include <vector>

#include "codegen/llvm/codegen_gpu.h"
#include "common/strings.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace tune::llvm_backend {
namespace {

// The mma intrinsic of a dtype, or not_intrinsic where the instruction is inline PTX.
llvm::Intrinsic::ID MmaIntrinsic(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF16:
      return llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32;
    case Dtype::kBf16:
      return llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16;
    case Dtype::kTf32:
      return llvm::Intrinsic::nvvm_mma_m16n8k8_row_col_tf32;
    case Dtype::kI8:
      return llvm::Intrinsic::nvvm_mma_m16n8k32_row_col_s8;
    case Dtype::kU8I8:
      return llvm::Intrinsic::nvvm_mma_m16n8k32_row_col_u8_s8;
    default:
      return llvm::Intrinsic::not_intrinsic;
  }
}

}  // namespace

void CodeGenGpu::EmitWarpMma(const ir::WarpMma* op) {
  if (!nvptx()) {
    Fail(absl::UnimplementedError(StrCat("GPU codegen: warp_mma is an NVPTX instruction; ",
                                         arch_.name,
                                         " has MFMA/WMMA, which tune does not generate yet")));
    return;
  }
  llvm::Type* i32 = builder_.getInt32Ty();
  llvm::Type* i64 = builder_.getInt64Ty();
  const int64_t a_bytes = op->a.element_type().Bytes();
  const int64_t b_bytes = op->b.element_type().Bytes();
  llvm::Value* lane = builder_.CreateZExt(
      builder_.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_laneid, {}, {}), i64);
  auto lane_div = [&](int64_t d) { return builder_.CreateUDiv(lane, builder_.getInt64(d)); };
  auto lane_mod = [&](int64_t d) { return builder_.CreateURem(lane, builder_.getInt64(d)); };
  // The shared address of element `index` of `buffer` (byte offsets into the i8 view).
  auto address = [&](const ir::Buffer& buffer, llvm::Value* index) {
    return builder_.CreateInBoundsGEP(ElementType(buffer), BufferBase(buffer), index);
  };
  auto ldmatrix = [&](llvm::Intrinsic::ID id, llvm::Value* ptr, int regs) {
    // Overloaded on the pointer (llvm.nvvm.ldmatrix.*.p3 for shared memory).
    std::vector<llvm::Type*> overload;
    if (llvm::Intrinsic::isOverloaded(id)) {
      overload.push_back(ptr->getType());
    }
    llvm::Value* result = builder_.CreateIntrinsic(id, overload, {ptr});
    std::vector<llvm::Value*> out;
    for (int r = 0; r < regs; ++r) {
      out.push_back(regs == 1 ? result : builder_.CreateExtractValue(result, r));
    }
    return out;
  };

  // A fragments: four registers per 16-row tile.
  llvm::Value* a_base = Emit(op->a_index);
  llvm::Value* a_row = builder_.CreateMul(lane_mod(16), builder_.getInt64(op->a_stride));
  llvm::Value* a_col = builder_.CreateMul(lane_div(16), builder_.getInt64(16 / a_bytes));
  std::vector<std::array<llvm::Value*, 4>> a_frag(op->m_tiles);
  for (int mi = 0; mi < op->m_tiles; ++mi) {
    llvm::Value* index =
        builder_.CreateAdd(builder_.CreateAdd(a_base, builder_.getInt64(16 * mi * op->a_stride)),
                           builder_.CreateAdd(a_row, a_col));
    std::vector<llvm::Value*> r =
        ldmatrix(llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16, address(op->a, index), 4);
    a_frag[mi] = {r[0], r[1], r[2], r[3]};
  }

  // B fragments: two registers per 8-column tile, loaded two tiles at a time.
  llvm::Value* b_base = Emit(op->b_index);
  std::vector<std::array<llvm::Value*, 2>> b_frag(op->n_tiles);
  for (int ni = 0; ni < op->n_tiles; ni += 2) {
    const bool pair = ni + 1 < op->n_tiles;
    llvm::Value* offset;
    llvm::Intrinsic::ID id;
    if (op->b_k_contiguous) {
      // Rows n: 8 ni + 8 (lane / 16) + lane % 8 (x2: lane % 16 < 16 keeps the pair's first).
      llvm::Value* n = builder_.CreateAdd(
          builder_.CreateMul(pair ? lane_div(16) : builder_.getInt64(0), builder_.getInt64(8)),
          lane_mod(8));
      llvm::Value* k = builder_.CreateMul(builder_.CreateURem(lane_div(8), builder_.getInt64(2)),
                                          builder_.getInt64(16 / b_bytes));
      offset =
          builder_.CreateAdd(builder_.CreateMul(builder_.CreateAdd(n, builder_.getInt64(8 * ni)),
                                                builder_.getInt64(op->b_stride)),
                             k);
      id = pair ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16
                : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_b16;
    } else {
      // Rows k: lane % 16; columns 8 ni + 8 (lane / 16).
      llvm::Value* k = builder_.CreateMul(lane_mod(16), builder_.getInt64(op->b_stride));
      llvm::Value* n =
          builder_.CreateMul(pair ? lane_div(16) : builder_.getInt64(0), builder_.getInt64(8));
      offset = builder_.CreateAdd(k, builder_.CreateAdd(n, builder_.getInt64(8 * ni)));
      id = pair ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x2_trans_b16;
    }
    std::vector<llvm::Value*> r =
        ldmatrix(id, address(op->b, builder_.CreateAdd(b_base, offset)), pair ? 4 : 2);
    b_frag[ni] = {r[0], r[1]};
    if (pair) {
      b_frag[ni + 1] = {r[2], r[3]};
    }
  }

  // The multiply-accumulates, accumulators read from and written back to `acc` (registers once
  // SROA has run: every index is a constant).
  llvm::Type* acc_type = ElementType(op->acc);
  llvm::Value* acc = BufferBase(op->acc);
  const llvm::Intrinsic::ID mma_id = MmaIntrinsic(op->dtype);
  llvm::Function* mma = mma_id != llvm::Intrinsic::not_intrinsic
                            ? llvm::Intrinsic::getDeclaration(module_, mma_id)
                            : nullptr;
  llvm::InlineAsm* asm_mma = nullptr;
  if (mma == nullptr) {
    const char* type = op->dtype == Dtype::kFp8E4m3 ? "e4m3" : "e5m2";
    llvm::Type* f32 = builder_.getFloatTy();
    llvm::StructType* ret = llvm::StructType::get(ctx_, {f32, f32, f32, f32});
    llvm::FunctionType* fn =
        llvm::FunctionType::get(ret, {i32, i32, i32, i32, i32, i32, f32, f32, f32, f32}, false);
    asm_mma = llvm::InlineAsm::get(
        fn,
        StrCat("mma.sync.aligned.m16n8k32.row.col.f32.", type, ".", type,
               ".f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};"),
        "=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f", /*hasSideEffects=*/false);
  }
  llvm::FunctionType* fn_type =
      mma != nullptr ? mma->getFunctionType() : asm_mma->getFunctionType();
  for (int mi = 0; mi < op->m_tiles; ++mi) {
    for (int ni = 0; ni < op->n_tiles; ++ni) {
      const int64_t first = op->acc_offset + 4 * (mi * op->n_tiles + ni);
      std::array<llvm::Value*, 4> slots;
      std::vector<llvm::Value*> args;
      for (llvm::Value* v : a_frag[mi]) {
        args.push_back(v);
      }
      for (llvm::Value* v : b_frag[ni]) {
        args.push_back(v);
      }
      for (int j = 0; j < 4; ++j) {
        slots[j] = builder_.CreateInBoundsGEP(acc_type, acc, builder_.getInt64(first + j));
        args.push_back(builder_.CreateLoad(acc_type, slots[j]));
      }
      // The intrinsics take f16 fragments as <2 x half>; the registers hold their bits.
      for (size_t i = 0; i < args.size(); ++i) {
        llvm::Type* want = fn_type->getParamType(static_cast<unsigned>(i));
        if (args[i]->getType() != want) {
          args[i] = builder_.CreateBitCast(args[i], want);
        }
      }
      llvm::Value* d = mma != nullptr ? builder_.CreateCall(mma, args)
                                      : builder_.CreateCall(fn_type, asm_mma, args);
      for (int j = 0; j < 4; ++j) {
        builder_.CreateStore(builder_.CreateExtractValue(d, j), slots[j]);
      }
    }
  }
}

}  // namespace tune::llvm_backend
