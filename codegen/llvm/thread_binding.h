// Thread binding of parallel CPU kernels (llvm -bind=close|spread), emitted into the kernel's
// own module so that a kernel library needs nothing beyond libc and libgomp.
//
// Two internal functions, created once per module:
//   tune_bind_capture(): on its first call, records the CPUs the calling thread may use
//     (sched_getaffinity) as the set every later binding picks from; the caller of a parallel
//     loop calls it before forking, while it is still unbound.
//   tune_bind_thread(i32 tid, i32 threads): binds the calling team thread to its CPU of the
//     recorded set (close: the tid-th CPU, wrapping; spread: CPU tid * A / threads of the A
//     recorded), with sched_setaffinity, unless a thread-local record says it already is.
#pragma once

#include "common/target.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"

namespace tune::llvm_backend {

llvm::Function* ThreadBindingCapture(llvm::Module* module);
llvm::Function* ThreadBindingBind(llvm::Module* module, ThreadBinding binding);

}  // namespace tune::llvm_backend
