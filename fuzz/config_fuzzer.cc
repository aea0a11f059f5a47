// A config's JSON text (search/config_space.h ParseConfig, as tune-compile --config and the
// tuning log read it) checked against a schedule template's space (codegen/templates), then
// built into loop IR when valid. The input is three lines naming the template, the workload and
// the target, then the config:
//
//   gemm.cpu.blocked
//   gemm:M=64,N=64,K=64
//   llvm -mcpu=skylake-avx512 -threads=1
//   {"kc":64,"mc":32,"mr":4,"nc":64,"nr":16,...}
//
// Invariants: ParseConfig rejects with InvalidArgument or gives a config whose canonical text
// parses back to it; for a template that applies, its default config is valid in its space,
// CheckBuildRequest agrees with the space's Validate, and a valid config builds.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "codegen/templates/catalog.h"
#include "codegen/templates/template.h"
#include "codegen/templates/template_util.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/target.h"
#include "common/workload.h"
#include "fuzz/fuzz_util.h"
#include "search/config_space.h"

namespace {

using tune::Config;

// The next line of `rest` (without its newline), or nullopt when there is no newline left.
std::optional<std::string_view> TakeLine(std::string_view& rest) {
  size_t end = rest.find('\n');
  if (end == std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view line = rest.substr(0, end);
  rest.remove_prefix(end + 1);
  return line;
}

void CheckTemplate(const tune::KernelTemplate& tpl, const tune::Workload& workload,
                   const tune::Target& target, const absl::StatusOr<Config>& config) {
  const tune::ConfigSpace space = tpl.space(workload, target);
  const Config default_config = tpl.default_config(workload, target);
  absl::Status default_valid = space.Validate(default_config);
  TUNE_CHECK(default_valid.ok()) << tpl.name << " on " << workload.ToString() << ": "
                                 << default_valid;
  if (!config.ok()) {
    return;
  }
  absl::Status valid = space.Validate(*config);
  absl::Status accepted = tune::CheckBuildRequest(tpl, workload, target, *config);
  TUNE_CHECK(valid.ok() == accepted.ok()) << valid << " / " << accepted;
  if (!valid.ok()) {
    TUNE_CHECK(absl::IsInvalidArgument(valid)) << valid;
    return;
  }
  if (tpl.build) {
    auto built = tpl.build(workload, target, *config, "fuzz_kernel");
    TUNE_CHECK(built.ok()) << tpl.name << " " << tune::ConfigToString(*config) << " on "
                           << workload.ToString() << ": " << built.status();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tune::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest = tune::fuzz::AsText(data, size);
  std::optional<std::string_view> name = TakeLine(rest);
  std::optional<std::string_view> workload_text = name ? TakeLine(rest) : std::nullopt;
  std::optional<std::string_view> target_text = workload_text ? TakeLine(rest) : std::nullopt;
  if (!target_text) {
    rest = tune::fuzz::AsText(data, size);  // no header: the whole input is the config
  }

  absl::StatusOr<Config> config = tune::ParseConfig(rest);
  if (!config.ok()) {
    TUNE_CHECK(absl::IsInvalidArgument(config.status())) << config.status();
  } else {
    const std::string canonical = tune::ConfigToString(*config);
    absl::StatusOr<Config> again = tune::ParseConfig(canonical);
    TUNE_CHECK(again.ok()) << canonical << " does not parse: " << again.status();
    TUNE_CHECK(*again == *config) << canonical << " parses to " << tune::ConfigToString(*again);
  }
  if (!target_text) {
    return 0;
  }
  absl::StatusOr<tune::Workload> workload = tune::Workload::Parse(*workload_text);
  absl::StatusOr<tune::Target> target = tune::Target::Parse(*target_text);
  if (!workload.ok() || !target.ok()) {
    return 0;
  }
  for (const tune::KernelTemplate* tpl :
       tune::Catalog::BuiltIn().TemplatesFor(*workload, *target)) {
    if (tpl->name == *name) {
      CheckTemplate(*tpl, *workload, *target, config);
    }
  }
  return 0;
}
