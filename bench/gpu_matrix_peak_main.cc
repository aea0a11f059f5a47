// tune-bench-gpu-peak: the matrix peak of a CUDA GPU per dtype, measured: a loop of the
// warp-level tensor-core instruction tune's kernels use (mma.sync), eight independent
// accumulator chains per warp, 32 warps per multiprocessor, and on sm_90 a loop of the
// warpgroup instruction (wgmma m64n256, eight per group, two warpgroups per multiprocessor),
// timed on the device by graph replay (rpc_server/gpu/gpu_timing.h) like every GPU measurement
// of tune. It is the limit quoted beside GPU tables (bench/gpu_report.py --peak), not the
// datasheet's figure.
//
//   tune-bench-gpu-peak [--device N] [--iters N]
//   tune-bench-gpu-peak --ptx-dir DIR --sm 90     (writes each kernel's PTX, needs no GPU)
//
// One line per dtype and instruction the device runs: "<dtype> <GFLOPS> GFLOPS <instruction>"
// (GOPS for i8); on sm_90 the wgmma lines come after the mma.sync ones.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/measurement.h"
#include "common/stats.h"
#include "common/strings.h"
#include "rpc_server/gpu/gpu_device.h"
#include "rpc_server/gpu/gpu_timing.h"

namespace tune {
namespace {

// One tensor-core instruction: its PTX, operand registers and the work of one warp's issue.
struct MmaRow {
  const char* dtype;
  int min_sm;               // the first arch that has it
  const char* ptx_version;  // the PTX ISA that introduced it there
  const char* instruction;  // mma.sync ... without operands
  int m, n, k;
  bool integer;         // s32 accumulators
  const char* operand;  // a b32 bit pattern of small values of the input type
};

constexpr MmaRow kRows[] = {
    {"f16", 80, "7.0", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, 8, 16, false,
     "0x3c003c00"},
    {"bf16", 80, "7.0", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16, 8, 16, false,
     "0x3f803f80"},
    {"tf32", 80, "7.0", "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 16, 8, 8, false,
     "0x3f800000"},
    {"i8", 80, "7.0", "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 16, 8, 32, true,
     "0x01010101"},
    {"fp8e4m3", 89, "8.4", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", 16, 8, 32, false,
     "0x38383838"},
};

// The warpgroup instructions of sm_90a, m64n256k<k>: operands from 128-byte-swizzled shared
// memory (descriptors), 128 accumulators per thread.
struct WgmmaRow {
  const char* dtype;
  const char* instruction;  // wgmma ... without operands
  int k;
  bool integer;
  const char* tail;  // the immediates after scale-d
};

constexpr WgmmaRow kWgmmaRows[] = {
    {"f16", "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16", 16, false, ", 1, 1, 0, 0"},
    {"bf16", "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16", 16, false, ", 1, 1, 0, 0"},
    {"tf32", "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32", 8, false, ", 1, 1"},
    {"i8", "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8", 32, true, ""},
    {"fp8e4m3", "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3", 32, false, ", 1, 1"},
};

constexpr int kWgmmaPerGroup = 8;   // instructions between a commit and its wait
constexpr int kWgmmaThreads = 256;  // two warpgroups per block, one block per multiprocessor

// The wgmma kernel of one row: shared memory zeroed (A: 64 rows, B: 256 rows of 128 bytes),
// then `iters` groups of kWgmmaPerGroup instructions on one accumulator tile.
std::string WgmmaPeakPtx(const WgmmaRow& row) {
  const char* acc = row.integer ? "b32" : "f32";
  const char* zero = row.integer ? "0" : "0f00000000";
  std::string ptx = StrCat(
      ".version 8.0\n.target sm_90a\n.address_size 64\n\n.shared .align 1024 .b8 "
      "tune_peak_smem[40960];\n\n.visible .entry tune_mma_peak(.param .u64 p_out, "
      ".param .u32 p_iters)\n{\n  .reg .pred %p<3>;\n  .reg .",
      acc, " %c<128>;\n  .reg .b32 %r<12>;\n  .reg .b64 %rd<8>;\n");
  for (int i = 0; i < 128; ++i) {
    StrAppend(&ptx, "  mov.", acc, " %c", i, ", ", zero, ";\n");
  }
  // Zero the operands, make them visible to the async proxy.
  StrAppend(&ptx,
            "  mov.u32 %r6, tune_peak_smem;\n  mov.u32 %r5, %tid.x;\n  shl.b32 %r7, %r5, 2;\n"
            "$L_zero:\n  add.u32 %r8, %r6, %r7;\n  st.shared.u32 [%r8], 0;\n"
            "  add.u32 %r7, %r7, 1024;\n  setp.lt.u32 %p2, %r7, 40960;\n  @%p2 bra $L_zero;\n"
            "  fence.proxy.async.shared::cta;\n  bar.sync 0;\n");
  // Descriptors: A at 0, B at 8192; stride 1024 bytes between 8-row groups, 128-byte swizzle.
  StrAppend(&ptx,
            "  cvt.u64.u32 %rd3, %r6;\n  shr.u64 %rd3, %rd3, 4;\n  and.b64 %rd3, %rd3, 16383;\n"
            "  or.b64 %rd4, %rd3, 4611686293305360384;\n  add.u64 %rd5, %rd4, 512;\n"
            "  mov.u32 %r9, 1;\n  setp.ne.u32 %p1, %r9, 0;\n");
  std::string regs = "{";
  for (int i = 0; i < 128; ++i) {
    StrAppend(&regs, i == 0 ? "" : ",", "%c", i);
  }
  regs += "}";
  StrAppend(&ptx, "  ld.param.u32 %r1, [p_iters];\n  mov.u32 %r2, 0;\n$L_loop:\n",
            "  wgmma.fence.sync.aligned;\n");
  for (int i = 0; i < kWgmmaPerGroup; ++i) {
    StrAppend(&ptx, "  ", row.instruction, " ", regs, ", %rd4, %rd5, %p1", row.tail, ";\n");
  }
  StrAppend(&ptx,
            "  wgmma.commit_group.sync.aligned;\n  wgmma.wait_group.sync.aligned 0;\n"
            "  add.u32 %r2, %r2, 1;\n  setp.lt.u32 %p2, %r2, %r1;\n  @%p2 bra $L_loop;\n");
  for (int i = 1; i < 128; ++i) {
    StrAppend(&ptx, "  add.", row.integer ? "s32" : "f32", " %c0, %c0, %c", i, ";\n");
  }
  StrAppend(&ptx,
            "  mov.u32 %r3, %ctaid.x;\n  mov.u32 %r4, %ntid.x;\n"
            "  mad.lo.u32 %r3, %r3, %r4, %r5;\n  mul.wide.u32 %rd1, %r3, 4;\n"
            "  ld.param.u64 %rd2, [p_out];\n  add.u64 %rd2, %rd2, %rd1;\n  st.global.",
            acc, " [%rd2], %c0;\n  ret;\n}\n");
  return ptx;
}

constexpr int kChains = 8;       // independent accumulators per warp
constexpr int kThreads = 256;    // 8 warps per block
constexpr int kBlocksPerSm = 4;  // 32 warps per multiprocessor

// The kernel of one row, for the row's first arch (the driver JIT-compiles it for later ones):
// `iters` rounds of kChains instructions, the accumulators summed into out[thread] at the end
// so that nothing is dead.
std::string PeakPtx(const MmaRow& row) {
  const char* acc = row.integer ? "b32" : "f32";
  const char* zero = row.integer ? "0" : "0f00000000";
  std::string ptx =
      StrCat(".version ", row.ptx_version, "\n.target sm_", row.min_sm,
             "\n.address_size 64\n\n.visible .entry tune_mma_peak(.param .u64 p_out, "
             ".param .u32 p_iters)\n{\n  .reg .pred %p<2>;\n  .reg .b32 %a<4>;\n"
             "  .reg .b32 %b<2>;\n  .reg .",
             acc, " %c<", 4 * kChains, ">;\n  .reg .b32 %r<6>;\n  .reg .b64 %rd<6>;\n");
  for (int i = 0; i < 4; ++i) {
    StrAppend(&ptx, "  mov.b32 %a", i, ", ", row.operand, ";\n");
  }
  for (int i = 0; i < 2; ++i) {
    StrAppend(&ptx, "  mov.b32 %b", i, ", ", row.operand, ";\n");
  }
  for (int i = 0; i < 4 * kChains; ++i) {
    StrAppend(&ptx, "  mov.", acc, " %c", i, ", ", zero, ";\n");
  }
  StrAppend(&ptx, "  ld.param.u32 %r1, [p_iters];\n  mov.u32 %r2, 0;\n$L_loop:\n");
  for (int chain = 0; chain < kChains; ++chain) {
    const int c = 4 * chain;
    StrAppend(&ptx, "  ", row.instruction, " {%c", c, ",%c", c + 1, ",%c", c + 2, ",%c", c + 3,
              "}, {%a0,%a1,%a2,%a3}, {%b0,%b1}, {%c", c, ",%c", c + 1, ",%c", c + 2, ",%c", c + 3,
              "};\n");
  }
  StrAppend(&ptx, "  add.u32 %r2, %r2, 1;\n  setp.lt.u32 %p1, %r2, %r1;\n  @%p1 bra $L_loop;\n");
  for (int i = 1; i < 4 * kChains; ++i) {
    StrAppend(&ptx, "  add.", row.integer ? "s32" : "f32", " %c0, %c0, %c", i, ";\n");
  }
  StrAppend(&ptx,
            "  mov.u32 %r3, %ctaid.x;\n  mov.u32 %r4, %ntid.x;\n  mov.u32 %r5, %tid.x;\n"
            "  mad.lo.u32 %r3, %r3, %r4, %r5;\n  mul.wide.u32 %rd1, %r3, 4;\n"
            "  ld.param.u64 %rd2, [p_out];\n  add.u64 %rd2, %rd2, %rd1;\n  st.global.",
            acc, " [%rd2], %c0;\n  ret;\n}\n");
  return ptx;
}

// Writes DIR/<dtype>.ptx for every mma.sync row `sm` has, and on sm_90 DIR/<dtype>.wgmma.ptx
// for the wgmma rows (for ptxas: bench/gpu_matrix_peak_test.sh; those need -arch=sm_90a).
int WritePtx(const std::string& dir, int sm) {
  auto write = [&](const std::string& name, const std::string& ptx) {
    const std::string path = StrCat(dir, "/", name);
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "tune-bench-gpu-peak: cannot write %s\n", path.c_str());
      return false;
    }
    std::fwrite(ptx.data(), 1, ptx.size(), f);
    std::fclose(f);
    return true;
  };
  for (const MmaRow& row : kRows) {
    if (sm >= row.min_sm && !write(StrCat(row.dtype, ".ptx"), PeakPtx(row))) {
      return 1;
    }
  }
  for (const WgmmaRow& row : kWgmmaRows) {
    if (sm >= 90 && !write(StrCat(row.dtype, ".wgmma.ptx"), WgmmaPeakPtx(row))) {
      return 1;
    }
  }
  return 0;
}

// One kernel to time: its PTX, geometry, and the operations of one launch.
struct PeakKernel {
  const char* dtype;
  const char* instruction;
  std::string ptx;
  int64_t blocks;
  uint32_t threads;
  double work_per_iter;  // operations per loop iteration of the whole grid
  bool integer;
};

int Run(int device_index, int iters) {
  absl::StatusOr<std::unique_ptr<gpu::GpuDevice>> opened =
      gpu::GpuDevice::Open(TargetKind::kCuda, device_index);
  if (!opened.ok()) {
    std::fprintf(stderr, "tune-bench-gpu-peak: %s\n",
                 std::string(opened.status().message()).c_str());
    return 1;
  }
  gpu::GpuDevice& dev = **opened;
  const gpu::GpuDeviceInfo& info = dev.info();
  const int sm = info.arch.starts_with("sm_") ? std::stoi(info.arch.substr(3)) : 0;
  const int64_t sms = info.multiprocessors;
  std::printf(
      "# %s (%s, %d SMs): mma.sync, %d chains per warp, %d warps per SM; wgmma (sm_90) m64n256, "
      "%d per group, 2 warpgroups per SM; %d iterations, device time by graph replay\n",
      info.name.c_str(), info.arch.c_str(), info.multiprocessors, kChains,
      kBlocksPerSm * kThreads / 32, kWgmmaPerGroup, iters);
  std::vector<PeakKernel> kernels;
  for (const MmaRow& row : kRows) {
    if (sm >= row.min_sm) {
      const int64_t blocks = sms * kBlocksPerSm;
      kernels.push_back({row.dtype, row.instruction, PeakPtx(row), blocks, kThreads,
                         2.0 * row.m * row.n * row.k * kChains * double(blocks) * (kThreads / 32),
                         row.integer});
    }
  }
  for (const WgmmaRow& row : kWgmmaRows) {
    if (sm >= 90) {
      kernels.push_back(
          {row.dtype, row.instruction, WgmmaPeakPtx(row), sms, kWgmmaThreads,
           2.0 * 64 * 256 * row.k * kWgmmaPerGroup * double(sms) * (kWgmmaThreads / 128),
           row.integer});
    }
  }
  const int64_t most_threads = sms * std::max(kBlocksPerSm * kThreads, kWgmmaThreads);
  absl::StatusOr<gpu::DevicePtr> out = dev.Allocate(static_cast<size_t>(most_threads * 4));
  if (!out.ok()) {
    std::fprintf(stderr, "tune-bench-gpu-peak: %s\n", std::string(out.status().message()).c_str());
    return 1;
  }
  int failures = 0;
  for (const PeakKernel& k : kernels) {
    absl::StatusOr<void*> module = dev.LoadModule(k.ptx);
    absl::StatusOr<void*> fn =
        module.ok() ? dev.GetFunction(*module, "tune_mma_peak") : module.status();
    if (!fn.ok()) {
      std::printf("%s - (%s: %s)\n", k.dtype, k.instruction,
                  std::string(fn.status().message()).c_str());
      ++failures;
      continue;
    }
    GpuLaunch launch;
    launch.grid = {static_cast<uint32_t>(k.blocks), 1, 1};
    launch.block = {k.threads, 1, 1};
    gpu::DevicePtr out_ptr = *out;
    uint32_t n = static_cast<uint32_t>(iters);
    void* params[] = {&out_ptr, &n};
    TimingOptions timing;
    timing.repeat = 5;
    timing.max_repeat = 10;
    absl::StatusOr<gpu::GpuTimes> times = gpu::TimeOnGpu(
        dev, [&] { return dev.Launch(*fn, launch, params); }, timing,
        std::chrono::steady_clock::now() + std::chrono::seconds(30), gpu::GpuFlush{});
    dev.UnloadModule(*module);
    if (!times.ok() || times->measurement.round_secs.empty()) {
      std::printf("%s - (%s: %s)\n", k.dtype, k.instruction,
                  times.ok() ? times->measurement.message.c_str()
                             : std::string(times.status().message()).c_str());
      ++failures;
      continue;
    }
    const double secs = Median(times->measurement.round_secs);
    std::printf("%s %.0f %s %s\n", k.dtype, k.work_per_iter * double(iters) / secs / 1e9,
                k.integer ? "GOPS" : "GFLOPS", k.instruction);
  }
  dev.Free(*out);
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tune

int main(int argc, char** argv) {
  CLI::App app{"tune-bench-gpu-peak: the tensor-core peak of a CUDA GPU per dtype, measured"};
  int device = 0, iters = 4096, sm = 90;
  std::string ptx_dir;
  app.add_option("--device", device, "CUDA device ordinal")->check(CLI::NonNegativeNumber);
  app.add_option("--iters", iters, "loop iterations per warp")->check(CLI::Range(1, 1 << 20));
  app.add_option("--ptx-dir", ptx_dir, "write each kernel's PTX here instead of running");
  app.add_option("--sm", sm, "the arch of --ptx-dir's kernels (80, 86, 89, 90)")
      ->check(CLI::Range(80, 90));
  CLI11_PARSE(app, argc, argv);
  return ptx_dir.empty() ? tune::Run(device, iters) : tune::WritePtx(ptx_dir, sm);
}
