// AMX and Linux: the permission a process needs before it touches AMX's tile data, and the
// status a tune kernel returns where Linux refuses it. One place for the numbers that the CPU
// backend compiles into kernels, the C header documents, the measurement child asks with and
// workers report by.
//
// Linux (5.16 and later) enables AMX's tile data per process: a process asks once with
// arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); until then a tile instruction faults.
// A kernel without that support does not list the component (ARCH_GET_XCOMP_SUPP), and one
// that has it refuses where the process's signal stack cannot hold the state.
#pragma once

#include <cstdint>

#include "absl/status/status.h"

namespace tune {

/// What a tune kernel that uses AMX tiles returns when Linux refuses it the tile data; the C
/// header names it TUNE_CPU_ERROR_AMX_DENIED.
inline constexpr int32_t kAmxDeniedStatus = -20;

/// Linux x86-64's numbers for the request: arch_prctl's system call, the request for permission
/// to use an extended state component, the query of the components the kernel supports, and the
/// component of AMX's tile data.
inline constexpr int64_t kSysArchPrctl = 158;
inline constexpr int64_t kArchGetXcompSupp = 0x1021;
inline constexpr int64_t kArchReqXcompPerm = 0x1023;
inline constexpr int64_t kXfeatureXtiledata = 18;

/// Whether the running Linux kernel can enable AMX's tile data for a process (ARCH_GET_XCOMP_SUPP
/// lists the component). Asks without enabling anything.
bool KernelSupportsAmx();

/// Asks Linux for AMX's tile data in this process (once is enough; asking again is harmless).
/// FailedPrecondition naming the request and the kernel's error where it refuses.
absl::Status RequestAmx();

}  // namespace tune
