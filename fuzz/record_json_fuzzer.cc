// RecordFromJsonLine (db/record_json.h): one line of an exported tuning log. Invariants: a
// rejection is InvalidArgument; a line that parses and whose record CanonicalizeRecord accepts
// (what import stores) prints as one line that parses back to a record that prints the same,
// byte for byte: export, import, export is lossless.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "db/record.h"
#include "db/record_json.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line = tune::fuzz::AsText(data, size);
  absl::StatusOr<tune::Record> record = tune::RecordFromJsonLine(line);
  if (!record.ok()) {
    TUNE_CHECK(absl::IsInvalidArgument(record.status())) << record.status();
    return 0;
  }
  absl::Status canonical = tune::CanonicalizeRecord(*record);
  if (!canonical.ok()) {
    TUNE_CHECK(absl::IsInvalidArgument(canonical)) << canonical;
    return 0;
  }
  const std::string printed = tune::RecordToJsonLine(*record);
  TUNE_CHECK(printed.find('\n') == std::string::npos) << printed;
  absl::StatusOr<tune::Record> again = tune::RecordFromJsonLine(printed);
  TUNE_CHECK(again.ok()) << "the printed line does not parse: " << again.status() << "\n"
                         << printed;
  absl::Status still = tune::CanonicalizeRecord(*again);
  TUNE_CHECK(still.ok()) << "the printed record is not canonical: " << still << "\n" << printed;
  const std::string reprinted = tune::RecordToJsonLine(*again);
  TUNE_CHECK(reprinted == printed) << "\n" << printed << "\n" << reprinted;
  return 0;
}
