// The GPU loop shape of a kernel (codegen/README.md, "GPU kernels") and the launch geometry
// read off it. No LLVM here: templates and the daemon may check a kernel without codegen.
#pragma once

#include "absl/status/statusor.h"
#include "codegen/ir/ir.h"
#include "common/gpu_arch.h"

namespace tune {

/// True when the statement contains a gpu_block or gpu_thread loop.
bool HasGpuLoops(const ir::Stmt& stmt);

/// Checks the GPU loop shape of a kernel and returns its launch geometry:
///   - every GPU loop has min 0 and a constant extent >= 1;
///   - gpu_block loops come first: no gpu_block loop inside a gpu_thread loop, and no
///     gpu_thread loop or gpu_shared allocation outside the block loops;
///   - each axis is bound at most once by block loops and at most once by thread loops, and
///     every loop on one axis has the same extent;
///   - gpu_shared allocations sit outside thread loops; barriers inside them;
///   - a barrier is not under a condition inside the thread loops (every thread must reach it),
///     but for a named barrier and for a cluster barrier under ifs whose branches each pass as
///     many cluster barriers outside loops (a warp-specialised block's producer and consumers;
///     a cluster barrier counts every thread of the cluster wherever it arrives, and the
///     conditions must split the block by whole warps, which the check cannot see);
///   - warp_mma only inside the thread loops, and then whole warps (threads a multiple of 32);
///     warpgroup_mma likewise, with whole warpgroups (a multiple of 128);
///   - tensor_copy and mbarrier operations only inside the thread loops, and with `arch`
///     only on sm_90 / sm_90a; the launch's tensor_maps are TensorMapsOf(body), each naming
///     the parameter it maps;
///   - with `arch`: threads per block <= arch->max_threads_per_block and the shared bytes (the
///     sum of gpu_shared allocations, each rounded up to GpuSharedAlignment) <= the arch's limit
///     for static shared memory, or for dynamic (UsesDynamicSharedMemory), which the launch then
///     carries in dynamic_shared_bytes.
/// Every violation is InvalidArgument naming the loop, buffer or limit and the value. The
/// launch's zeroed_args are the parameters the kernel adds into atomically.

/// The alignment of every gpu_shared array of a kernel with `body`: 1024 bytes where a
/// WarpGroupMma reads shared memory or a TensorCopy writes it swizzled (its 128-byte swizzle
/// repeats every 1024 bytes, and the hardware swizzles absolute addresses), else 16. GpuLaunchOf
/// sums the arrays' sizes rounded up to it; the backend places them on it.
inline constexpr int64_t kSwizzledSharedAlignment = 1024;
int64_t GpuSharedAlignment(const ir::Stmt& body);

/// The distinct tensor maps of the body's TensorCopy statements, in the order of first use:
/// the kernel's by-value tensor-map parameters after its buffers (GpuLaunch::tensor_maps).
std::vector<ir::TensorMap> TensorMapsOf(const ir::Stmt& body);

/// Whether a kernel with `shared_bytes` of gpu_shared arrays gets them as dynamic shared memory
/// (one region the launch sizes, past the arch's static limit: CUDA's opt-in maximum) rather
/// than as static arrays. The backend lays them out accordingly.
bool UsesDynamicSharedMemory(int64_t shared_bytes, const GpuArch* arch);

absl::StatusOr<GpuLaunch> GpuLaunchOf(const ir::LoweredFunc& func, const GpuArch* arch = nullptr);

}  // namespace tune
