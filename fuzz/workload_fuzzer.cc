// Workload::Parse (common/workload.h) on any text. Invariants: a rejection is InvalidArgument
// with a message; an accepted workload's canonical text parses back to the same canonical text,
// its shape is one the parser promises (sizes >= 1, a non-empty output, a filter that fits the
// padded input, a block that divides the channels) and its tensors have countable sizes.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"
#include "common/workload.h"
#include "fuzz/fuzz_util.h"

namespace {

using tune::Workload;

void CheckShape(const Workload& w) {
  switch (w.op()) {
    case tune::OpKind::kGemm: {
      const tune::GemmShape& g = w.gemm();
      TUNE_CHECK(g.m >= 1 && g.n >= 1 && g.k >= 1) << w.ToString();
      break;
    }
    case tune::OpKind::kConv2d: {
      const tune::Conv2dShape& c = w.conv2d();
      TUNE_CHECK(c.n >= 1 && c.c >= 1 && c.h >= 1 && c.w >= 1 && c.k >= 1 && c.r >= 1 && c.s >= 1 &&
                 c.stride >= 1 && c.pad >= 0 && c.dilation >= 1)
          << w.ToString();
      TUNE_CHECK(c.p() >= 1 && c.q() >= 1) << w.ToString();
      // The last filter tap of the first output row and column lies inside the padded input.
      TUNE_CHECK(c.dilation * (c.r - 1) + 1 <= c.h + 2 * c.pad) << w.ToString();
      TUNE_CHECK(c.dilation * (c.s - 1) + 1 <= c.w + 2 * c.pad) << w.ToString();
      TUNE_CHECK(c.block >= 1 && c.c % c.block == 0 && c.k % c.block == 0) << w.ToString();
      break;
    }
  }
  for (const tune::TensorArg& arg : w.Arguments()) {
    for (int64_t d : arg.shape) {
      TUNE_CHECK(d >= 1) << w.ToString() << " " << arg.name;
    }
    // UBSan reports an element count that overflows.
    TUNE_CHECK(arg.NumElements() >= 1) << w.ToString() << " " << arg.name;
  }
  const double flops = w.Flops();
  TUNE_CHECK(std::isfinite(flops) && flops > 0) << w.ToString();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = tune::fuzz::AsText(data, size);
  absl::StatusOr<Workload> workload = Workload::Parse(text);
  if (!workload.ok()) {
    TUNE_CHECK(absl::IsInvalidArgument(workload.status())) << workload.status();
    TUNE_CHECK(!workload.status().message().empty());
    return 0;
  }
  const std::string canonical = workload->ToString();
  absl::StatusOr<Workload> again = Workload::Parse(canonical);
  TUNE_CHECK(again.ok()) << "'" << canonical << "' does not parse: " << again.status();
  TUNE_CHECK(again->ToString() == canonical) << again->ToString() << " != " << canonical;
  CheckShape(*workload);
  const Workload plain = workload->InPlainLayout();
  absl::StatusOr<Workload> plain_again = Workload::Parse(plain.ToString());
  TUNE_CHECK(plain_again.ok() && *plain_again == plain) << plain.ToString();
  return 0;
}
