// FinalistPhase::Pick on a real tuning log: which configs of a screened job become finalists.
#include "tuner/scheduler/finalist_phase.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "codegen/templates/catalog.h"
#include "common/files.h"

namespace tune::tuner {
namespace {

constexpr char kGemm[] = "gemm:M=64,N=64,K=64";
constexpr char kTarget[] = "llvm -mcpu=znver4 -threads=1 -libs=openblas";

class FinalistPickTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto log = TuningLog::Open(dir_.File("tuning.db"));
    ASSERT_TRUE(log.ok()) << log.status();
    log_ = std::move(*log);
    spec_.workload = kGemm;
    spec_.target = kTarget;
    spec_.device_key = "cpu/x86_64/znver4";
    spec_.strategy = "grid";
    spec_.trials = 8;
    absl::StatusOr<Job> job = log_->CreateJob(spec_);
    ASSERT_TRUE(job.ok()) << job.status();
    job_id_ = job->id;
    spec_ = job->spec;
    generated_ = Catalog::BuiltIn().FindTemplate("gemm.cpu.blocked");
    library_ = Catalog::BuiltIn().FindTemplate("gemm.cpu.openblas");
    ASSERT_TRUE(generated_ != nullptr && library_ != nullptr && !library_->library.empty());
  }

  // The job's screen reading of `config` of `tpl`: `secs` a call.
  void Screened(const KernelTemplate* tpl, const std::string& config, double secs) {
    Record r;
    r.workload = spec_.workload;
    r.target = spec_.target;
    r.device_key = spec_.device_key;
    r.template_name = std::string(tpl->name);
    r.template_version = tpl->version;
    r.config = config;
    r.measurement.round_secs = {secs, secs, secs};
    r.measurement.number = 1;
    r.measurement.device_fingerprint = "cpu/x86_64/znver4 fp=2";
    r.job_id = job_id_;
    r.final = true;
    ASSERT_TRUE(log_->CommitRecord(r).ok());
  }

  // The finalists Pick chooses after the screen, as "template config".
  std::vector<std::string> Finalists() {
    auto picked =
        FinalistPhase::Pick(*log_, job_id_, spec_, {generated_, library_}, {}, /*screened=*/true);
    EXPECT_TRUE(picked.ok()) << picked.status();
    std::vector<std::string> names;
    for (const auto& [candidate, passes] : picked.value_or(std::vector<PlannedFinalist>{})) {
      EXPECT_EQ(passes, 1) << "the screen is the one pass recorded";
      names.push_back(std::string(candidate.tpl->name) + " " + ConfigToString(candidate.config));
    }
    return names;
  }

  TempDir dir_ = TempDir::Create("tune-finalist-pick-test-").value();
  std::unique_ptr<TuningLog> log_;
  JobSpec spec_;
  int64_t job_id_ = 0;
  const KernelTemplate* generated_ = nullptr;
  const KernelTemplate* library_ = nullptr;
};

TEST_F(FinalistPickTest, TheLibrarysFastestIsKeptAndItsOtherConfigsCompeteLikeTunes) {
  Screened(generated_, R"({"mc":1})", 1.0e-4);
  Screened(library_, R"({"algo":1})", 1.5e-4);
  Screened(generated_, R"({"mc":2})", 2.0e-4);
  Screened(library_, R"({"algo":2})", 2.5e-4);
  Screened(generated_, R"({"mc":3})", 3.0e-4);
  Screened(library_, R"({"algo":3})", 4.0e-4);
  // By the screen's figures: mc 1, mc 2 and the library's algo 2 are the three fastest besides
  // the library's fastest (kept whatever its figure); mc 3 lies beyond the window of the third,
  // and algo 3, a slow config of the library, is no finalist.
  EXPECT_EQ(Finalists(), (std::vector<std::string>{
                             R"(gemm.cpu.blocked {"mc":1})", R"(gemm.cpu.openblas {"algo":1})",
                             R"(gemm.cpu.blocked {"mc":2})", R"(gemm.cpu.openblas {"algo":2})"}));
}

TEST_F(FinalistPickTest, TheLibrarysFastestIsKeptWhenSlowerThanEveryGeneratedConfig) {
  for (int i = 1; i <= 5; ++i) {
    Screened(generated_, "{\"mc\":" + std::to_string(i) + "}", i * 1e-4);
  }
  Screened(library_, R"({"algo":1})", 9e-4);
  Screened(library_, R"({"algo":2})", 8e-4);
  EXPECT_EQ(Finalists(), (std::vector<std::string>{
                             R"(gemm.cpu.blocked {"mc":1})", R"(gemm.cpu.blocked {"mc":2})",
                             R"(gemm.cpu.blocked {"mc":3})", R"(gemm.cpu.openblas {"algo":2})"}));
}

}  // namespace
}  // namespace tune::tuner
