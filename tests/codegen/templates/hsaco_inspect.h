// Inspection of the HSA code objects of AMD GPU templates' kernels, as the tests of
// gemm.rocm.mfma, gemm.rocm.wmma and conv2d.rocm.mfma do it (no AMD GPU is needed, nor has one run
// them): build a template's config into a code object, disassemble it with llvm-objdump-19 and
// read its AMDGPU metadata note with llvm-readelf-19.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <regex>
#include <string>
#include <string_view>
#include <utility>

#include "codegen/llvm/gpu_backend.h"
#include "common/files.h"
#include "gtest/gtest.h"
#include "tests/codegen/templates/gpu_template_check.h"

namespace tune::testing {

inline constexpr char kReadelf[] = "/usr/lib/llvm-19/bin/llvm-readelf";
inline constexpr char kObjdump[] = "/usr/lib/llvm-19/bin/llvm-objdump";

inline bool HaveLlvmObjectTools() {
  return std::filesystem::exists(kReadelf) && std::filesystem::exists(kObjdump);
}

/// Runs a shell command; returns its exit status and stdout+stderr.
inline std::pair<int, std::string> RunTool(const std::string& command) {
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
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

/// The integer after `key` in the code object's metadata note (-1 when absent).
inline int64_t NoteValue(const std::string& notes, const std::string& key) {
  std::smatch m;
  if (std::regex_search(
          notes, m,
          std::regex(std::regex_replace(key, std::regex("\\."), "\\.") + ":\\s+(-?[0-9]+)"))) {
    return std::stoll(m[1]);
  }
  return -1;
}

/// Waves per SIMD that the registers allow. CDNA2/3 give a SIMD 512 registers per lane, VGPRs
/// and AGPRs from one file (the VGPRs rounded up to 4, then the total to the granule of 8), at
/// most 8 waves; RDNA3 (gfx1100, wave32) 1536 per lane in granules of 24, at most 16 waves.
inline int64_t WavesPerSimd(const std::string& arch, int64_t vgprs, int64_t agprs) {
  if (arch == "gfx1100") {
    const int64_t used = (std::max<int64_t>(vgprs, 1) + 23) / 24 * 24;
    return std::min<int64_t>(16, 1536 / used);
  }
  const int64_t unified = (vgprs + 3) / 4 * 4 + agprs;
  const int64_t used = (std::max<int64_t>(unified, 1) + 7) / 8 * 8;
  return std::min<int64_t>(8, 512 / used);
}

/// What the inspection of one kernel's code object found.
struct CodeObjectReport {
  std::string disassembly, notes;
  int64_t vgprs = -1, agprs = 0, lds_bytes = -1, scratch_bytes = -1, vgpr_spills = -1,
          sgpr_spills = -1, waves_per_simd = 0;
  int64_t Count(const std::string& text) const {
    int64_t n = 0;
    for (size_t at = disassembly.find(text); at != std::string::npos;
         at = disassembly.find(text, at + 1)) {
      ++n;
    }
    return n;
  }
};

/// Template `tpl`'s default config for `workload` on rocm -mcpu=`arch`, built into a code object
/// in `dir` and inspected; ADD_FAILURE (and an empty report) where a step fails.
inline CodeObjectReport InspectDefaultKernel(const TempDir& dir, std::string_view tpl,
                                             const std::string& arch, const std::string& workload,
                                             Config* config_out = nullptr) {
  CodeObjectReport report;
  const Target target = *Target::Parse("rocm -mcpu=" + arch);
  const Workload w = *Workload::Parse(workload);
  const KernelTemplate* t = GpuTemplate(tpl, target, w);
  if (t == nullptr) {
    ADD_FAILURE() << tpl << " does not apply to " << workload << " on " << arch;
    return report;
  }
  const Config config = t->default_config(w, target);
  if (config_out != nullptr) {
    *config_out = config;
  }
  absl::StatusOr<ir::LoweredFunc> lowered = BuildLoweredGpu(tpl, w, config, target);
  if (!lowered.ok()) {
    ADD_FAILURE() << lowered.status();
    return report;
  }
  absl::StatusOr<GpuModule> module = EmitGpuModule({*lowered}, {.target = target});
  if (!module.ok()) {
    ADD_FAILURE() << module.status();
    return report;
  }
  const std::string path = dir.File(arch + "_" + lowered->name + ".hsaco");
  if (!WriteFileAtomically(path, module->code).ok()) {
    ADD_FAILURE() << "cannot write " << path;
    return report;
  }
  auto [drc, disassembly] = RunTool(std::string(kObjdump) + " -d --mcpu=" + arch + " " + path);
  auto [rc, notes] = RunTool(std::string(kReadelf) + " --notes " + path);
  if (drc != 0 || rc != 0) {
    ADD_FAILURE() << disassembly << notes;
    return report;
  }
  report.disassembly = std::move(disassembly);
  report.notes = std::move(notes);
  report.vgprs = NoteValue(report.notes, ".vgpr_count");
  report.agprs = std::max<int64_t>(0, NoteValue(report.notes, ".agpr_count"));
  report.lds_bytes = NoteValue(report.notes, ".group_segment_fixed_size");
  report.scratch_bytes = NoteValue(report.notes, ".private_segment_fixed_size");
  report.vgpr_spills = NoteValue(report.notes, ".vgpr_spill_count");
  report.sgpr_spills = NoteValue(report.notes, ".sgpr_spill_count");
  report.waves_per_simd = WavesPerSimd(arch, report.vgprs, report.agprs);
  return report;
}

/// Asserts what every preset's code object must show: `instruction` present, no scratch memory
/// (private segment 0, no scratch accesses, no spills) and at least one wave per SIMD; prints the
/// registers and occupancy.
inline void ExpectMatrixKernelWithoutScratch(const TempDir& dir, std::string_view tpl,
                                             const std::string& arch, const std::string& workload,
                                             const std::string& instruction) {
  SCOPED_TRACE(std::string(tpl) + " " + arch + " " + workload);
  Config config;
  const CodeObjectReport r = InspectDefaultKernel(dir, tpl, arch, workload, &config);
  EXPECT_GT(r.Count(instruction), 0) << instruction;
  EXPECT_EQ(r.Count("scratch_"), 0) << "scratch accesses";
  EXPECT_GT(r.vgprs, 0) << r.notes;
  EXPECT_EQ(r.scratch_bytes, 0) << r.notes;
  EXPECT_EQ(r.vgpr_spills, 0) << r.notes;
  EXPECT_EQ(r.sgpr_spills, 0) << r.notes;
  EXPECT_GE(r.waves_per_simd, 1);
  std::cout << "[code object] " << tpl << " " << arch << " " << workload << " "
            << ConfigToString(config) << ": vgpr " << r.vgprs << ", agpr " << r.agprs << ", lds "
            << r.lds_bytes << " B, scratch " << r.scratch_bytes << " B, waves/SIMD by registers "
            << r.waves_per_simd << ", " << r.Count(instruction) << " x " << instruction << "\n";
}

}  // namespace tune::testing
