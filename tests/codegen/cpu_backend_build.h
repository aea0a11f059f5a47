// What the x86-64 backend tests share: lower, emit, link and dlopen a few LoweredFuncs, and call
// them.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "codegen/llvm/cpu_backend.h"
#include "codegen/lower.h"
#include "common/files.h"

namespace tune::testing {

using ir::LoweredFunc;

class SharedObject {
 public:
  explicit SharedObject(void* handle) : handle_(handle) {}
  ~SharedObject() {
    if (handle_ != nullptr) {
      dlclose(handle_);
    }
  }
  template <typename Fn>
  Fn* Get(const char* symbol) const {
    return reinterpret_cast<Fn*>(dlsym(handle_, symbol));
  }

 private:
  void* handle_;
};

// Lowers, emits, links into `dir` and dlopens. `llvm_ir` receives the optimised IR.
inline absl::StatusOr<std::unique_ptr<SharedObject>> Build(
    const std::vector<LoweredFunc>& funcs, const CpuCodegenOptions& options, const TempDir& dir,
    const std::string& stem, std::string* llvm_ir = nullptr,
    int dlopen_flags = RTLD_NOW | RTLD_LOCAL) {
  std::vector<LoweredFunc> lowered;
  for (const LoweredFunc& f : funcs) {
    absl::StatusOr<LoweredFunc> l = Lower(f);
    if (!l.ok()) {
      return l.status();
    }
    lowered.push_back(*std::move(l));
  }
  absl::StatusOr<std::string> object = EmitCpuObject(lowered, options, llvm_ir);
  if (!object.ok()) {
    return object.status();
  }
  std::string object_path = dir.File(stem + ".o");
  std::ofstream(object_path, std::ios::binary) << *object;
  std::string so_path = dir.File(stem + ".so");
  if (absl::Status s = LinkSharedObject({object_path}, {}, so_path); !s.ok()) {
    return s;
  }
  void* handle = dlopen(so_path.c_str(), dlopen_flags);
  if (handle == nullptr) {
    return absl::InternalError(dlerror());
  }
  return std::make_unique<SharedObject>(handle);
}

using Kernel1 = int32_t(float*);
using Kernel2 = int32_t(float*, float*);
using Kernel3 = int32_t(float*, float*, float*);

inline std::string ReadBytes(const std::string& path) { return ReadFile(path).value_or(""); }

inline std::vector<float> Iota(int64_t n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[static_cast<size_t>(i)] = scale * static_cast<float>((i * 7) % 13) - 3.0f;
  }
  return v;
}

}  // namespace tune::testing
