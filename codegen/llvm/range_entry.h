// The entry point of a shape range (common/shape_range.h) in a kernel library: an x86-64 object
// whose function
//
//   int32_t NAME(int64_t size, <the kernels' pointer arguments>[, void* stream])
//
// answers every size of the range through libtune_range.so (runtime/tune_range.h). The object
// holds, per entry: an adapter per kernel (`tune_range_fn`: it unpacks the argument array and
// calls the kernel, which the library defines elsewhere, compiled for one size), the
// tune_range_plan constant that lists them with their measured medians and the tensors that
// carry the ranged dimension, NAME, which packs its arguments and calls tune_range_call, and
// NAME_pieces, which says how NAME runs a size (tune_range_plan_pieces).
// GPU entries take the stream last and copy through the GPU runtime's memory functions
// (tune_gpurt_device_memory). Linking the object needs libtune_range.so (and libtune_gpurt.so
// for GPU entries).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tune {

/// Where the tensors of an entry live: host memory (CPU libraries) or a GPU's, reached through
/// libtune_gpurt.so with the CUDA driver or HIP.
enum class RangeMemory : uint8_t { kHost, kCuda, kHip };

struct RangeEntryKernel {
  int64_t size = 0;
  double seconds = 0;     // its measured (or estimated) median; 0 when unknown
  std::string symbol;     // the kernel's C function in the library
  bool measured = false;  // the log measured this size (recording skips it)
};

/// An argument that carries the ranged dimension (runtime/tune_range.h: tune_range_tensor).
struct RangeEntryTensor {
  int arg = 0;
  bool is_output = false;
  int64_t outer = 1;
  int64_t inner_bytes = 0;
};

struct RangeEntry {
  std::string func_name;  // a C identifier
  std::string text_before, text_after;
  int64_t lo = 0, hi = 0;
  bool splittable = false;
  int num_args = 0;  // the kernels' pointer arguments (1..16), the stream not counted
  std::vector<RangeEntryTensor> tensors;
  std::vector<RangeEntryKernel> kernels;  // ascending sizes, the last at hi
};

/// The entries as an x86-64 ELF relocatable object. `llvm_ir` (optional) receives its LLVM IR.
/// A bad name, no kernels, sizes not ascending within [lo, hi] or not ending at hi, or a tensor
/// naming no argument is InvalidArgument; an LLVM failure is Internal.
absl::StatusOr<std::string> EmitRangeEntryObject(const std::vector<RangeEntry>& entries,
                                                 RangeMemory memory,
                                                 std::string* llvm_ir = nullptr);

/// The runtime library the entries call (DT_NEEDED), and its symbols.
inline constexpr char kRangeRuntimeLibrary[] = "libtune_range.so";
inline constexpr char kRangeCallSymbol[] = "tune_range_call";
inline constexpr char kRangePiecesSymbol[] = "tune_range_plan_pieces";
/// Each entry NAME comes with NAME_pieces(int64_t size, int64_t* sizes, int32_t capacity), which
/// says how NAME runs a size (tune_range_plan_pieces on its plan).
inline constexpr char kRangePiecesSuffix[] = "_pieces";
inline constexpr char kGpuDeviceMemorySymbol[] = "tune_gpurt_device_memory";

}  // namespace tune
