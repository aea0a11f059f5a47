// tune-bench-gpu-peak: the matrix peak of a CUDA GPU per dtype, measured: a loop of the
// warp-level tensor-core instruction tune's kernels use (mma.sync), eight independent
// accumulator chains per warp, 32 warps per multiprocessor, timed on the device by graph replay
// (rpc_server/gpu/gpu_timing.h) like every GPU measurement of tune. It is the limit quoted beside
// GPU tables (bench/gpu_report.py --peak), not the datasheet's figure.
//
//   tune-bench-gpu-peak [--device N] [--iters N]
//   tune-bench-gpu-peak --ptx-dir DIR --sm 90     (writes each kernel's PTX, needs no GPU)
//
// One line per dtype the device runs: "<dtype> <GFLOPS> GFLOPS <instruction>" (GOPS for i8).
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

// Writes DIR/<dtype>.ptx for every row `sm` has (for ptxas: bench/gpu_matrix_peak_test.sh).
int WritePtx(const std::string& dir, int sm) {
  for (const MmaRow& row : kRows) {
    if (sm < row.min_sm) {
      continue;
    }
    const std::string path = StrCat(dir, "/", row.dtype, ".ptx");
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) {
      std::fprintf(stderr, "tune-bench-gpu-peak: cannot write %s\n", path.c_str());
      return 1;
    }
    const std::string ptx = PeakPtx(row);
    std::fwrite(ptx.data(), 1, ptx.size(), f);
    std::fclose(f);
  }
  return 0;
}

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
  const int64_t blocks = int64_t{info.multiprocessors} * kBlocksPerSm;
  std::printf(
      "# %s (%s, %d SMs): mma.sync, %d chains per warp, %d warps per SM, %d iterations, "
      "device time by graph replay\n",
      info.name.c_str(), info.arch.c_str(), info.multiprocessors, kChains,
      kBlocksPerSm * kThreads / 32, iters);
  absl::StatusOr<gpu::DevicePtr> out = dev.Allocate(static_cast<size_t>(blocks * kThreads * 4));
  if (!out.ok()) {
    std::fprintf(stderr, "tune-bench-gpu-peak: %s\n", std::string(out.status().message()).c_str());
    return 1;
  }
  int failures = 0;
  for (const MmaRow& row : kRows) {
    if (sm < row.min_sm) {
      continue;
    }
    absl::StatusOr<void*> module = dev.LoadModule(PeakPtx(row));
    absl::StatusOr<void*> fn =
        module.ok() ? dev.GetFunction(*module, "tune_mma_peak") : module.status();
    if (!fn.ok()) {
      std::printf("%s - (%s: %s)\n", row.dtype, row.instruction,
                  std::string(fn.status().message()).c_str());
      ++failures;
      continue;
    }
    GpuLaunch launch;
    launch.grid = {static_cast<uint32_t>(blocks), 1, 1};
    launch.block = {kThreads, 1, 1};
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
      std::printf("%s - (%s: %s)\n", row.dtype, row.instruction,
                  times.ok() ? times->measurement.message.c_str()
                             : std::string(times.status().message()).c_str());
      ++failures;
      continue;
    }
    const double secs = Median(times->measurement.round_secs);
    const double work =
        2.0 * row.m * row.n * row.k * kChains * double(iters) * double(blocks) * (kThreads / 32);
    std::printf("%s %.0f %s %s\n", row.dtype, work / secs / 1e9, row.integer ? "GOPS" : "GFLOPS",
                row.instruction);
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
