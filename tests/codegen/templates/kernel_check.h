// Test support: builds many (workload, config) kernels of one template into one shared library
// through the real compiler (templates -> lowering -> LLVM -> lld), loads it and checks each
// kernel against common/reference.h.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"
#include "common/target.h"
#include "common/workload.h"
#include "search/config_space.h"

namespace tune::testing {

struct KernelCase {
  Workload workload;
  Config config;
};

/// Builds every case with `tpl` for `target` into one library, runs each kernel once on seeded
/// random inputs and compares with the reference under the template's tolerance
/// (TemplateTolerance). Returns one line per failure (build errors included); empty when every
/// kernel is correct. With `error_ratios`, also gives each case's largest error as a fraction
/// of the standard bound (CompareResult::max_error_ratio at scale 1), in case order (-1 for a
/// case that did not run). `catalog` must hold `tpl` (the library names it).
std::vector<std::string> CheckKernels(const Target& target, const KernelTemplate& tpl,
                                      const std::vector<KernelCase>& cases,
                                      std::vector<double>* error_ratios = nullptr,
                                      const Catalog& catalog = Catalog::BuiltIn());

/// `per_shape` random valid configs of `tpl` for each workload text in `shapes`, the workload
/// taking the four epilogues (none, bias, relu, bias_relu) in turn (a requantising one keeps its
/// own); seeded by `seed`.
/// Whether this host runs AMX kernels: the CPU has AMX (tiles, bf16 and int8) and Linux grants
/// its tile state (the Emerald Rapids host of the device sessions); the tests that run AMX kernels
/// skip elsewhere.
bool HostRunsAmx();

std::vector<KernelCase> RandomCases(const KernelTemplate& tpl, const Target& target,
                                    const std::vector<std::string>& shapes, int per_shape,
                                    uint64_t seed);

/// `count` valid configs of `tpl`'s space for the workload, drawn with `rng`.
std::vector<Config> SampleConfigs(const KernelTemplate& tpl, const Workload& workload,
                                  const Target& target, int count, std::mt19937_64& rng);

/// For every value of every knob, one valid config that uses it (drawn with `rng`). Values that
/// no valid config can use are appended to `unreachable` as "knob=value".
std::vector<Config> ConfigsCoveringEveryKnobValue(const KernelTemplate& tpl,
                                                  const Workload& workload, const Target& target,
                                                  std::mt19937_64& rng,
                                                  std::vector<std::string>* unreachable);

/// For `count` random valid configs of `tpl` for the workload: sets each knob in turn to each
/// of its other candidates that keep the config valid, and compares the lowered IR with the
/// config's own. Returns one line per change that leaves the IR text as it was (a knob value
/// that means nothing there); empty when every change makes other code.
std::vector<std::string> KnobChangesThatKeepTheCode(const KernelTemplate& tpl,
                                                    const Workload& workload, const Target& target,
                                                    int count, std::mt19937_64& rng);

/// The workload with another epilogue.
Workload WithEpilogue(const Workload& workload, Epilogue epilogue);

/// True when the host can run code built for `target` (AVX-512 / AVX2 support).
bool HostRuns(const Target& target);

/// The x86-64 assembly of `tpl`'s kernel for `config`, built, lowered and compiled for the CPU
/// `target` names (with its threads), for tests that look for instructions.
absl::StatusOr<std::string> AssemblyOf(const KernelTemplate& tpl, const Workload& workload,
                                       const Target& target, const Config& config);

}  // namespace tune::testing
