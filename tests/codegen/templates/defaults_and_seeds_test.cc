// Every template's default and seeds lie in its own space, for every workload of the bench
// suites (as written and with prepared weights) on the targets the suites are run on. A default
// outside the space is a job that cannot start (tune-compile refuses it, a search re-measures
// nothing); a seed outside it is silently dropped.
#include <string>
#include <vector>

#include "codegen/templates/catalog.h"
#include "common/workload_list.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

// The workloads of the suite files, each also with prepared weights where it can take them.
std::vector<Workload> SuiteWorkloads() {
  std::vector<Workload> out;
  for (const char* file :
       {"cpu_workloads.txt", "cpu_matrix_workloads.txt", "cpu_matrix_conv_workloads.txt",
        "cpu_matrix_smoke.txt", "cpu_conv_smoke.txt", "cpu_f16_smoke.txt", "cpu_requant_smoke.txt",
        "gpu_workloads.txt", "gpu_matrix_workloads.txt", "gpu_conv_smoke.txt",
        "gpu_typed_smoke.txt", "gpu_split_dtypes.txt"}) {
    absl::StatusOr<std::vector<WeightedWorkload>> list =
        ReadWorkloadList(std::string(TUNE_BENCH_DIR) + "/" + file);
    EXPECT_TRUE(list.ok()) << file << ": " << list.status();
    if (!list.ok()) {
      continue;
    }
    for (const WeightedWorkload& w : *list) {
      out.push_back(w.workload);
      if (!w.workload.prepared_weights()) {
        if (absl::StatusOr<Workload> prepared =
                Workload::Parse(w.workload.ToString() + ",weights=prepared");
            prepared.ok()) {
          out.push_back(*prepared);
        }
      }
    }
  }
  return out;
}

TEST(DefaultsAndSeedsTest, LieInTheirTemplatesSpaceForEverySuiteWorkloadAndTarget) {
  const std::vector<Workload> workloads = SuiteWorkloads();
  ASSERT_GT(workloads.size(), 300u);
  int checked = 0;
  for (const char* text :
       {"llvm -mcpu=znver5", "llvm -mcpu=sapphirerapids", "llvm -mcpu=znver3", "cuda -arch=sm_90a",
        "cuda -arch=sm_80", "rocm -mcpu=gfx942", "rocm -mcpu=gfx1100"}) {
    const Target target = *Target::Parse(text);
    for (const Workload& workload : workloads) {
      for (const KernelTemplate* tpl : Catalog::BuiltIn().TemplatesFor(workload, target)) {
        const ConfigSpace space = tpl->space(workload, target);
        const std::string where =
            std::string(tpl->name) + " for " + workload.ToString() + " on " + text;
        const Config def = tpl->default_config(workload, target);
        const absl::Status valid = space.Validate(def);
        EXPECT_TRUE(valid.ok()) << "default of " << where << ": " << valid;
        if (tpl->seeds) {
          for (const Config& seed : tpl->seeds(workload, target)) {
            const absl::Status ok = space.Validate(seed);
            EXPECT_TRUE(ok.ok()) << "seed of " << where << ": " << ok;
          }
        }
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

}  // namespace
}  // namespace tune
