// GPU architectures tune generates code for, with the per-block limits that schedule templates
// and backends check configs against, and the launch geometry of a GPU kernel.
//
//   cuda -arch=sm_80|sm_86|sm_89|sm_90|sm_90a (NVPTX, PTX text loaded by the CUDA driver;
//                                            sm_90a: Hopper's wgmma, run on sm_90 devices)
//   rocm -mcpu=gfx90a|gfx942|gfx1100        (AMDGPU, HSA code objects loaded by the HIP runtime)
//
// The table is the only place these numbers live: templates size their spaces from it,
// backends refuse kernels beyond it, workers compare a device with it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/target.h"

namespace tune {

struct GpuArch {
  TargetKind kind = TargetKind::kCuda;  // kCuda or kRocm
  std::string_view name;                // "sm_90", "gfx90a"
  int warp_size = 32;                   // threads per warp (NVIDIA) or wavefront (AMD)
  int max_threads_per_block = 1024;
  int64_t max_shared_bytes_per_block = 48 * 1024;  // statically allocated shared memory
  int max_registers_per_thread = 255;
  int64_t registers_per_multiprocessor = 65536;  // 32-bit registers per SM / CU (VGPRs)
  int max_threads_per_multiprocessor = 2048;
  int max_blocks_per_multiprocessor = 32;
  // LLVM's target triple and processor for the arch.
  std::string_view llvm_triple;    // "nvptx64-nvidia-cuda", "amdgcn-amd-amdhsa"
  std::string_view llvm_cpu;       // "sm_90", "gfx90a"
  std::string_view llvm_features;  // e.g. "+ptx80" for NVPTX
  /// Shared memory a block may have beyond max_shared_bytes_per_block, allocated dynamically
  /// (the launch opts in: CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES); 0: none beyond it.
  int64_t max_dynamic_shared_bytes_per_block = 0;
};

/// The arch a (cuda or rocm) target names; InvalidArgument naming the arch and the accepted
/// ones for anything else (including llvm targets).
absl::StatusOr<GpuArch> GpuArchFor(const Target& target);

/// Every supported arch of one kind, in table order.
std::vector<GpuArch> SupportedGpuArchs(TargetKind kind);

/// "sm_80, sm_86, sm_89, sm_90, sm_90a" or "gfx90a, gfx942, gfx1100".
std::string SupportedGpuArchNames(TargetKind kind);

/// A TMA tensor map (CUDA's CUtensorMap, what cuTensorMapEncodeTiled encodes) over one buffer
/// argument of a kernel. The launcher encodes it at launch time with the argument's device
/// address and passes it by value after the kernel's arguments: one 128-byte parameter
/// (`.param .align 64 .b8 [128]`, read in place: CUDA's __grid_constant__) per map, in order.
/// Elements are copied as raw bytes (UINT8, UINT16 or UINT32 by element_bytes), boxes that
/// reach outside the tensor are filled with zeros, and the L2 promotion is 128 bytes.
struct GpuTensorMap {
  uint32_t arg = 0;            // the kernel argument (a buffer) whose address the map describes
  uint32_t element_bytes = 2;  // 1, 2 or 4
  uint32_t rank = 2;           // 1..5
  std::array<uint64_t, 5> dims = {1, 1, 1, 1, 1};  // elements per dimension, innermost first
  /// Bytes between consecutive indexes of dims 1..rank-1 (each a multiple of 16; entries past
  /// rank - 1 are 0).
  std::array<uint64_t, 4> strides = {0, 0, 0, 0};
  std::array<uint32_t, 5> box = {1, 1, 1, 1, 1};  // elements per copy per dimension, 1..256
  /// The shared-memory swizzle of a copied box: 0 (none) or 128 (the 16-byte chunk c of each
  /// 128-byte row r lands at chunk c ^ (r % 8); box[0] * element_bytes is then 128).
  uint32_t swizzle_bytes = 128;
  /// im2col mode (cuTensorMapEncodeIm2col; ir::TensorMap describes it): over a channels-last
  /// tensor of rank 3..5, box[0] is the channels and box[1] the pixels of one copy (the other
  /// entries 1), and the corners (rank - 2 entries, W first) bound the window corners a copy
  /// walks. A tiled map (im2col false) has zero corners.
  bool im2col = false;
  std::array<int32_t, 3> lower_corner = {0, 0, 0};
  std::array<int32_t, 3> upper_corner = {0, 0, 0};
  /// The traversal step per dimension (1..8; the first is ignored, as the copy engine does).
  std::array<uint32_t, 5> element_strides = {1, 1, 1, 1, 1};
  friend bool operator==(const GpuTensorMap&, const GpuTensorMap&) = default;
};

/// `map` as libtune_gpurt.so's C descriptor (runtime/tune_gpurt.h's tune_gpurt_tensor_map,
/// whose fields mirror these; a template, so that common/ needs no runtime header), every field
/// copied and struct_bytes its size: how the worker and the host stubs both build theirs.
template <typename Descriptor>
Descriptor ToTensorMapDescriptor(const GpuTensorMap& map) {
  Descriptor out{};
  out.struct_bytes = sizeof out;
  out.arg = map.arg;
  out.element_bytes = map.element_bytes;
  out.rank = map.rank;
  std::copy(map.dims.begin(), map.dims.end(), out.dims);
  std::copy(map.strides.begin(), map.strides.end(), out.strides);
  std::copy(map.box.begin(), map.box.end(), out.box);
  out.swizzle_bytes = map.swizzle_bytes;
  out.im2col = map.im2col ? 1 : 0;
  std::copy(map.lower_corner.begin(), map.lower_corner.end(), out.lower_corner);
  std::copy(map.upper_corner.begin(), map.upper_corner.end(), out.upper_corner);
  std::copy(map.element_strides.begin(), map.element_strides.end(), out.element_strides);
  return out;
}

/// Launch geometry of one GPU kernel: grid in blocks and block in threads (x, y, z; every
/// entry >= 1) and the dynamic shared memory in bytes. Part of a GPU artifact.
struct GpuLaunch {
  std::array<uint32_t, 3> grid = {1, 1, 1};
  std::array<uint32_t, 3> block = {1, 1, 1};
  uint32_t dynamic_shared_bytes = 0;
  uint32_t static_shared_bytes = 0;  // informational: the kernel's own shared arrays
  /// Kernel arguments (indexes, ascending) that the kernel accumulates into with atomic adds:
  /// whoever launches it fills each with zeros first, in the same stream.
  std::vector<uint32_t> zeroed_args = {};
  /// Tensor maps the launcher encodes and passes after the arguments, in order (CUDA only).
  std::vector<GpuTensorMap> tensor_maps = {};
  /// Thread-block cluster shape in blocks (x, y, z; each divides grid; {1, 1, 1}: no cluster).
  /// Anything else is launched with cuLaunchKernelEx's cluster-dimension attribute (CUDA only).
  std::array<uint32_t, 3> cluster = {1, 1, 1};
  /// Informational: bytes of module memory the kernel keeps between launches (a split
  /// reduction's workspace, zero when the module loads). Launches of a kernel with one must
  /// not overlap: one stream at a time.
  uint64_t workspace_bytes = 0;

  uint64_t ThreadsPerBlock() const { return uint64_t{block[0]} * block[1] * block[2]; }
  uint64_t Blocks() const { return uint64_t{grid[0]} * grid[1] * grid[2]; }
  friend bool operator==(const GpuLaunch&, const GpuLaunch&) = default;
};

/// "grid=(g0,g1,g2) block=(b0,b1,b2) shared=S" (for logs and headers).
std::string ToString(const GpuLaunch& launch);

}  // namespace tune
