// x86's matrix instructions: ir::DotAccumulate as AVX512-BF16 vdpbf16ps and AVX512-VNNI vpdpbusd
// where the target has them (else CodeGenLlvm's plain vector sums), float32 -> bfloat16 casts as
// AVX512-BF16 vcvtneps2bf16, and ir::AmxTileOp as the AMX intrinsics on numbered tiles
// (ldtilecfg from a constant configuration, tileloadd, tilestored, tilezero, tdpbf16ps /
// tdpbssd / tdpbusd, tilerelease).
#include <array>
#include <string>

#include "codegen/ir/visitor.h"
#include "codegen/llvm/codegen_cpu.h"
#include "codegen/llvm/cpu_backend.h"
#include "codegen/llvm/cpu_names.h"
#include "common/cpu_amx.h"
#include "common/strings.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IntrinsicsX86.h"

namespace tune::llvm_backend {

namespace {

class UsesTiles final : public ir::IrVisitor {
 public:
  bool found = false;

 protected:
  void Visit(const ir::AmxTileOp* op) override { found = true; }
};

}  // namespace

void CodeGenCpu::EmitAmxPermission(const ir::LoweredFunc& func) {
  UsesTiles uses;
  uses.VisitStmt(func.body);
  if (!uses.found) {
    return;
  }
  llvm::Type* i32 = builder_.getInt32Ty();
  llvm::Type* i64 = builder_.getInt64Ty();
  llvm::GlobalVariable* ready = module_->getNamedGlobal("tune_amx_ready");
  if (ready == nullptr) {
    ready = new llvm::GlobalVariable(*module_, i32, /*isConstant=*/false,
                                     llvm::GlobalValue::InternalLinkage, builder_.getInt32(0),
                                     "tune_amx_ready");
  }
  llvm::LoadInst* flag = builder_.CreateAlignedLoad(i32, ready, llvm::Align(4));
  flag->setAtomic(llvm::AtomicOrdering::Monotonic);
  llvm::BasicBlock* ask = llvm::BasicBlock::Create(ctx_, "amx_ask", function_);
  llvm::BasicBlock* granted = llvm::BasicBlock::Create(ctx_, "amx_granted", function_);
  llvm::BasicBlock* denied = llvm::BasicBlock::Create(ctx_, "amx_denied", function_);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(ctx_, "amx_ready", function_);
  builder_.CreateCondBr(builder_.CreateICmpEQ(flag, builder_.getInt32(0)), ask, body);
  builder_.SetInsertPoint(ask);
  llvm::FunctionCallee syscall =
      module_->getOrInsertFunction("syscall", llvm::FunctionType::get(i64, {i64}, true));
  llvm::Value* rc = builder_.CreateCall(
      syscall, {builder_.getInt64(kSysArchPrctl), builder_.getInt64(kArchReqXcompPerm),
                builder_.getInt64(kXfeatureXtiledata)});
  builder_.CreateCondBr(builder_.CreateICmpEQ(rc, builder_.getInt64(0)), granted, denied);
  builder_.SetInsertPoint(denied);
  builder_.CreateRet(builder_.getInt32(kAmxDeniedStatus));
  builder_.SetInsertPoint(granted);
  llvm::StoreInst* set = builder_.CreateAlignedStore(builder_.getInt32(1), ready, llvm::Align(4));
  set->setAtomic(llvm::AtomicOrdering::Monotonic);
  builder_.CreateBr(body);
  builder_.SetInsertPoint(body);
}

bool CodeGenCpu::HasFeature(std::string_view feature) const {
  if (features_.empty()) {  // a named CPU: its own features, looked up once each
    auto it = features_known_.find(feature);
    if (it == features_known_.end()) {
      it = features_known_.emplace(std::string(feature), X86CpuHasFeature(cpu_, feature)).first;
    }
    return it->second;
  }
  // The host's list ("+avx2,-avx512f,..."): each entry one feature.
  for (std::string_view rest = features_; !rest.empty();) {
    const size_t comma = rest.find(',');
    const std::string_view entry = rest.substr(0, comma);
    if (entry.size() == feature.size() + 1 && entry[0] == '+' && entry.substr(1) == feature) {
      return true;
    }
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return false;
}

llvm::Value* CodeGenCpu::EmitDotAccumulate(const ir::DotAccumulate* op) {
  const int lanes = op->type.lanes();
  const bool pairs = op->kind == ir::DotKind::kBf16Pairs;
  // vdpbf16ps and vpdpbusd of 512 bits; 256 and 128 bits with AVX512-VL. float16 pairs have no
  // instruction: converted and fused multiply-added.
  const bool width_ok = lanes == 16 || ((lanes == 8 || lanes == 4) && HasFeature("avx512vl"));
  if (op->kind == ir::DotKind::kF16Pairs || !width_ok ||
      !HasFeature(pairs ? "avx512bf16" : "avx512vnni")) {
    return CodeGenLlvm::EmitDotAccumulate(op);
  }
  const int group = ir::DotGroup(op->kind);
  llvm::Value* acc = Emit(op->acc);
  llvm::Value* a = Emit(op->a);
  llvm::Value* b = Emit(op->b);
  llvm::Type* i32 = builder_.getInt32Ty();
  // Each operand as <N x i32>: one group's 32 bits broadcast to every lane, or N groups.
  auto words = [&](llvm::Value* v, const ir::Expr& e) {
    return e.type().lanes() == group
               ? builder_.CreateVectorSplat(lanes, builder_.CreateBitCast(v, i32))
               : builder_.CreateBitCast(v, llvm::FixedVectorType::get(i32, lanes));
  };
  a = words(a, op->a);
  b = words(b, op->b);
  if (pairs) {
    // LLVM 19's operands: <N x float>, <2N x bfloat>, <2N x bfloat> (tune's bfloat16 is i16).
    llvm::Type* bf16 = llvm::FixedVectorType::get(builder_.getBFloatTy(), 2 * lanes);
    const llvm::Intrinsic::ID id = lanes == 16  ? llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512
                                   : lanes == 8 ? llvm::Intrinsic::x86_avx512bf16_dpbf16ps_256
                                                : llvm::Intrinsic::x86_avx512bf16_dpbf16ps_128;
    return builder_.CreateIntrinsic(
        id, {}, {acc, builder_.CreateBitCast(a, bf16), builder_.CreateBitCast(b, bf16)});
  }
  // vpdpbusd's operands are all <N x i32>: the first multiplicand unsigned, the second signed.
  const llvm::Intrinsic::ID id = lanes == 16  ? llvm::Intrinsic::x86_avx512_vpdpbusd_512
                                 : lanes == 8 ? llvm::Intrinsic::x86_avx512_vpdpbusd_256
                                              : llvm::Intrinsic::x86_avx512_vpdpbusd_128;
  return builder_.CreateIntrinsic(id, {}, {acc, a, b});
}

llvm::Value* CodeGenCpu::EmitFloatToBf16(llvm::Value* v, int lanes) {
  // vcvtneps2bf16 of 512 bits, or 256 with AVX512-VL: nearest even and quiet NaNs like the
  // arithmetic, but subnormal inputs become zeros of their sign. Values that small are far
  // below every tolerance, and one instruction replaces eight per vector: where a reduction is
  // short, a tile spends as long storing its sums as computing them (a 1x1 convolution over 64
  // channels).
  const bool width_ok = lanes == 16 || (lanes == 8 && HasFeature("avx512vl"));
  if (!width_ok || !HasFeature("avx512bf16")) {
    return CodeGenLlvm::EmitFloatToBf16(v, lanes);
  }
  const llvm::Intrinsic::ID id = lanes == 16 ? llvm::Intrinsic::x86_avx512bf16_cvtneps2bf16_512
                                             : llvm::Intrinsic::x86_avx512bf16_cvtneps2bf16_256;
  return builder_.CreateBitCast(builder_.CreateIntrinsic(id, {}, {v}),
                                llvm::FixedVectorType::get(builder_.getInt16Ty(), lanes));
}

void CodeGenCpu::EmitAmxTileOp(const ir::AmxTileOp* op) {
  const bool dot = op->op == ir::AmxTileOpKind::kDot;
  const char* needed = !dot ? "amx-tile" : op->dtype == Dtype::kBf16 ? "amx-bf16" : "amx-int8";
  if (!HasFeature(needed)) {
    Fail(absl::InvalidArgumentError(StrCat("CPU codegen: an AMX tile instruction needs ", needed,
                                           ", which -mcpu=", cpu_, " does not have")));
    return;
  }
  auto tile = [&](int t) { return builder_.getInt8(static_cast<uint8_t>(t)); };
  auto address = [&]() {
    return builder_.CreateInBoundsGEP(ElementType(op->buffer), BufferBase(op->buffer),
                                      Emit(op->index));
  };
  auto stride_bytes = [&]() {
    return builder_.getInt64(op->stride * (op->buffer.element_type().bits() / 8));
  };
  switch (op->op) {
    case ir::AmxTileOpKind::kConfigure: {
      // The 64-byte configuration: palette 1 at byte 0, tile t's bytes per row at 16 + 2t
      // (16 bits) and its rows at 48 + t; unused tiles stay zero.
      std::array<uint8_t, 64> bytes{};
      bytes[0] = 1;
      for (size_t t = 0; t < op->shapes.size(); ++t) {
        bytes[16 + 2 * t] = static_cast<uint8_t>(op->shapes[t].colsb);
        bytes[48 + t] = static_cast<uint8_t>(op->shapes[t].rows);
      }
      llvm::Constant* init = llvm::ConstantDataArray::get(ctx_, bytes);
      auto* config =
          new llvm::GlobalVariable(*module_, init->getType(), /*isConstant=*/true,
                                   llvm::GlobalValue::PrivateLinkage, init, "amx_tile_config");
      config->setAlignment(llvm::Align(64));
      builder_.CreateIntrinsic(llvm::Intrinsic::x86_ldtilecfg, {}, {config});
      return;
    }
    case ir::AmxTileOpKind::kZero:
      builder_.CreateIntrinsic(llvm::Intrinsic::x86_tilezero, {}, {tile(op->tile)});
      return;
    case ir::AmxTileOpKind::kLoad:
      builder_.CreateIntrinsic(llvm::Intrinsic::x86_tileloadd64, {},
                               {tile(op->tile), address(), stride_bytes()});
      return;
    case ir::AmxTileOpKind::kStore:
      builder_.CreateIntrinsic(llvm::Intrinsic::x86_tilestored64, {},
                               {tile(op->tile), address(), stride_bytes()});
      return;
    case ir::AmxTileOpKind::kDot: {
      const llvm::Intrinsic::ID id = op->dtype == Dtype::kBf16 ? llvm::Intrinsic::x86_tdpbf16ps
                                     : op->dtype == Dtype::kI8 ? llvm::Intrinsic::x86_tdpbssd
                                                               : llvm::Intrinsic::x86_tdpbusd;
      builder_.CreateIntrinsic(id, {}, {tile(op->tile), tile(op->a_tile), tile(op->b_tile)});
      return;
    }
    case ir::AmxTileOpKind::kRelease:
      builder_.CreateIntrinsic(llvm::Intrinsic::x86_tilerelease, {}, {});
      return;
  }
}

}  // namespace tune::llvm_backend
