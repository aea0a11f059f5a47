// Target: what code is generated for, in TVM-style text, and the device key that matches jobs
// to workers.
//
//   llvm -mcpu=znver4 -threads=1 [-bind=close|spread] [-libs=openblas,dnnl]
//                                                         -> device key cpu/x86_64/znver4
//   cuda -arch=sm_90 [-libs=cublas,cudnn]                 -> device key cuda/sm_90
//   cuda -arch=sm_90a [-libs=...]                         -> device key cuda/sm_90 (an
//        arch-specific target, whose wgmma code runs on sm_90 devices alone: workers of
//        device key cuda/sm_90 run it; none of another arch does)
//   rocm -mcpu=gfx90a [-code-object-version=4|5] [-libs=rocblas,hipblaslt,miopen]
//                                                         -> device key rocm/gfx90a
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tune {

enum class TargetKind : uint8_t { kLlvm, kCuda, kRocm };

/// Where the threads of a parallel CPU kernel run (llvm -bind=...).
enum class ThreadBinding : uint8_t {
  kNone,    // wherever the OS schedules them (the default)
  kClose,   // thread i on the i-th CPU the process may use (consecutive CPUs)
  kSpread,  // thread i on CPU i * A / T of the A the process may use (T threads: evenly apart)
};

/// "none", "close", "spread".
std::string_view ThreadBindingName(ThreadBinding binding);

std::string_view TargetKindName(TargetKind kind);

/// InvalidArgument "target '<text>': <what>; accepted forms: ..." (Parse's errors, and a
/// catalog's about the target's libraries).
absl::Status InvalidTarget(std::string_view text, std::string_view what);

/// The HSA code object version rocm targets get unless -code-object-version says otherwise.
inline constexpr int kDefaultCodeObjectVersion = 5;

struct Target {
  TargetKind kind = TargetKind::kLlvm;
  std::string cpu;  // llvm: -mcpu (default "native"); rocm: -mcpu (gfx name);
                    // cuda: -arch (sm_NN)
  int threads = 1;  // llvm: -threads (>= 1, default 1)
  ThreadBinding bind = ThreadBinding::kNone;  // llvm: -bind (meaningful with threads > 1)
  std::vector<std::string> libs;              // -libs, sorted and unique
  // rocm: -code-object-version (4 or 5), the HSA code object version of its kernels.
  int code_object_version = kDefaultCodeObjectVersion;

  /// Parses the text form: syntax only. Unknown kinds or options, bad values and -libs names
  /// that are not names are InvalidArgument naming the part and the accepted form. Which
  /// libraries exist for which kind is a catalog's question (Catalog::CheckTarget,
  /// codegen/templates/catalog.h): a worker, which knows no catalog, takes any name.
  static absl::StatusOr<Target> Parse(std::string_view text);

  /// The canonical text form: kind, then -mcpu/-arch, -threads (llvm), -bind (llvm, when not
  /// none), -code-object-version (rocm, when not the default), -libs (when any).
  std::string ToString() const;

  /// A copy with `-mcpu=native` replaced by this host's CPU name.
  Target Resolved() const;

  /// The device key of the (resolved) target: cpu/x86_64/<mcpu>, cuda/<arch>, rocm/<mcpu>.
  std::string DeviceKey() const;

  bool HasLib(std::string_view lib) const;

  friend bool operator==(const Target& a, const Target& b) { return a.ToString() == b.ToString(); }
};

}  // namespace tune
