// Templates that call a user's micro-kernel (common/extern_kernels.h) for every register block:
//
//   gemm.cpu.ukernel     GotoBLAS blocking in generated IR: column blocks of nc, reduction blocks
//                        of kc, row blocks of mc (the order of the first two is a knob); B packed
//                        into kc x nr panels and A into kc x mr panels (zero-padded at the
//                        edges); the micro-kernel once per mr x nr block of C, straight into C
//                        when the block is whole and into a scratch block copied out at the
//                        edges; the epilogue (bias, ReLU) applied to each block after its last
//                        reduction block, while it is in cache.
//   conv2d.cpu.ukernel   the same per image, as an implicit GEMM: A is the weights (K x C*R*S),
//                        and B's panels are packed straight from the input (an im2col of kc x nr
//                        that never exists whole), with zeros for the padding.
//
// Knobs: mc, nc (multiples of the micro-kernel's mr and nr), kc, order. mr and nr come from the
// manifest. The templates apply to a target that names one of the catalog's micro-kernels in -libs=
// and whose CPU has the manifest's ISA; the kernel's LoweredFunc names the micro-kernel's library,
// which workers must have preloaded. -threads > 1 runs the row blocks (GEMM) or the images and
// row blocks (conv2d) in parallel.
#pragma once

#include "codegen/templates/template.h"
#include "common/extern_kernels.h"

namespace tune {

/// gemm.cpu.ukernel and conv2d.cpu.ukernel over one set of micro-kernels: a catalog's
/// (codegen/templates/catalog.h), which holds it for as long as its templates are used. Not
/// copyable: the templates' functions refer to the set.
class UkernelTemplates {
 public:
  explicit UkernelTemplates(std::vector<ExternKernel> kernels);
  UkernelTemplates(const UkernelTemplates&) = delete;
  UkernelTemplates& operator=(const UkernelTemplates&) = delete;

  /// The micro-kernels, by name.
  const std::vector<ExternKernel>& kernels() const { return kernels_; }
  /// The micro-kernel called `name`, or nullptr.
  const ExternKernel* Find(std::string_view name) const;
  /// The micro-kernel that `target` names in -libs= and whose ISA its CPU has, or nullptr.
  const ExternKernel* UkernelOf(const Target& target) const;

  const KernelTemplate& gemm() const { return gemm_; }
  const KernelTemplate& conv2d() const { return conv2d_; }

 private:
  std::vector<ExternKernel> kernels_;
  KernelTemplate gemm_;
  KernelTemplate conv2d_;
};

}  // namespace tune
