// Target::Parse (common/target.h, syntax only) on any text. Invariants: a rejection is
// InvalidArgument; an accepted target's canonical text parses back to itself (also once
// -mcpu=native is resolved); -libs are sorted and unique; the device key names the kind.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "common/target.h"
#include "fuzz/fuzz_util.h"

namespace {

using tune::Target;

void CheckRoundTrip(const Target& target) {
  const std::string canonical = target.ToString();
  absl::StatusOr<Target> again = Target::Parse(canonical);
  TUNE_CHECK(again.ok()) << "'" << canonical << "' does not parse: " << again.status();
  TUNE_CHECK(again->ToString() == canonical) << again->ToString() << " != " << canonical;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tune::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = tune::fuzz::AsText(data, size);
  absl::StatusOr<Target> target = Target::Parse(text);
  if (!target.ok()) {
    TUNE_CHECK(absl::IsInvalidArgument(target.status())) << target.status();
    return 0;
  }
  TUNE_CHECK(std::is_sorted(target->libs.begin(), target->libs.end()));
  TUNE_CHECK(std::adjacent_find(target->libs.begin(), target->libs.end()) == target->libs.end());
  TUNE_CHECK(target->threads >= 1);
  CheckRoundTrip(*target);
  const Target resolved = target->Resolved();
  TUNE_CHECK(resolved.kind != tune::TargetKind::kLlvm || resolved.cpu != "native");
  CheckRoundTrip(resolved);
  const std::string key = target->DeviceKey();
  const std::string_view prefix = target->kind == tune::TargetKind::kLlvm   ? "cpu/x86_64/"
                                  : target->kind == tune::TargetKind::kCuda ? "cuda/"
                                                                            : "rocm/";
  TUNE_CHECK(key.starts_with(prefix) && key.size() > prefix.size()) << key;
  return 0;
}
