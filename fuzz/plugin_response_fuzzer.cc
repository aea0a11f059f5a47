// A codegen plugin's answer (tune.v1.PluginResponse, proto/tune/v1/plugin.proto) as tune reads
// it (codegen/plugins/plugin_reply.h), without running a plugin: the input is the bytes a
// plugin wrote to its standard output. Invariants: a rejection is InvalidArgument naming the
// plugin; a family is accepted only with a known op; a space reply that CheckSpaceReply accepts
// becomes a ConfigSpace without aborting, its default config is valid in it, and that config's
// canonical text parses back to it.
#include <google/protobuf/stubs/logging.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "codegen/plugins/plugin_reply.h"
#include "common/status.h"
#include "fuzz/fuzz_util.h"
#include "search/config_space.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tune::fuzz::QuietLogs();
  google::protobuf::SetLogHandler(nullptr);  // it logs every string that is not UTF-8
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<tune::v1::PluginResponse> response =
      tune::ParsePluginResponse("fuzz-plugin", tune::fuzz::AsText(data, size));
  if (!response.ok()) {
    TUNE_CHECK(absl::IsInvalidArgument(response.status())) << response.status();
    TUNE_CHECK(tune::fuzz::StartsWith(response.status().message(), "codegen plugin fuzz-plugin: "));
    return 0;
  }
  for (const tune::v1::PluginFamily& family : response->description().families()) {
    absl::StatusOr<tune::OpKind> op = tune::CheckPluginFamily(family);
    if (!op.ok()) {
      TUNE_CHECK(absl::IsInvalidArgument(op.status())) << op.status();
      continue;
    }
    TUNE_CHECK(!family.name().empty() && family.version() >= 1);
    TUNE_CHECK((*op == tune::OpKind::kGemm) == (family.op() == "gemm"));
  }
  if (!response->has_space()) {
    return 0;
  }
  const tune::v1::SpaceReply& reply = response->space();
  absl::Status valid = tune::CheckSpaceReply(reply);
  if (!valid.ok()) {
    TUNE_CHECK(absl::IsInvalidArgument(valid)) << valid;
    return 0;
  }
  const tune::ConfigSpace space = tune::SpaceOfReply(reply);
  const tune::Config default_config = tune::DefaultOfReply(reply);
  if (!reply.supported()) {
    TUNE_CHECK(space.knobs().empty());
    return 0;
  }
  absl::Status default_valid = space.Validate(default_config);
  TUNE_CHECK(default_valid.ok()) << default_valid;
  const std::string canonical = tune::ConfigToString(default_config);
  absl::StatusOr<tune::Config> again = tune::ParseConfig(canonical);
  TUNE_CHECK(again.ok()) << canonical << " does not parse: " << again.status();
  TUNE_CHECK(*again == default_config) << canonical;
  return 0;
}
