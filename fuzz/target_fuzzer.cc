// Target::Parse (common/target.h) on any text, accepting the known libraries and any library
// name. Invariants: a rejection is InvalidArgument; an accepted target's canonical text parses
// back to itself (also once -mcpu=native is resolved); -libs are sorted and unique; what the
// known-library form accepts, the any-library form accepts the same way; the device key names
// the kind.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "common/target.h"
#include "fuzz/fuzz_util.h"

namespace {

using tune::Target;

void CheckRoundTrip(const Target& target, Target::Libs libs) {
  const std::string canonical = target.ToString();
  absl::StatusOr<Target> again = Target::Parse(canonical, libs);
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
  std::string known_canonical;
  for (Target::Libs libs : {Target::Libs::kKnown, Target::Libs::kAny}) {
    absl::StatusOr<Target> target = Target::Parse(text, libs);
    if (!target.ok()) {
      TUNE_CHECK(absl::IsInvalidArgument(target.status())) << target.status();
      TUNE_CHECK(known_canonical.empty()) << "accepted with known libraries only: " << text;
      continue;
    }
    if (libs == Target::Libs::kKnown) {
      known_canonical = target->ToString();
    } else if (!known_canonical.empty()) {
      TUNE_CHECK(target->ToString() == known_canonical) << target->ToString();
    }
    TUNE_CHECK(std::is_sorted(target->libs.begin(), target->libs.end()));
    TUNE_CHECK(std::adjacent_find(target->libs.begin(), target->libs.end()) == target->libs.end());
    TUNE_CHECK(target->threads >= 1);
    CheckRoundTrip(*target, libs);
    const Target resolved = target->Resolved();
    TUNE_CHECK(resolved.kind != tune::TargetKind::kLlvm || resolved.cpu != "native");
    CheckRoundTrip(resolved, libs);
    const std::string key = target->DeviceKey();
    const std::string_view prefix = target->kind == tune::TargetKind::kLlvm   ? "cpu/x86_64/"
                                    : target->kind == tune::TargetKind::kCuda ? "cuda/"
                                                                              : "rocm/";
    TUNE_CHECK(key.starts_with(prefix) && key.size() > prefix.size()) << key;
  }
  return 0;
}
