// CodeGenGpu's wavefront-level matrix step on AMD GPUs (ir::WaveMma): each lane loads its run of
// A's row and of B's column from LDS into registers (one vector load where the run is
// contiguous), then one `llvm.amdgcn.mfma.*` (CDNA: gfx90a, gfx942) or `llvm.amdgcn.wmma.*`
// (RDNA3: gfx1100) per pair of tiles, the accumulators passed in and out as one vector. The
// lane's elements are the ones the ISA assigns it (ir::WaveMmaOperandK, stmt.h); the
// accumulators come back in the order ir::WaveMmaAccRow / WaveMmaAccCol describe.
//
// The instruction by (shape, dtype, k) and the GPUs that have it:
//   shape      dtype             k   intrinsic                           operand   GPUs
//   mfma32x32  f16               8   mfma.f32.32x32x8f16                 4 x f16   gfx90a, gfx942
//   mfma16x16  f16              16   mfma.f32.16x16x16f16                4 x f16   gfx90a, gfx942
//   mfma32x32  bf16              8   mfma.f32.32x32x8bf16.1k             4 x i16   gfx90a, gfx942
//   mfma16x16  bf16             16   mfma.f32.16x16x16bf16.1k            4 x i16   gfx90a, gfx942
//   mfma32x32  i8                8   mfma.i32.32x32x8i8                  i32       gfx90a
//   mfma16x16  i8               16   mfma.i32.16x16x16i8                 i32       gfx90a
//   mfma32x32  i8               16   mfma.i32.32x32x16.i8                i64       gfx942
//   mfma16x16  i8               32   mfma.i32.16x16x32.i8                i64       gfx942
//   mfma32x32  fp8e4m3fnuz      16   mfma.f32.32x32x16.fp8.fp8           i64       gfx942
//   mfma16x16  fp8e4m3fnuz      32   mfma.f32.16x16x32.fp8.fp8           i64       gfx942
//   mfma32x32  fp8e5m2fnuz      16   mfma.f32.32x32x16.bf8.bf8           i64       gfx942
//   mfma16x16  fp8e5m2fnuz      32   mfma.f32.16x16x32.bf8.bf8           i64       gfx942
//   wmma16x16  f16              16   wmma.f32.16x16x16.f16               16 x f16  gfx1100
//   wmma16x16  bf16             16   wmma.f32.16x16x16.bf16              16 x i16  gfx1100
//   wmma16x16  i8, u8i8         16   wmma.i32.16x16x16.iu8 (A signed     4 x i32   gfx1100
//                                    for i8, unsigned for u8i8)
// gfx942 (CDNA3) replaced CDNA2's 4-byte i8 instructions by the 8-byte ones; its fp8 and bf8 are
// the FNUZ encodings.
#include <string>
#include <vector>

#include "codegen/llvm/codegen_gpu.h"
#include "common/strings.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsAMDGPU.h"

namespace tune::llvm_backend {
namespace {

using ir::WaveMmaShape;

struct WaveInstruction {
  llvm::Intrinsic::ID id = llvm::Intrinsic::not_intrinsic;
  bool cdna2 = false, cdna3 = false, rdna3 = false;  // the GPUs that have it
};

WaveInstruction InstructionOf(WaveMmaShape shape, Dtype dtype, int k) {
  namespace I = llvm::Intrinsic;
  const bool big = shape == WaveMmaShape::kMfma32x32;
  if (shape == WaveMmaShape::kWmma16x16) {
    switch (dtype) {
      case Dtype::kF16:
        return {I::amdgcn_wmma_f32_16x16x16_f16, false, false, true};
      case Dtype::kBf16:
        return {I::amdgcn_wmma_f32_16x16x16_bf16, false, false, true};
      case Dtype::kI8:
      case Dtype::kU8I8:
        return {I::amdgcn_wmma_i32_16x16x16_iu8, false, false, true};
      default:
        return {};
    }
  }
  switch (dtype) {
    case Dtype::kF16:
      return {big ? I::amdgcn_mfma_f32_32x32x8f16 : I::amdgcn_mfma_f32_16x16x16f16, true, true};
    case Dtype::kBf16:
      return {big ? I::amdgcn_mfma_f32_32x32x8bf16_1k : I::amdgcn_mfma_f32_16x16x16bf16_1k, true,
              true};
    case Dtype::kI8:
      if (k == (big ? 8 : 16)) {
        return {big ? I::amdgcn_mfma_i32_32x32x8i8 : I::amdgcn_mfma_i32_16x16x16i8, true, false};
      }
      return {big ? I::amdgcn_mfma_i32_32x32x16_i8 : I::amdgcn_mfma_i32_16x16x32_i8, false, true};
    case Dtype::kFp8E4m3Fnuz:
      return {big ? I::amdgcn_mfma_f32_32x32x16_fp8_fp8 : I::amdgcn_mfma_f32_16x16x32_fp8_fp8,
              false, true};
    case Dtype::kFp8E5m2Fnuz:
      return {big ? I::amdgcn_mfma_f32_32x32x16_bf8_bf8 : I::amdgcn_mfma_f32_16x16x32_bf8_bf8,
              false, true};
    default:
      return {};
  }
}

}  // namespace

void CodeGenGpu::EmitWaveMma(const ir::WaveMma* op) {
  const std::string what = StrCat("wave_mma ", ir::WaveMmaShapeName(op->shape), " k", op->k, " of ",
                                  DtypeName(op->dtype));
  if (nvptx()) {
    Fail(absl::UnimplementedError(
        StrCat("GPU codegen: ", what, " is an AMDGPU instruction; NVIDIA GPUs take warp_mma")));
    return;
  }
  const WaveInstruction inst = InstructionOf(op->shape, op->dtype, op->k);
  const bool has = arch_.name == "gfx90a"    ? inst.cdna2
                   : arch_.name == "gfx942"  ? inst.cdna3
                   : arch_.name == "gfx1100" ? inst.rdna3
                                             : false;
  if (inst.id == llvm::Intrinsic::not_intrinsic || !has) {
    Fail(absl::UnimplementedError(StrCat("GPU codegen: ", arch_.name, " has no instruction for ",
                                         what, " (see codegen_gpu_wave_mma.cc's table)")));
    return;
  }
  llvm::Type* i32 = builder_.getInt32Ty();
  llvm::Type* i64 = builder_.getInt64Ty();
  const bool wmma = op->shape == WaveMmaShape::kWmma16x16;
  const int64_t tile = ir::WaveMmaTile(op->shape);
  const int run = ir::WaveMmaKPerLane(op->shape, op->k);
  const int accs = ir::WaveMmaAccumulators(op->shape);

  // The lane: mbcnt counts the lanes below this one in the (32- or 64-lane) execution mask.
  llvm::Value* lane = builder_.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_lo, {},
                                               {builder_.getInt32(-1), builder_.getInt32(0)});
  if (ir::WaveMmaLanes(op->shape) == 64) {
    lane = builder_.CreateIntrinsic(llvm::Intrinsic::amdgcn_mbcnt_hi, {},
                                    {builder_.getInt32(-1), lane});
  }
  lane = builder_.CreateZExt(lane, i64);
  llvm::Value* row_in_tile = builder_.CreateURem(lane, builder_.getInt64(tile));
  llvm::Value* k0 =
      wmma ? builder_.getInt64(0)
           : builder_.CreateMul(
                 builder_.CreateURem(builder_.CreateUDiv(lane, builder_.getInt64(tile)),
                                     builder_.getInt64(64 / tile)),
                 builder_.getInt64(run));

  auto index64 = [&](const ir::Expr& e) { return builder_.CreateSExtOrTrunc(Emit(e), i64); };
  // `run` elements of `buffer` from `index` on, as one aligned vector load.
  auto load_run = [&](const ir::Buffer& buffer, llvm::Value* index) -> llvm::Value* {
    llvm::Type* ety = ElementType(buffer);
    llvm::Type* vty = llvm::FixedVectorType::get(ety, run);
    llvm::Value* ptr = builder_.CreateInBoundsGEP(ety, BufferBase(buffer), index);
    const int64_t bytes = int64_t{run} * buffer.element_type().Bytes();
    return builder_.CreateAlignedLoad(vty, ptr, llvm::Align(std::min<int64_t>(16, bytes)));
  };

  // A: the lane's run of row (T mi + lane % T), from k0 on.
  llvm::Value* a_base = index64(op->a_index);
  std::vector<llvm::Value*> a_ops(op->m_tiles);
  for (int mi = 0; mi < op->m_tiles; ++mi) {
    llvm::Value* row = builder_.CreateAdd(row_in_tile, builder_.getInt64(tile * mi));
    a_ops[mi] = load_run(
        op->a, builder_.CreateAdd(
                   a_base, builder_.CreateAdd(
                               builder_.CreateMul(row, builder_.getInt64(op->a_stride)), k0)));
  }
  // B: the lane's run of column (T ni + lane % T): contiguous when B is stored [n][k], else one
  // element per row of K.
  llvm::Value* b_base = index64(op->b_index);
  std::vector<llvm::Value*> b_ops(op->n_tiles);
  for (int ni = 0; ni < op->n_tiles; ++ni) {
    llvm::Value* col = builder_.CreateAdd(row_in_tile, builder_.getInt64(tile * ni));
    if (op->b_k_contiguous) {
      b_ops[ni] = load_run(
          op->b, builder_.CreateAdd(
                     b_base, builder_.CreateAdd(
                                 builder_.CreateMul(col, builder_.getInt64(op->b_stride)), k0)));
      continue;
    }
    llvm::Type* ety = ElementType(op->b);
    llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(ety, run));
    for (int e = 0; e < run; ++e) {
      llvm::Value* k = builder_.CreateAdd(k0, builder_.getInt64(e));
      llvm::Value* index = builder_.CreateAdd(
          b_base, builder_.CreateAdd(builder_.CreateMul(k, builder_.getInt64(op->b_stride)), col));
      llvm::Value* ptr = builder_.CreateInBoundsGEP(ety, BufferBase(op->b), index);
      v = builder_.CreateInsertElement(
          v, builder_.CreateAlignedLoad(ety, ptr, llvm::Align(op->b.element_type().Bytes())), e);
    }
    b_ops[ni] = v;
  }

  // The operand and accumulator types the intrinsic takes; the registers hold the bits.
  llvm::Type* acc_elem = ElementType(op->acc);
  llvm::Type* acc_vec = llvm::FixedVectorType::get(acc_elem, accs);
  const int operand_bits = run * op->a.element_type().Bytes() * 8;
  llvm::Type* operand_type;
  if (op->dtype == Dtype::kF16) {
    operand_type = llvm::FixedVectorType::get(builder_.getHalfTy(), run);
  } else if (op->dtype == Dtype::kBf16) {
    operand_type = llvm::FixedVectorType::get(builder_.getInt16Ty(), run);
  } else if (operand_bits <= 64) {
    operand_type = builder_.getIntNTy(operand_bits);
  } else {
    operand_type = llvm::FixedVectorType::get(i32, operand_bits / 32);
  }
  std::vector<llvm::Type*> overload;
  if (wmma) {
    overload = {acc_vec, operand_type};  // llvm.amdgcn.wmma.*.<acc>.<operand>
  }
  llvm::Function* fn = llvm::Intrinsic::getDeclaration(module_, inst.id, overload);
  const bool iu8 = inst.id == llvm::Intrinsic::amdgcn_wmma_i32_16x16x16_iu8;

  llvm::Value* acc = BufferBase(op->acc);
  for (int mi = 0; mi < op->m_tiles; ++mi) {
    for (int ni = 0; ni < op->n_tiles; ++ni) {
      const int64_t first = op->acc_offset + int64_t{accs} * (mi * op->n_tiles + ni);
      std::vector<llvm::Value*> slots(accs);
      llvm::Value* c = llvm::PoisonValue::get(acc_vec);
      for (int r = 0; r < accs; ++r) {
        slots[r] = builder_.CreateInBoundsGEP(acc_elem, acc, builder_.getInt64(first + r));
        c = builder_.CreateInsertElement(c, builder_.CreateLoad(acc_elem, slots[r]), r);
      }
      llvm::Value* a = builder_.CreateBitCast(a_ops[mi], operand_type);
      llvm::Value* b = builder_.CreateBitCast(b_ops[ni], operand_type);
      llvm::Value* d;
      if (iu8) {
        // Signedness of A and B: u8i8 is unsigned activations by signed weights.
        d = builder_.CreateCall(fn, {builder_.getInt1(op->dtype != Dtype::kU8I8), a,
                                     builder_.getInt1(true), b, c, builder_.getInt1(false)});
      } else if (wmma) {
        d = builder_.CreateCall(fn, {a, b, c});
      } else {
        // cbsz, abid, blgp 0: no broadcast of A's blocks, B's lanes as they are.
        d = builder_.CreateCall(
            fn, {a, b, c, builder_.getInt32(0), builder_.getInt32(0), builder_.getInt32(0)});
      }
      for (int r = 0; r < accs; ++r) {
        builder_.CreateStore(builder_.CreateExtractElement(d, r), slots[r]);
      }
    }
  }
}

}  // namespace tune::llvm_backend
