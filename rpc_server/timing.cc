#include "rpc_server/timing.h"

#include <emmintrin.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>

#include "common/status.h"
#include "common/strings.h"
#include "rpc_server/worker_faults.h"

namespace tune::rpc {
namespace {

using Clock = std::chrono::steady_clock;

// `number` never grows past this; a round of this many calls of an empty function already
// lasts far longer than any sensible min_repeat_ms.
constexpr int64_t kMaxNumber = int64_t{1} << 30;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

KernelCall::KernelCall(void* fn, std::vector<void*> args) : fn_(fn), args_(std::move(args)) {
  TUNE_CHECK(fn_ != nullptr) << "null kernel entry";
  TUNE_CHECK(args_.size() >= kMinKernelArgs && args_.size() <= kMaxKernelArgs)
      << "kernel with " << args_.size() << " arguments";
}

namespace {

template <size_t... I>
int32_t CallWithArity(void* fn, const std::vector<void*>& args, std::index_sequence<I...>) {
  using Fn = int32_t (*)(std::conditional_t<true, void*, decltype(I)>...);
  return reinterpret_cast<Fn>(fn)(args[I]...);
}

}  // namespace

int32_t CallWithPointers(void* fn, const std::vector<void*>& args) {
  static_assert(kMinKernelArgs == 2 && kMaxKernelArgs + 1 == 9, "the cases below");
  switch (args.size()) {
    case 2:
      return CallWithArity(fn, args, std::make_index_sequence<2>());
    case 3:
      return CallWithArity(fn, args, std::make_index_sequence<3>());
    case 4:
      return CallWithArity(fn, args, std::make_index_sequence<4>());
    case 5:
      return CallWithArity(fn, args, std::make_index_sequence<5>());
    case 6:
      return CallWithArity(fn, args, std::make_index_sequence<6>());
    case 7:
      return CallWithArity(fn, args, std::make_index_sequence<7>());
    case 8:
      return CallWithArity(fn, args, std::make_index_sequence<8>());
    case 9:
      return CallWithArity(fn, args, std::make_index_sequence<9>());
    default:
      return -1;
  }
}

int32_t KernelCall::operator()() const { return CallWithPointers(fn_, args_); }

void CacheFlusher::Flush() const {
  constexpr size_t kLine = 64;
  for (const Region& r : regions_) {
    const char* begin = static_cast<const char*>(r.data);
    for (size_t offset = 0; offset < r.bytes; offset += kLine) {
      _mm_clflush(begin + offset);
    }
    if (r.bytes > 0) {
      _mm_clflush(begin + r.bytes - 1);
    }
  }
  _mm_mfence();
}

Measurement TimeRounds(const KernelCall& call, const TimingOptions& options,
                       Clock::time_point deadline, const CacheFlusher* flusher, NowFn now) {
  Measurement m;
  const auto min_round = std::chrono::milliseconds(std::max(options.min_repeat_ms, 0));
  int64_t number = std::max(options.number, 1);
  double secs_per_call = 0;  // latest estimate, 0 until the first round
  while (!EnoughRounds(m.round_secs, options)) {
    while (true) {
      if (secs_per_call > 0) {
        auto predicted = std::chrono::duration<double>(secs_per_call * static_cast<double>(number));
        if (now() + std::chrono::duration_cast<Clock::duration>(predicted) > deadline) {
          m.error = ErrorKind::kTimeout;
          m.message = fmt::format(
              "kernel too slow for timeout_ms={}: {} rounds done, the next of {} calls at {:.3g} s "
              "per call would pass the deadline",
              options.timeout_ms, m.round_secs.size(), number, secs_per_call);
          m.round_secs.clear();
          return m;
        }
      }
      if (options.flush_cache && flusher != nullptr) {
        flusher->Flush();
      }
      Clock::time_point start = now();
      for (int64_t i = 0; i < number; ++i) {
        if (int32_t rc = call(); rc != 0) {
          m.error = KernelStatusKind(rc);
          m.message = StrCat(KernelStatusMessage(rc), " during timing");
          m.round_secs.clear();
          return m;
        }
      }
      Clock::duration elapsed = now() - start;
      secs_per_call = std::max(Seconds(elapsed) / static_cast<double>(number), 1e-12);
      if (elapsed >= min_round || number >= kMaxNumber) {
        m.round_secs.push_back(Seconds(elapsed) / static_cast<double>(number));
        break;
      }
      // Too short: raise `number` to the estimate (with 10% headroom), at least doubling it.
      double wanted = std::ceil(Seconds(min_round) / secs_per_call * 1.1);
      number = std::min<int64_t>(
          kMaxNumber, std::max<int64_t>(number * 2, static_cast<int64_t>(std::min(wanted, 1e18))));
    }
  }
  m.number = static_cast<int>(std::min<int64_t>(number, INT32_MAX));
  return m;
}

}  // namespace tune::rpc
