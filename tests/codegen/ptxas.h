// ptxas, where it is installed (CUDA's toolkit; not on a fresh Debian machine): assembles a PTX
// module for an arch and returns its verbose report, so that codegen tests check what the
// assembler says of their kernels (that it accepts them; registers, spills) without a GPU.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/files.h"

namespace tune::testing {

inline constexpr const char* kPtxas = "/usr/local/cuda/bin/ptxas";

inline bool PtxasInstalled() { return std::filesystem::exists(kPtxas); }

struct PtxasResult {
  int exit_code = -1;
  std::string report;  // ptxas -v's output (registers, spills), or why it could not run
};

/// `ptx` assembled by ptxas -arch=`arch` -v (the caller checks PtxasInstalled first).
inline PtxasResult RunPtxas(const std::string& ptx, const std::string& arch) {
  absl::StatusOr<TempDir> dir = TempDir::Create("tune-ptxas-");
  if (!dir.ok()) {
    return {.exit_code = -1, .report = std::string(dir.status().message())};
  }
  const std::string file = dir->File("module.ptx");
  const std::string log = file + ".log";
  std::ofstream(file) << ptx;
  const std::string cmd =
      std::string(kPtxas) + " -arch=" + arch + " -v -o /dev/null " + file + " > " + log + " 2>&1";
  PtxasResult result;
  result.exit_code = std::system(cmd.c_str());
  std::stringstream report;
  report << std::ifstream(log).rdbuf();
  result.report = report.str();
  return result;
}

}  // namespace tune::testing
