#include "codegen/dtype_support.h"

#include <string_view>

#include "codegen/llvm/cpu_names.h"
#include "common/strings.h"

namespace tune {
namespace {

using D = Dtype;

// The GPU rows of the table in dtype_support.h.
struct GpuDtypes {
  std::string_view arch;
  DtypeSet dtypes;
};

constexpr DtypeSet kAmpere{D::kF32, D::kTf32, D::kF16, D::kBf16, D::kI8, D::kU8I8};
constexpr GpuDtypes kGpuDtypes[] = {
    {"sm_80", kAmpere},
    {"sm_86", kAmpere},
    {"sm_89", kAmpere | DtypeSet{D::kFp8E4m3, D::kFp8E5m2}},
    {"sm_90", kAmpere | DtypeSet{D::kFp8E4m3, D::kFp8E5m2}},
    {"sm_90a", kAmpere | DtypeSet{D::kFp8E4m3, D::kFp8E5m2}},
    {"gfx90a", DtypeSet{D::kF32, D::kF16, D::kBf16, D::kI8}},
    {"gfx942", DtypeSet{D::kF32, D::kF16, D::kBf16, D::kI8, D::kFp8E4m3Fnuz, D::kFp8E5m2Fnuz}},
    {"gfx1100", DtypeSet{D::kF32, D::kF16, D::kBf16, D::kI8, D::kU8I8}},
};

constexpr DtypeSet kX86{D::kF32, D::kBf16, D::kI8, D::kU8I8};

// Why `target` does not run `dtype` (one of the dtypes it refuses).
std::string_view Reason(Dtype dtype, const Target& target) {
  const bool fnuz = dtype == D::kFp8E4m3Fnuz || dtype == D::kFp8E5m2Fnuz;
  switch (target.kind) {
    case TargetKind::kLlvm:
      if (dtype == D::kF16) {
        return "f16 needs AVX512-FP16 (Sapphire Rapids and later)";
      }
      return dtype == D::kTf32 ? "TF32 is a tensor-core format" : "x86-64 CPUs have no FP8";
    case TargetKind::kCuda:
      return fnuz ? "the FNUZ encodings are AMD's; NVIDIA runs fp8e4m3 and fp8e5m2"
                  : "FP8 tensor cores need sm_89 or later";
    case TargetKind::kRocm:
      if (dtype == D::kTf32) {
        return "tune does not run TF32 on AMD GPUs";
      }
      if (dtype == D::kU8I8) {
        return "CDNA's integer matrix instructions take signed operands only";
      }
      if (fnuz) {
        return "the FNUZ encodings run on gfx942 only";
      }
      return target.cpu == "gfx942" ? "gfx942 runs the FNUZ encodings (fp8e4m3fnuz, fp8e5m2fnuz)"
                                    : "this GPU has no FP8 matrix instructions";
  }
  return "";
}

}  // namespace

DtypeSet TargetDtypes(const Target& target) {
  if (target.kind == TargetKind::kLlvm) {
    const Target resolved = target.Resolved();
    return X86CpuHasFeature(resolved.cpu, "avx512fp16") ? kX86 | DtypeSet{D::kF16} : kX86;
  }
  for (const GpuDtypes& row : kGpuDtypes) {
    if (row.arch == target.cpu) {
      return row.dtypes;
    }
  }
  return {};
}

absl::Status CheckDtypeOnTarget(const Workload& workload, const Target& target) {
  const DtypeSet accepted = TargetDtypes(target);
  // An arch tune does not know is the target's error, which its own check names.
  if (accepted.empty() || accepted.Has(workload.dtype())) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      StrCat("dtype=", DtypeName(workload.dtype()), " is not run on '", target.ToString(),
             "': ", Reason(workload.dtype(), target),
             "; accepted there: ", accepted.empty() ? "none" : accepted.Names()));
}

}  // namespace tune
