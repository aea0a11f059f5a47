// Tests of the NVPTX and AMDGPU backends without a GPU: hand-built kernels are lowered and
// emitted, and the PTX text / HSA code objects are inspected (ptxas, llvm-readelf-19 and
// llvm-objdump-19 check them further when they are installed). Bad kernel shapes are refused
// with errors naming the loop or limit.
#include "codegen/llvm/gpu_backend.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "codegen/compiler.h"
#include "codegen/llvm/cpu_backend.h"
#include "codegen/lower.h"
#include "common/files.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

using ir::Allocate;
using ir::Barrier;
using ir::Block;
using ir::Buffer;
using ir::Expr;
using ir::Fma;
using ir::For;
using ir::LetStmt;
using ir::Load;
using ir::LoopKind;
using ir::LoweredFunc;
using ir::MemoryScope;
using ir::Ramp;
using ir::Stmt;
using ir::Store;
using ir::Var;

constexpr char kPtxas[] = "/usr/local/cuda/bin/ptxas";
constexpr char kReadelf[] = "/usr/lib/llvm-19/bin/llvm-readelf";
constexpr char kObjdump[] = "/usr/lib/llvm-19/bin/llvm-objdump";

bool Exists(const char* path) { return std::filesystem::exists(path); }

// Runs a shell command; returns its exit status and stdout+stderr.
std::pair<int, std::string> RunTool(const std::string& command) {
  std::string output;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) {
    return {-1, ""};
  }
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) {
    output.append(buffer, n);
  }
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

Target ParseTarget(const std::string& text) {
  absl::StatusOr<Target> t = Target::Parse(text);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

LoweredFunc Lowered(LoweredFunc func) {
  absl::StatusOr<LoweredFunc> lowered = Lower(std::move(func));
  EXPECT_TRUE(lowered.ok()) << lowered.status();
  return *lowered;
}

GpuModule MustEmit(const std::vector<LoweredFunc>& funcs, const std::string& target) {
  GpuCodegenOptions options;
  options.target = ParseTarget(target);
  absl::StatusOr<GpuModule> module = EmitGpuModule(funcs, options);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *module : GpuModule{};
}

// C[i] = A[i] + B[i] for i = bx * 256 + tx: a block and a thread loop on axis x.
LoweredFunc VectorAdd(int64_t blocks = 64) {
  Buffer a("A"), b("B"), c("C");
  Var bx("bx"), tx("tx");
  Expr i = bx * 256 + tx;
  Stmt body =
      For::Make(bx, 0, blocks, LoopKind::kGpuBlock,
                For::Make(tx, 0, 256, LoopKind::kGpuThread, Store::Make(c, i, a(i) + b(i))));
  return {"vadd", {a, b, c}, body};
}

// Each block of 128 threads stages 512 floats of A in shared memory (4 per thread, as one dense
// vector), waits at a barrier, and writes them reversed by groups of 4 to C. With `aligned` false
// the global offsets are shifted by one element, so no 16-byte alignment can be proven for them.
LoweredFunc SharedTile(const std::string& name, bool aligned) {
  Buffer a("A"), c("C"), tile("tile", MemoryScope::kGpuShared);
  Var bx("bx"), tx("tx");
  Expr shift = aligned ? Expr(0) : Expr(1);
  Expr global = bx * 512 + tx * 4 + shift;
  Expr reversed = (Expr(127) - tx) * 4;
  Stmt threads = For::Make(
      tx, 0, 128, LoopKind::kGpuThread,
      Block::Make({Store::Make(tile, Ramp::Make(tx * 4, 1, 4), Load::Make(a, global, 4)),
                   Barrier::Make(),
                   Store::Make(c, Ramp::Make(global, 1, 4), Load::Make(tile, reversed, 4))}));
  Stmt body = For::Make(bx, 0, 16, LoopKind::kGpuBlock, Allocate::Make(tile, 512, threads));
  return {name, {a, c}, body};
}

// A 4-element register tile per thread: acc[j] += A[t, k] * B[k, 4t + j] over k, with the j
// loops unrolled, so that the gpu_local array is indexed by constants only.
LoweredFunc RegisterTile() {
  Buffer a("A"), b("B"), c("C"), acc("acc", MemoryScope::kGpuLocal);
  Var bx("bx"), tx("tx"), k("k"), j0("j0"), j1("j1"), j2("j2");
  Var t("t");
  Stmt init = For::Make(j0, 0, 4, LoopKind::kUnrolled, Store::Make(acc, j0, 0.0f));
  Stmt update = For::Make(
      k, 0, 64, LoopKind::kSerial,
      For::Make(j1, 0, 4, LoopKind::kUnrolled,
                Store::Make(acc, j1, Fma::Make(a(t * 64 + k), b(k * 512 + t * 4 + j1), acc(j1)))));
  Stmt write = For::Make(j2, 0, 4, LoopKind::kUnrolled, Store::Make(c, t * 4 + j2, acc(j2)));
  Stmt body = For::Make(
      bx, 0, 4, LoopKind::kGpuBlock,
      For::Make(tx, 0, 32, LoopKind::kGpuThread,
                LetStmt::Make(t, bx * 32 + tx,
                              Allocate::Make(acc, 4, Block::Make({init, update, write})))));
  return {"regtile", {a, b, c}, body};
}

// Histogram of A's values mod 16 into C[16]: every block adds into the same 16 elements, so
// the adds must be atomic; C is the kernel's accumulated (zeroed) argument.
LoweredFunc Histogram() {
  Buffer a("A"), c("C");
  Var bx("bx"), tx("tx");
  Expr i = bx * 128 + tx;
  Stmt body = For::Make(
      bx, 0, 8, LoopKind::kGpuBlock,
      For::Make(tx, 0, 128, LoopKind::kGpuThread, Store::MakeAtomicAdd(c, tx % 16, a(i))));
  return {"hist", {a, c}, body};
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) {
    ++n;
  }
  return n;
}

TEST(GpuLaunchTest, LaunchGeometryIsReadOffTheGpuLoops) {
  absl::StatusOr<GpuLaunch> launch = GpuLaunchOf(VectorAdd(64));
  ASSERT_TRUE(launch.ok()) << launch.status();
  EXPECT_EQ(launch->grid, (std::array<uint32_t, 3>{64, 1, 1}));
  EXPECT_EQ(launch->block, (std::array<uint32_t, 3>{256, 1, 1}));
  EXPECT_EQ(launch->static_shared_bytes, 0u);
  absl::StatusOr<GpuLaunch> tiled = GpuLaunchOf(SharedTile("t", true));
  ASSERT_TRUE(tiled.ok()) << tiled.status();
  EXPECT_EQ(tiled->grid[0], 16u);
  EXPECT_EQ(tiled->block[0], 128u);
  EXPECT_EQ(tiled->static_shared_bytes, 2048u);
}

TEST(GpuLaunchTest, ArgumentsAddedIntoAtomicallyAreTheLaunchsZeroedArgs) {
  absl::StatusOr<GpuLaunch> hist = GpuLaunchOf(Histogram());
  ASSERT_TRUE(hist.ok()) << hist.status();
  EXPECT_EQ(hist->zeroed_args, std::vector<uint32_t>{1});
  EXPECT_NE(ToString(*hist).find("zeroed_args=1"), std::string::npos) << ToString(*hist);
  absl::StatusOr<GpuLaunch> plain = GpuLaunchOf(VectorAdd());
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(plain->zeroed_args.empty());
}

class NvptxTest : public ::testing::TestWithParam<std::string> {};

TEST_P(NvptxTest, AtomicAddsBecomeGlobalFloatReductions) {
  GpuModule module = MustEmit({Lowered(Histogram())}, "cuda -arch=" + GetParam());
  ASSERT_EQ(module.kernels.size(), 1u);
  EXPECT_EQ(module.kernels[0].launch.zeroed_args, std::vector<uint32_t>{1});
  // The result is unused: a reduction (red) or an atomic (atom) that discards it.
  EXPECT_TRUE(module.code.find("red.global.add.f32") != std::string::npos ||
              module.code.find("atom.global.add.f32") != std::string::npos)
      << module.code;
}

TEST_P(NvptxTest, VectorAddIsAnEntryWithItsMaxBlockSizeAndIndexReads) {
  GpuModule module = MustEmit({Lowered(VectorAdd())}, "cuda -arch=" + GetParam());
  EXPECT_EQ(module.format, CodeFormat::kPtx);
  ASSERT_EQ(module.kernels.size(), 1u);
  EXPECT_EQ(module.kernels[0].name, "vadd");
  EXPECT_EQ(module.kernels[0].launch.grid[0], 64u);
  EXPECT_EQ(module.kernels[0].launch.block[0], 256u);
  const std::string& ptx = module.code;
  EXPECT_NE(ptx.find(".target " + GetParam()), std::string::npos) << ptx;
  EXPECT_NE(ptx.find(".entry vadd("), std::string::npos) << ptx;
  EXPECT_NE(ptx.find(".maxntid 256, 1, 1"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("%ctaid.x"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("%tid.x"), std::string::npos) << ptx;
  // A and B are read-only and not aliased: their loads take the non-coherent path.
  EXPECT_NE(ptx.find("ld.global.nc.f32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("st.global.f32"), std::string::npos) << ptx;
  EXPECT_NE(module.llvm_ir.find("ptr addrspace(1) noalias"), std::string::npos) << module.llvm_ir;
}

TEST_P(NvptxTest, SharedTileHasASharedArrayABarrierAndVectorAccessesWhereAligned) {
  GpuModule module = MustEmit({Lowered(SharedTile("tiled", true))}, "cuda -arch=" + GetParam());
  const std::string& ptx = module.code;
  EXPECT_NE(ptx.find(".shared .align 16 .b8 tiled_tile[2048]"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("bar.sync"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("ld.global.nc.v4.f32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("st.global.v4.f32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("st.shared.v4.f32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("ld.shared.v4.f32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find(".maxntid 128, 1, 1"), std::string::npos) << ptx;
}

TEST_P(NvptxTest, UnprovableAlignmentGivesScalarGlobalAccesses) {
  GpuModule module =
      MustEmit({Lowered(SharedTile("unaligned", false))}, "cuda -arch=" + GetParam());
  const std::string& ptx = module.code;
  EXPECT_EQ(ptx.find("ld.global.nc.v4.f32"), std::string::npos) << ptx;
  EXPECT_EQ(ptx.find("st.global.v4.f32"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("ld.global.nc.f32"), std::string::npos) << ptx;
  // The shared array's own offsets are still multiples of 4.
  EXPECT_NE(ptx.find("st.shared.v4.f32"), std::string::npos) << ptx;
}

TEST_P(NvptxTest, ClampedAndSelectedIndicesKeepTheAlignmentOfTheirOperands) {
  // An edge tile clamps its offsets (min, max) and picks rows (select, floor mod): each operand
  // is a multiple of 4 elements, so the accesses stay 16-byte vectors.
  Buffer a("A"), c("C");
  Var bx("bx"), tx("tx");
  Expr row = ir::Select::Make(bx < 3, bx, Expr(2)) % 4;
  Expr col = ir::Max::Make(ir::Min::Make(tx * 4, Expr(996)), Expr(0));
  Expr at = row * 1000 + col;
  Stmt body = For::Make(
      bx, 0, 4, LoopKind::kGpuBlock,
      For::Make(tx, 0, 256, LoopKind::kGpuThread, Store::Make(c, at, Load::Make(a, at, 4))));
  GpuModule module = MustEmit({Lowered({"clamped", {a, c}, body})}, "cuda -arch=" + GetParam());
  EXPECT_NE(module.code.find("ld.global.nc.v4.f32"), std::string::npos) << module.code;
  EXPECT_NE(module.code.find("st.global.v4.f32"), std::string::npos) << module.code;
}

TEST_P(NvptxTest, UnrolledRegisterTileLivesInRegisters) {
  GpuModule module = MustEmit({Lowered(RegisterTile())}, "cuda -arch=" + GetParam());
  const std::string& ptx = module.code;
  EXPECT_EQ(ptx.find(".local"), std::string::npos) << ptx;
  EXPECT_EQ(ptx.find("__local_depot"), std::string::npos) << ptx;
  EXPECT_GE(Count(ptx, "fma.rn.f32"), 4u) << ptx;
  EXPECT_NE(ptx.find(".maxntid 32, 1, 1"), std::string::npos) << ptx;
}

TEST_P(NvptxTest, SeveralKernelsShareOneModule) {
  GpuModule module = MustEmit({Lowered(VectorAdd()), Lowered(SharedTile("tiled", true))},
                              "cuda -arch=" + GetParam());
  ASSERT_EQ(module.kernels.size(), 2u);
  EXPECT_NE(module.code.find(".entry vadd("), std::string::npos);
  EXPECT_NE(module.code.find(".entry tiled("), std::string::npos);
}

TEST_P(NvptxTest, PtxasAssemblesTheKernelsWhenInstalled) {
  if (!Exists(kPtxas)) {
    GTEST_SKIP() << kPtxas << " is not installed";
  }
  GpuModule module =
      MustEmit({Lowered(VectorAdd()), Lowered(SharedTile("tiled", true)), Lowered(RegisterTile())},
               "cuda -arch=" + GetParam());
  absl::StatusOr<TempDir> dir = TempDir::Create("tune-ptx-test-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  std::string path = dir->File("kernels.ptx");
  ASSERT_TRUE(WriteFileAtomically(path, module.code).ok());
  auto [rc, out] = RunTool(std::string(kPtxas) + " -arch=" + GetParam() + " -v -o " +
                           dir->File("kernels.cubin") + " " + path);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("Compiling entry function 'regtile'"), std::string::npos) << out;
  EXPECT_NE(out.find("registers"), std::string::npos) << out;
  std::printf("ptxas -arch=%s -v:\n%s", GetParam().c_str(), out.c_str());
}

INSTANTIATE_TEST_SUITE_P(Archs, NvptxTest, ::testing::Values("sm_80", "sm_90"));

class AmdgpuTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AmdgpuTest, CodeObjectIsAnAmdgpuElfWithKernelDescriptors) {
  GpuModule module =
      MustEmit({Lowered(VectorAdd()), Lowered(SharedTile("tiled", true)), Lowered(RegisterTile())},
               "rocm -mcpu=" + GetParam());
  EXPECT_EQ(module.format, CodeFormat::kHsaco);
  const std::string& code = module.code;
  ASSERT_GT(code.size(), 64u);
  EXPECT_EQ(code.substr(0, 4),
            "\x7f"
            "ELF");
  auto machine = static_cast<uint16_t>(static_cast<unsigned char>(code[18]) |
                                       (static_cast<unsigned char>(code[19]) << 8));
  EXPECT_EQ(machine, 224);  // EM_AMDGPU
  EXPECT_NE(module.llvm_ir.find("amdgpu_kernel void @vadd"), std::string::npos);
  EXPECT_NE(module.llvm_ir.find("\"amdgpu-flat-work-group-size\"=\"1,256\""), std::string::npos);
  EXPECT_NE(module.assembly.find("s_barrier"), std::string::npos) << module.assembly;
  EXPECT_NE(module.assembly.find(".amdhsa_kernel tiled"), std::string::npos);
  // The aligned 4-lane accesses are 16-byte loads and stores (gfx9: *_dwordx4 / ds_*_b128,
  // gfx11: *_b128).
  const std::string& asm_text = module.assembly;
  EXPECT_TRUE(asm_text.find("global_load_dwordx4") != std::string::npos ||
              asm_text.find("global_load_b128") != std::string::npos)
      << asm_text;
  EXPECT_TRUE(asm_text.find("ds_write_b128") != std::string::npos ||
              asm_text.find("ds_store_b128") != std::string::npos)
      << asm_text;
  // The unrolled register tile needs no scratch memory.
  size_t regtile = asm_text.find(".amdhsa_kernel regtile");
  ASSERT_NE(regtile, std::string::npos);
  EXPECT_NE(asm_text.find(".amdhsa_private_segment_fixed_size 0", regtile), std::string::npos)
      << asm_text.substr(regtile, 2000);
}

TEST_P(AmdgpuTest, AtomicAddsUseTheHardwareFloatAtomicWithoutACompareAndSwapLoop) {
  GpuModule module = MustEmit({Lowered(Histogram())}, "rocm -mcpu=" + GetParam());
  const std::string& asm_text = module.assembly;
  EXPECT_NE(asm_text.find("global_atomic_add_f32"), std::string::npos) << asm_text;
  EXPECT_EQ(asm_text.find("cmpswap"), std::string::npos) << asm_text;
}

TEST_P(AmdgpuTest, ReadelfShowsTheKernelsAndObjdumpDisassemblesThem) {
  if (!Exists(kReadelf) || !Exists(kObjdump)) {
    GTEST_SKIP() << "llvm-readelf-19 / llvm-objdump-19 are not installed";
  }
  GpuModule module = MustEmit({Lowered(VectorAdd()), Lowered(SharedTile("tiled", true))},
                              "rocm -mcpu=" + GetParam());
  absl::StatusOr<TempDir> dir = TempDir::Create("tune-hsaco-test-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  std::string path = dir->File("kernels.hsaco");
  ASSERT_TRUE(WriteFileAtomically(path, module.code).ok());
  auto [rc, notes] = RunTool(std::string(kReadelf) + " --notes " + path);
  ASSERT_EQ(rc, 0) << notes;
  EXPECT_NE(notes.find(".name:           vadd"), std::string::npos) << notes;
  EXPECT_NE(notes.find(".symbol:         vadd.kd"), std::string::npos) << notes;
  EXPECT_NE(notes.find(".symbol:         tiled.kd"), std::string::npos) << notes;
  EXPECT_NE(notes.find(".vgpr_count:"), std::string::npos) << notes;
  EXPECT_NE(notes.find(".group_segment_fixed_size: 2048"), std::string::npos) << notes;
  EXPECT_NE(notes.find("amdgcn-amd-amdhsa--" + GetParam()), std::string::npos) << notes;
  auto [drc, disassembly] =
      RunTool(std::string(kObjdump) + " -d --mcpu=" + GetParam() + " " + path);
  ASSERT_EQ(drc, 0) << disassembly;
  EXPECT_NE(disassembly.find("<vadd>:"), std::string::npos) << disassembly;
  EXPECT_NE(disassembly.find("s_barrier"), std::string::npos) << disassembly;
  EXPECT_NE(disassembly.find("s_endpgm"), std::string::npos) << disassembly;
}

TEST_P(AmdgpuTest, CodeObjectVersionFollowsTheTargetOption) {
  if (!Exists(kReadelf)) {
    GTEST_SKIP() << "llvm-readelf-19 is not installed";
  }
  absl::StatusOr<TempDir> dir = TempDir::Create("tune-hsaco-test-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  for (int version : {4, 5}) {
    GpuModule module =
        MustEmit({Lowered(VectorAdd())},
                 "rocm -mcpu=" + GetParam() + " -code-object-version=" + std::to_string(version));
    std::string path = dir->File("v" + std::to_string(version) + ".hsaco");
    ASSERT_TRUE(WriteFileAtomically(path, module.code).ok());
    auto [rc, notes] = RunTool(std::string(kReadelf) + " --notes " + path);
    ASSERT_EQ(rc, 0) << notes;
    // amdhsa.version is [1, 1] for code object v4 and [1, 2] for v5.
    std::string expected = "amdhsa.version:\n  - 1\n  - " + std::to_string(version - 3);
    EXPECT_NE(notes.find(expected), std::string::npos) << "v" << version << ":\n" << notes;
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, AmdgpuTest, ::testing::Values("gfx90a", "gfx942", "gfx1100"));

// ---------------------------------------------------------------------------------------------
// Compiler::BuildArtifact for GPU targets.

// A one-config template whose kernel is C = A + B over the flattened GEMM output (a stand-in
// for a GPU schedule template: what matters here is the path from IR to artifact).
KernelTemplate AddTemplate() {
  KernelTemplate tpl;
  tpl.name = "test.gpu.add";
  tpl.version = 1;
  tpl.op = OpKind::kGemm;
  tpl.targets = TemplateTargets::kCuda;
  tpl.space = [](const Workload&, const Target&) { return ConfigSpace(); };
  tpl.default_config = [](const Workload&, const Target&) { return Config(); };
  tpl.build = [](const Workload&, const Target&, const Config&,
                 std::string_view name) -> absl::StatusOr<LoweredFunc> {
    LoweredFunc func = VectorAdd(8);
    func.name = std::string(name);
    return func;
  };
  return tpl;
}

TEST(GpuCompilerTest, BuildArtifactMakesPtxForCudaAndHsacoForRocmWithTheLaunch) {
  absl::StatusOr<Workload> workload = Workload::Parse("gemm:M=32,N=64,K=16");
  ASSERT_TRUE(workload.ok()) << workload.status();
  KernelTemplate tpl = AddTemplate();
  struct Case {
    std::string target;
    CodeFormat format;
  };
  for (const Case& c : {Case{"cuda -arch=sm_90", CodeFormat::kPtx},
                        Case{"rocm -mcpu=gfx90a", CodeFormat::kHsaco}}) {
    Compiler compiler(Catalog::BuiltIn(), ParseTarget(c.target));
    absl::StatusOr<Artifact> artifact = compiler.BuildArtifact(*workload, tpl, Config(), "k_add");
    ASSERT_TRUE(artifact.ok()) << c.target << ": " << artifact.status();
    EXPECT_EQ(artifact->format, c.format);
    EXPECT_EQ(artifact->entry_symbol, "k_add");
    EXPECT_EQ(artifact->launch.grid, (std::array<uint32_t, 3>{8, 1, 1}));
    EXPECT_EQ(artifact->launch.block, (std::array<uint32_t, 3>{256, 1, 1}));
    EXPECT_EQ(artifact->hash, ArtifactHash(c.format, artifact->code));
    EXPECT_FALSE(artifact->llvm_ir.empty());
    if (c.format == CodeFormat::kPtx) {
      EXPECT_NE(artifact->code.find(".entry k_add("), std::string::npos);
    } else {
      EXPECT_EQ(artifact->code.substr(0, 4),
                "\x7f"
                "ELF");
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Kernels the GPU backends refuse.

void ExpectInvalid(const LoweredFunc& func, const std::string& target,
                   const std::vector<std::string>& words) {
  GpuCodegenOptions options;
  options.target = ParseTarget(target);
  absl::StatusOr<GpuModule> module = EmitGpuModule({func}, options);
  ASSERT_FALSE(module.ok()) << "accepted " << func.name;
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument) << module.status();
  for (const std::string& word : words) {
    EXPECT_NE(module.status().message().find(word), std::string::npos)
        << "'" << word << "' not in: " << module.status();
  }
}

TEST(GpuBackendErrorsTest, NonConstantExtentIsRefused) {
  Buffer c("C");
  Var n("n"), bx("bx"), tx("tx");
  Stmt body = LetStmt::Make(
      n, ir::Cast::Make(ir::Type::Int64(), Load::Make(c, Expr(0))) + 1,
      For::Make(bx, 0, n, LoopKind::kGpuBlock,
                For::Make(tx, 0, 32, LoopKind::kGpuThread, Store::Make(c, tx, 1.0f))));
  ExpectInvalid({"dyn", {c}, body}, "cuda -arch=sm_90", {"bx", "non-constant extent"});
}

TEST(GpuBackendErrorsTest, TooManyThreadsPerBlockNamesTheLimit) {
  Buffer c("C");
  Var bx("bx"), tx("tx"), ty("ty");
  Stmt body = For::Make(
      bx, 0, 4, LoopKind::kGpuBlock,
      For::Make(ty, 0, 2, LoopKind::kGpuThread,
                For::Make(tx, 0, 1024, LoopKind::kGpuThread, Store::Make(c, ty * 1024 + tx, 1.0f)),
                1));
  ExpectInvalid({"big", {c}, body}, "cuda -arch=sm_80",
                {"2048 threads per block", "max_threads_per_block", "1024"});
  ExpectInvalid({"big", {c}, body}, "rocm -mcpu=gfx90a", {"2048 threads per block"});
}

// A kernel with `floats` floats of shared memory that every thread writes and reads back.
LoweredFunc SharedMemoryKernel(int64_t floats) {
  Buffer c("C"), s("s", MemoryScope::kGpuShared);
  Var bx("bx"), tx("tx");
  Stmt body = For::Make(
      bx, 0, 4, LoopKind::kGpuBlock,
      Allocate::Make(s, floats,
                     For::Make(tx, 0, 64, LoopKind::kGpuThread,
                               Block::Make({Store::Make(s, tx, 1.0f), Barrier::Make(),
                                            Store::Make(c, tx, Load::Make(s, 63 - tx))}))));
  return {"smem", {c}, body};
}

TEST(GpuBackendErrorsTest, SharedMemoryBeyondTheArchLimitNamesTheLimit) {
  // 256 KiB: past sm_90's 227 KiB of dynamic shared memory.
  ExpectInvalid(SharedMemoryKernel(65536), "cuda -arch=sm_90",
                {"262144 bytes", "max_shared_bytes_per_block", "sm_90", "49152", "232448"});
  // 128 KiB on gfx90a, whose LDS is 64 KiB and static only.
  ExpectInvalid(SharedMemoryKernel(32768), "rocm -mcpu=gfx90a",
                {"131072 bytes", "max_shared_bytes_per_block", "gfx90a", "65536 bytes)"});
}

TEST(GpuBackendTest, SharedMemoryPastTheStaticLimitIsOneDynamicRegionTheLaunchSizes) {
  absl::StatusOr<GpuModule> module =
      EmitGpuModule({SharedMemoryKernel(16384)}, {.target = ParseTarget("cuda -arch=sm_90")});
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_EQ(module->kernels.size(), 1u);
  EXPECT_EQ(module->kernels[0].launch.dynamic_shared_bytes, 65536u);
  EXPECT_EQ(module->kernels[0].launch.static_shared_bytes, 0u);
  EXPECT_NE(module->code.find(".extern .shared .align 16 .b8 tune_dynamic_shared[]"),
            std::string::npos);
  // Within the static limit nothing changes.
  module = EmitGpuModule({SharedMemoryKernel(1024)}, {.target = ParseTarget("cuda -arch=sm_90")});
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ(module->kernels[0].launch.dynamic_shared_bytes, 0u);
  EXPECT_EQ(module->kernels[0].launch.static_shared_bytes, 4096u);
  EXPECT_EQ(module->code.find("tune_dynamic_shared"), std::string::npos);
}

TEST(GpuBackendErrorsTest, BarrierOutsideTheThreadLoopsIsRefused) {
  Buffer c("C"), s("s", MemoryScope::kGpuShared);
  Var bx("bx"), tx("tx");
  Stmt body = For::Make(
      bx, 0, 4, LoopKind::kGpuBlock,
      Allocate::Make(
          s, 64,
          Block::Make({For::Make(tx, 0, 64, LoopKind::kGpuThread, Store::Make(s, tx, 1.0f)),
                       Barrier::Make()})));
  ExpectInvalid({"bar", {c}, body}, "cuda -arch=sm_90", {"barrier", "outside the gpu_thread"});
}

TEST(GpuBackendErrorsTest, BarrierUnderAConditionIsRefused) {
  Buffer c("C");
  Var bx("bx"), tx("tx");
  Stmt body = For::Make(
      bx, 0, 4, LoopKind::kGpuBlock,
      For::Make(tx, 0, 64, LoopKind::kGpuThread, ir::IfThenElse::Make(tx < 32, Barrier::Make())));
  ExpectInvalid({"condbar", {c}, body}, "rocm -mcpu=gfx942", {"barrier", "under an if"});
}

TEST(GpuBackendErrorsTest, ThreadLoopOutsideABlockLoopIsRefused) {
  Buffer c("C");
  Var bx("bx"), tx("tx");
  Stmt body =
      For::Make(tx, 0, 64, LoopKind::kGpuThread,
                For::Make(bx, 0, 4, LoopKind::kGpuBlock, Store::Make(c, bx * 64 + tx, 1.0f)));
  ExpectInvalid({"inverted", {c}, body}, "cuda -arch=sm_90",
                {"gpu_thread loop over tx", "outside the gpu_block loops"});
}

TEST(GpuBackendErrorsTest, AxisBoundTwiceIsRefused) {
  Buffer c("C");
  Var bx("bx"), tx("tx"), tx2("tx2");
  Stmt body = For::Make(
      bx, 0, 4, LoopKind::kGpuBlock,
      For::Make(tx, 0, 8, LoopKind::kGpuThread,
                For::Make(tx2, 0, 8, LoopKind::kGpuThread, Store::Make(c, tx * 8 + tx2, 1.0f))));
  ExpectInvalid({"twice", {c}, body}, "cuda -arch=sm_90", {"tx2", "a second time"});
}

TEST(GpuBackendErrorsTest, CpuTargetsAreRefusedByTheGpuBackend) {
  ExpectInvalid(VectorAdd(), "llvm -mcpu=znver4", {});
}

TEST(GpuBackendErrorsTest, CpuBackendStillRefusesGpuLoops) {
  CpuCodegenOptions options;
  options.cpu = "x86-64";
  absl::StatusOr<std::string> object = EmitCpuObject({Lowered(VectorAdd())}, options);
  ASSERT_FALSE(object.ok());
  EXPECT_EQ(object.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(object.status().message().find("needs a GPU backend"), std::string::npos);
}

}  // namespace
}  // namespace tune
