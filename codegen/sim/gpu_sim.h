// A CPU simulator of GPU kernels written in the loop IR (test infrastructure of codegen): it
// runs a kernel's `ir::LoweredFunc` on host buffers with the GPU execution model, so that GPU
// schedule templates can be checked for correctness on machines without a GPU.
//
// The kernel has the GPU loop shape of codegen's GPU convention (block loops outermost,
// gpu_shared allocations between block and thread loops, thread loops, per-thread code); IR
// before or after the lowering pipeline is accepted, and so is CPU IR without GPU loops (it
// runs as a single thread, its parallel loops one iteration after the other; AMX tile
// instructions run on the thread's eight tiles, sim/interpreter_amx.cc, so that the AMX
// templates are checked on CPUs without AMX). Execution model:
//   - blocks run one after the other (or spread over `GpuSimOptions::block_workers` threads);
//     a kernel with thread-block clusters along x (LoweredFunc::cluster) runs each cluster's
//     blocks together, their threads as one set of fibers, so that a multicast TensorCopy lands
//     in each block of its mask, an arrival reaches a peer's mbarrier and a cluster barrier
//     waits for every thread of the cluster (reaching a block whose threads have finished is a
//     fault);
//   - the threads of a block (the product of the thread loop extents, at most
//     `max_threads_per_block`) run the per-thread code as cooperative fibers switched at each
//     Barrier: a Barrier is a rendezvous of every thread of the block (a named one, of as many
//     threads of the block as it names, whose accesses the race checks order among themselves
//     only); a fiber that waits at an mbarrier (ir::MBarrierOp) is switched out until the phase
//     it waits for completes, and a TensorCopy lands when its thread issues it;
//   - gpu_shared allocations are per block, gpu_local and stack allocations per thread, and all
//     of them start filled with NaN (a read of an unwritten element poisons the result);
//   - integers as the IR defines them (int64/int32 wrap-around, floor Div/Mod), floats as
//     float32, Fma as std::fma on float; storage types (float16, bfloat16, int8, uint8, 8-bit
//     floats) in their own bytes, converted by casts as common/element_type.h does.
//
// Errors (absl::Status, naming the block and thread): an out-of-bounds access to any buffer
// (naming the buffer, the index and the size), a Barrier not reached by every thread of the
// block (some threads finished while others wait, or threads wait at different barriers), a
// named barrier that fewer threads can reach than it names, more reach at once, or part of a
// warp reaches, an mbarrier wait that nothing can complete (a deadlock), a read of a gpu_shared
// element no thread has written yet, a data race on gpu_shared memory (two threads of a block
// touch one element between two barriers and one of them writes), a GPU loop shape outside the
// convention, division by zero, and CallExtern / AddressOf (external calls are not simulated).
// Atomic adds and FetchAdds are atomic across blocks; a workspace (a global Allocate outside the
// block loops) starts zeroed, as a loaded module's, and lives for one run.
// Not modelled: memory coalescing, bank conflicts, timing, warps, races on global memory.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "codegen/ir/ir.h"
#include "common/workload.h"

namespace tune {

struct GpuSimOptions {
  /// Threads that run blocks concurrently (1: blocks run one after the other on the caller's
  /// thread). Results do not depend on it for race-free kernels.
  int block_workers = 1;
  /// Most threads a block may have (the product of the thread loop extents).
  int64_t max_threads_per_block = 1024;
  /// Report a read of a gpu_shared element that no thread of the block has written. Kernels
  /// whose threads read unwritten elements and discard the result (e.g. the out-of-range
  /// threads of a partial tile) turn it off: such reads give NaN, which poisons any output
  /// they reach.
  bool check_uninitialized_shared = true;
  /// Report two threads of a block accessing one gpu_shared element between two barriers where
  /// at least one access is a write.
  bool check_shared_races = true;
  /// How the threads of a block with barriers interleave. 0: each pass of the scheduler resumes
  /// them in order, each running until it must wait. Otherwise a seed: each pass resumes them in
  /// an order drawn from it, leaving each behind with probability 1/2, and a thread yields at
  /// every mbarrier wait, passed or not, so that the threads of a pipeline drift apart and
  /// interleave at its hand-offs as they may on the hardware. A kernel that relies on one thread
  /// running ahead of another fails (a wrong answer or a deadlock) under some seeds.
  uint64_t schedule_seed = 0;
};

/// Runs `func` on `args`, the host buffers of its parameters in order (the simulator's global
/// memory; each span's size bounds the accesses to that buffer). InvalidArgument for an
/// argument count that does not match the parameters and for IR outside the GPU convention;
/// FailedPrecondition for a kernel fault (out-of-bounds access, divergent barrier, shared
/// memory race or uninitialised read, integer division by zero, cast of NaN to an integer);
/// Unimplemented for external calls; ResourceExhausted for thread code with an expression
/// nested more than a few hundred levels deep (a fiber's stack bounds it). On error, the
/// buffers hold whatever the kernel wrote before the fault.
absl::Status RunGpuKernel(const ir::LoweredFunc& func, const std::vector<std::span<float>>& args,
                          const GpuSimOptions& options = {});
/// The same for parameters of any element type: each span holds a parameter's elements as
/// bytes (the element type is the parameter buffer's; loads decode and stores round exactly as
/// common/element_type.h does, so the simulator rounds like the reference).
absl::Status RunGpuKernel(const ir::LoweredFunc& func,
                          const std::vector<std::span<std::byte>>& args,
                          const GpuSimOptions& options = {});

/// Runs `func`, a kernel of `workload` (parameters in Workload::Arguments() order), on seeded
/// random inputs (common/reference.h's TensorSet; the output starts as NaN, or as zeros when the
/// kernel accumulates into it atomically, as a launcher zeroes it) and compares its
/// output with RunReference under CompareOutputs' tolerance. OK when they agree; the
/// simulator's error, or FailedPrecondition with CompareOutputs' message, otherwise.
absl::Status SimulateAgainstReference(const Workload& workload, const ir::LoweredFunc& func,
                                      uint64_t seed = 1, const GpuSimOptions& options = {});

}  // namespace tune
