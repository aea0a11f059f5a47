// Extern micro-kernels: a user's GEMM micro-kernel in a shared library, described by a JSON
// manifest, that the *.ukernel templates call for every register block (seed 002's tensorize
// with an extern micro-kernel). Blocking, packing and the epilogue stay generated.
//
// A manifest (examples/ukernel/ukernel.json is the worked example):
//
//   {
//     "name": "example_ukernel",                  -libs= name, [a-z][a-z0-9_]*
//     "library": "libtune_example_ukernel.so",    file beside the manifest (or an absolute path)
//     "symbol": "example_sgemm_ukernel",          exported by the library
//     "role": "gemm_block",                       the only role so far
//     "mr": 8, "nr": 32,                          the register block, 1..64 each
//     "a_packing": "kc_by_mr",                    A panel: a[p*mr + i]
//     "b_packing": "kc_by_nr",                    B panel: b[p*nr + j]
//     "isa": "avx2",                              avx2 or avx512f: the least the library needs
//     "signature": "void example_sgemm_ukernel(int64_t kc, const float* a, const float* b,
//                   float* c, int64_t ldc, int32_t accumulate)"
//   }
//
// The role's contract: c[i*ldc + j] = (accumulate ? c[i*ldc + j] : 0) + sum over p < kc of
// a[p*mr + i] * b[p*nr + j], for i < mr and j < nr.
//
// A program that builds kernels (tune-daemon and its builder processes, tune-compile) loads the
// manifests it was given in main() into its catalog (codegen/templates/catalog.h), whose
// ParseTarget then accepts their names in -libs=.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tune {

struct ExternKernel {
  std::string name;           // as in -libs=
  std::string manifest_path;  // the file it came from
  std::string library_path;   // absolute path of the shared library
  std::string library_file;   // its file name, which workers must have preloaded
  std::string symbol;
  int mr = 0;
  int nr = 0;
  std::string isa;  // "avx2" or "avx512f"
};

/// Reads and checks a manifest. Every error is InvalidArgument naming the file, the field and
/// the accepted form: a missing or mistyped field, an unknown role, packing or ISA, a block size
/// out of range, a signature that is not the role's, a library that does not exist or is not
/// an ELF shared object, a symbol the library does not export. A manifest or library that
/// another user could have written (CheckTrustedPath with kCodeFileRule) is FailedPrecondition
/// naming its owner and mode and the fix.
absl::StatusOr<ExternKernel> LoadExternKernel(const std::string& manifest_path);

/// Loads every manifest (LoadExternKernel), sorted by name. Two manifests of one name, or a name
/// that is also a built-in library's, are InvalidArgument.
absl::StatusOr<std::vector<ExternKernel>> LoadExternKernels(
    const std::vector<std::string>& manifest_paths);

/// True when `path` is an ELF shared object whose dynamic symbol table defines `symbol`; an
/// error names the path and what is wrong with it.
absl::StatusOr<bool> ElfDefinesSymbol(const std::string& path, std::string_view symbol);

}  // namespace tune
