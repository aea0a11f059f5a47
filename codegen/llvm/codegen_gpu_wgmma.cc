// CodeGenGpu's warpgroup-level tensor-core step (ir::WarpGroupMma): Hopper's
// `wgmma.mma_async.sync.aligned.m64n<N>k<K>` through inline PTX (LLVM 19 has no NVVM intrinsic
// for it), with both operands in shared memory behind matrix descriptors.
//
// A descriptor (PTX ISA, "Matrix Descriptor Format") packs the operand's shared address >> 4 in
// bits 0-13, the leading-dimension byte offset >> 4 in 16-29 (unused by K-major swizzled
// layouts: 1; for an N-major B the stride between its 64-column atoms), the stride byte offset
// >> 4 in 32-45 (1024 bytes between groups of 8 rows of 128 bytes), and the swizzle mode in
// 62-63 (1: 128 bytes); these are CUTLASS's canonical GMMA layouts ((8,m),(T,2)) K-major and
// ((T,8,m),(8,k)) MN-major. Step s of a statement starts 32 s bytes further into the rows (16
// rows further for an N-major B, read with imm-trans-b 1): the hardware applies the swizzle to
// the address it computes, which is why the arrays are 1024-byte aligned (GpuSharedAlignment).
//
// The accumulators pass through the asm statements as tied register operands: the fence before
// the first instruction, the instructions, and the wait (whose operands tie the registers that
// are still being written, so that nothing reads them before it).
#include <string>
#include <vector>

#include "codegen/llvm/codegen_gpu.h"
#include "common/strings.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/InlineAsm.h"

namespace tune::llvm_backend {
namespace {

constexpr int64_t kDescriptorStride = 1024;  // bytes between 8-row groups
constexpr uint64_t kSwizzle128 = 1;

// "f32.bf16.bf16" and the operands after the descriptors and scale-d, by dtype.
struct WgmmaForm {
  std::string types;
  std::string tail;  // immediates after scale-d
};

WgmmaForm FormOf(Dtype dtype) {
  switch (dtype) {
    case Dtype::kF16:
      return {"f32.f16.f16", ", 1, 1, 0, 0"};  // imm-scale-a, imm-scale-b, no transposes
    case Dtype::kBf16:
      return {"f32.bf16.bf16", ", 1, 1, 0, 0"};
    case Dtype::kTf32:
      return {"f32.tf32.tf32", ", 1, 1"};
    case Dtype::kFp8E4m3:
      return {"f32.e4m3.e4m3", ", 1, 1"};
    case Dtype::kFp8E5m2:
      return {"f32.e5m2.e5m2", ", 1, 1"};
    case Dtype::kI8:
      return {"s32.s8.s8", ""};
    case Dtype::kU8I8:
      return {"s32.u8.s8", ""};
    default:
      return {"", ""};
  }
}

// "{$first, ..., $first + count - 1}".
std::string OperandList(int first, int count) {
  std::string out = "{";
  for (int i = 0; i < count; ++i) {
    StrAppend(&out, i == 0 ? "" : ", ", "$", first + i);
  }
  return out + "}";
}

// "=f,=f,...,<extra>,0,1,...": `count` outputs of class `reg`, the extra inputs, and the outputs
// tied as inputs.
std::string TiedConstraints(int count, const std::string& reg, const std::string& extra) {
  std::string out;
  for (int i = 0; i < count; ++i) {
    StrAppend(&out, i == 0 ? "" : ",", "=", reg);
  }
  if (!extra.empty()) {
    StrAppend(&out, ",", extra);
  }
  for (int i = 0; i < count; ++i) {
    StrAppend(&out, ",", i);
  }
  return out + ",~{memory}";
}

}  // namespace

void CodeGenGpu::EmitAsyncProxyFence() {
  llvm::FunctionType* fn = llvm::FunctionType::get(builder_.getVoidTy(), {}, false);
  builder_.CreateCall(fn, llvm::InlineAsm::get(fn, "fence.proxy.async.shared::cta;", "~{memory}",
                                               /*hasSideEffects=*/true));
}

void CodeGenGpu::EmitWarpGroupMma(const ir::WarpGroupMma* op) {
  if (!nvptx() || arch_.name != "sm_90a") {
    Fail(absl::UnimplementedError(
        StrCat("GPU codegen: warpgroup_mma (wgmma) is an instruction of cuda -arch=sm_90a, not ",
               arch_.name)));
    return;
  }
  WgmmaForm form = FormOf(op->dtype);
  if (op->b_mn_atom_stride > 0) {
    form.tail = ", 1, 1, 0, 1";  // imm-trans-b: B N-major (16-bit dtypes, checked by Make)
  }
  if (form.types.empty()) {
    Fail(absl::InvalidArgumentError(
        StrCat("GPU codegen: no wgmma for dtype ", DtypeName(op->dtype))));
    return;
  }
  llvm::Type* i32 = builder_.getInt32Ty();
  llvm::Type* i64 = builder_.getInt64Ty();
  llvm::Type* acc_type = ElementType(op->acc);
  const bool integer = acc_type->isIntegerTy();
  const std::string reg = integer ? "r" : "f";
  const int count = op->n / 2;

  // The accumulators of this statement, as values.
  llvm::Value* acc = BufferBase(op->acc);
  std::vector<llvm::Value*> slots(count);
  std::vector<llvm::Value*> values(count);
  for (int j = 0; j < count; ++j) {
    slots[j] = builder_.CreateInBoundsGEP(acc_type, acc, builder_.getInt64(op->acc_offset + j));
    values[j] = builder_.CreateLoad(acc_type, slots[j]);
  }
  std::vector<llvm::Type*> result_types(count, acc_type);
  llvm::StructType* results = llvm::StructType::get(ctx_, result_types);
  // Runs `text` with the accumulators tied through it (and `extra` inputs before them).
  auto through = [&](const std::string& text, const std::string& extra_constraints,
                     std::vector<llvm::Value*> extra) {
    std::vector<llvm::Type*> params;
    for (llvm::Value* v : extra) {
      params.push_back(v->getType());
    }
    params.insert(params.end(), result_types.begin(), result_types.end());
    llvm::FunctionType* fn = llvm::FunctionType::get(results, params, false);
    llvm::InlineAsm* asm_value = llvm::InlineAsm::get(
        fn, text, TiedConstraints(count, reg, extra_constraints), /*hasSideEffects=*/true);
    extra.insert(extra.end(), values.begin(), values.end());
    llvm::Value* out = builder_.CreateCall(fn, asm_value, extra);
    for (int j = 0; j < count; ++j) {
      values[j] = builder_.CreateExtractValue(out, static_cast<unsigned>(j));
    }
  };

  // Descriptors: the shared address of each operand's first element, 32 bytes further per step
  // (K-major) or 16 rows of 128 bytes further (an N-major B, whose leading byte offset is the
  // stride between its 64-column atoms).
  auto descriptor = [&](const ir::Buffer& buffer, const ir::Expr& index, int step,
                        int64_t mn_atom_stride) {
    llvm::Value* ptr =
        builder_.CreateInBoundsGEP(ElementType(buffer), BufferBase(buffer), Emit(index));
    llvm::Value* address = builder_.CreatePtrToInt(ptr, i64);
    const int64_t advance = mn_atom_stride > 0 ? 16 * 128 * step : 32 * step;
    address = builder_.CreateAdd(address, builder_.getInt64(advance));
    llvm::Value* field = builder_.CreateAnd(builder_.CreateLShr(address, 4), 0x3FFF);
    const uint64_t leading = mn_atom_stride > 0 ? static_cast<uint64_t>(mn_atom_stride >> 4) : 1;
    const uint64_t constant =
        (leading << 16) | (uint64_t{kDescriptorStride >> 4} << 32) | (kSwizzle128 << 62);
    return builder_.CreateOr(field, builder_.getInt64(constant));
  };

  through("wgmma.fence.sync.aligned;", "", {});
  const std::string shape = StrCat("m64n", op->n, "k", ir::WarpMmaK(op->dtype));
  const std::string text =
      StrCat("{\n.reg .pred p;\nsetp.ne.b32 p, $", count + 2, ", 0;\nwgmma.mma_async.sync.aligned.",
             shape, ".", form.types, " ", OperandList(0, count), ", $", count, ", $", count + 1,
             ", p", form.tail, ";\n}");
  for (int s = 0; s < op->k_steps; ++s) {
    through(text, "l,l,r",
            {descriptor(op->a, op->a_index, s, 0),
             descriptor(op->b, op->b_index, s, op->b_mn_atom_stride),
             llvm::ConstantInt::get(i32, s == 0 && op->overwrite ? 0 : 1)});
  }
  through("wgmma.commit_group.sync.aligned;", "", {});
  through(StrCat("wgmma.wait_group.sync.aligned ", op->pending, ";"), "", {});
  for (int j = 0; j < count; ++j) {
    builder_.CreateStore(values[j], slots[j]);
  }
}

}  // namespace tune::llvm_backend
