#include "tests/codegen/templates/kernel_check.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <cmath>

#include "codegen/compiler.h"
#include "codegen/ir/printer.h"
#include "codegen/llvm/cpu_backend.h"
#include "codegen/lower.h"
#include "codegen/templates/cpu_vector_info.h"
#include "common/files.h"
#include "common/host_cpu.h"
#include "common/reference.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune::testing {
namespace {

using Kernel3 = int (*)(void*, void*, void*);
using Kernel4 = int (*)(void*, void*, void*, void*);
using Kernel5 = int (*)(void*, void*, void*, void*, void*);
using Kernel6 = int (*)(void*, void*, void*, void*, void*, void*);

std::string Describe(const KernelCase& c) {
  return StrCat(c.workload.ToString(), " ", ConfigToString(c.config));
}

}  // namespace

std::vector<std::string> CheckKernels(const Target& target, const KernelTemplate& tpl,
                                      const std::vector<KernelCase>& cases,
                                      std::vector<double>* error_ratios, const Catalog& catalog) {
  std::vector<std::string> failures;
  if (error_ratios != nullptr) {
    error_ratios->assign(cases.size(), -1.0);
  }
  absl::StatusOr<TempDir> dir = TempDir::Create("tune-kernel-check-");
  if (!dir.ok()) {
    return {dir.status().ToString()};
  }
  std::vector<KernelRequest> requests;
  for (size_t i = 0; i < cases.size(); ++i) {
    requests.push_back(
        {cases[i].workload, StrCat("kernel_", i), cases[i].config, std::string(tpl.name)});
  }
  Compiler compiler(catalog, target);
  const std::string so = dir->File("kernels.so");
  absl::StatusOr<LibraryResult> built = compiler.BuildLibrary(requests, so, dir->File("kernels.h"));
  if (!built.ok()) {
    failures.push_back(StrCat("build failed: ", built.status().ToString()));
    return failures;
  }
  void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    failures.push_back(StrCat("dlopen failed: ", dlerror()));
    return failures;
  }
  for (size_t i = 0; i < cases.size(); ++i) {
    const KernelCase& c = cases[i];
    void* symbol = dlsym(handle, StrCat("kernel_", i).c_str());
    if (symbol == nullptr) {
      failures.push_back(StrCat(Describe(c), ": symbol missing"));
      continue;
    }
    TensorSet tensors(c.workload, /*seed=*/i + 1);
    std::vector<void*> args = tensors.AbiPointers();
    std::vector<float> prepared;
    if (c.workload.prepared_weights()) {
      // The weights go through the kernel's own preparation; it gets them in its form.
      const std::string name = StrCat("kernel_", i);
      const auto* floats =
          static_cast<const int64_t*>(dlsym(handle, PreparedFloatsName(name).c_str()));
      auto prepare =
          reinterpret_cast<int (*)(void*, void*)>(dlsym(handle, PrepareFunctionName(name).c_str()));
      if (floats == nullptr || prepare == nullptr) {
        failures.push_back(StrCat(Describe(c), ": its preparation's symbols are missing"));
        continue;
      }
      prepared.assign(static_cast<size_t>(*floats), std::nanf(""));
      if (int prc = prepare(args[1], prepared.data()); prc != 0) {
        failures.push_back(StrCat(Describe(c), ": its preparation returned ", prc));
        continue;
      }
      args[1] = prepared.data();
    }
    int rc = -1;
    if (args.size() == 3) {
      rc = reinterpret_cast<Kernel3>(symbol)(args[0], args[1], args[2]);
    } else if (args.size() == 4) {
      rc = reinterpret_cast<Kernel4>(symbol)(args[0], args[1], args[2], args[3]);
    } else if (args.size() == 5) {
      rc = reinterpret_cast<Kernel5>(symbol)(args[0], args[1], args[2], args[3], args[4]);
    } else {
      rc = reinterpret_cast<Kernel6>(symbol)(args[0], args[1], args[2], args[3], args[4], args[5]);
    }
    if (rc != 0) {
      failures.push_back(StrCat(Describe(c), ": returned ", rc));
      continue;
    }
    // The reference's type (f32 or i32) has 4-byte elements.
    std::vector<uint32_t> want(tensors.output_size());
    RunReference(c.workload, tensors.Inputs(), want.data());
    CompareResult cmp =
        CompareOutputs(c.workload, tensors.output_data(), want.data(), tensors.output_size(),
                       TemplateTolerance(tpl, c.workload, c.config), tensors.scale_product());
    if (!cmp.ok) {
      failures.push_back(StrCat(Describe(c), ": ", cmp.message));
    }
    if (error_ratios != nullptr) {
      (*error_ratios)[i] = CompareOutputs(c.workload, tensors.output_data(), want.data(),
                                          tensors.output_size(), 1.0, tensors.scale_product())
                               .max_error_ratio;
    }
  }
  dlclose(handle);
  return failures;
}

bool HostRunsAmx() {
  return GetHostCpu().HasFeature("amx-tile") && GetHostCpu().HasFeature("amx-bf16") &&
         GetHostCpu().HasFeature("amx-int8");
}

std::vector<KernelCase> RandomCases(const KernelTemplate& tpl, const Target& target,
                                    const std::vector<std::string>& shapes, int per_shape,
                                    uint64_t seed) {
  constexpr Epilogue kEpilogues[] = {Epilogue::kNone, Epilogue::kBias, Epilogue::kRelu,
                                     Epilogue::kBiasRelu};
  std::mt19937_64 rng(seed);
  std::vector<KernelCase> cases;
  int e = 0;
  for (const std::string& text : shapes) {
    absl::StatusOr<Workload> w = Workload::Parse(text);
    TUNE_CHECK(w.ok()) << w.status();
    for (const Config& c : SampleConfigs(tpl, *w, target, per_shape, rng)) {
      // A requantising workload keeps its epilogue; the others take each in turn.
      cases.push_back({w->requantizes() ? *w : WithEpilogue(*w, kEpilogues[e++ % 4]), c});
    }
  }
  return cases;
}

std::vector<Config> SampleConfigs(const KernelTemplate& tpl, const Workload& workload,
                                  const Target& target, int count, std::mt19937_64& rng) {
  ConfigSpace space = tpl.space(workload, target);
  std::vector<Config> out;
  for (int i = 0; i < count; ++i) {
    std::optional<Config> c = space.Sample(rng);
    if (c.has_value()) {
      out.push_back(*c);
    }
  }
  return out;
}

std::vector<Config> ConfigsCoveringEveryKnobValue(const KernelTemplate& tpl,
                                                  const Workload& workload, const Target& target,
                                                  std::mt19937_64& rng,
                                                  std::vector<std::string>* unreachable) {
  ConfigSpace space = tpl.space(workload, target);
  std::vector<Config> out;
  for (const Knob& knob : space.knobs()) {
    for (int64_t value : knob.values) {
      // Random valid points with the knob forced to `value`.
      std::optional<Config> found;
      for (int attempt = 0; attempt < 20000 && !found; ++attempt) {
        Config c = space.SampleRaw(rng);
        c[knob.name] = value;
        if (space.ConstraintsHold(c)) {
          found = c;
        }
      }
      if (found) {
        out.push_back(*found);
      } else {
        unreachable->push_back(StrCat(knob.name, "=", value));
      }
    }
  }
  return out;
}

std::vector<std::string> KnobChangesThatKeepTheCode(const KernelTemplate& tpl,
                                                    const Workload& workload, const Target& target,
                                                    int count, std::mt19937_64& rng) {
  const ConfigSpace space = tpl.space(workload, target);
  auto lowered_text = [&](const Config& config) -> std::string {
    absl::StatusOr<ir::LoweredFunc> built = tpl.build(workload, target, config, "f");
    if (!built.ok()) {
      return StrCat("build failed: ", built.status().ToString());
    }
    absl::StatusOr<ir::LoweredFunc> lowered = Lower(*std::move(built));
    return lowered.ok() ? ir::ToText(*lowered) : lowered.status().ToString();
  };
  std::vector<std::string> same;
  for (const Config& config : SampleConfigs(tpl, workload, target, count, rng)) {
    const std::string text = lowered_text(config);
    for (const Knob& knob : space.knobs()) {
      for (int64_t value : knob.values) {
        Config other = config;
        other[knob.name] = value;
        if (value == config.at(knob.name) || !space.ConstraintsHold(other)) {
          continue;
        }
        if (lowered_text(other) == text) {
          same.push_back(StrCat(knob.name, ": ", config.at(knob.name), " -> ", value,
                                " keeps the code of ", ConfigToString(config)));
        }
      }
    }
  }
  return same;
}

Workload WithEpilogue(const Workload& workload, Epilogue epilogue) {
  switch (workload.op()) {
    case OpKind::kGemm:
      return Workload::Gemm(workload.gemm(), epilogue)
          .WithWeightForm(workload.weight_form())
          .WithTypes(workload.dtype(), workload.out_type());
    case OpKind::kConv2d:
      return Workload::Conv2d(workload.conv2d(), epilogue)
          .WithWeightForm(workload.weight_form())
          .WithTypes(workload.dtype(), workload.out_type());
  }
  return workload;
}

absl::StatusOr<std::string> AssemblyOf(const KernelTemplate& tpl, const Workload& workload,
                                       const Target& target, const Config& config) {
  ASSIGN_OR_RETURN(ir::LoweredFunc func, tpl.build(workload, target, config, "k"));
  ASSIGN_OR_RETURN(ir::LoweredFunc lowered, Lower(func));
  return EmitCpuAssembly({lowered}, {.cpu = target.cpu, .threads = target.threads});
}

bool HostRuns(const Target& target) {
  CpuVectorInfo want = CpuVectorInfoFor(target);
  Target native;  // an llvm target of one thread
  native.cpu = "native";
  CpuVectorInfo host = CpuVectorInfoFor(native);
  return host.lanes >= want.lanes && (host.fma || !want.fma);
}

}  // namespace tune::testing
