#include "codegen/gpu_library.h"

#include <filesystem>
#include <map>
#include <set>

#include "codegen/llvm/c_identifier.h"
#include "codegen/llvm/cpu_backend.h"
#include "codegen/llvm/gpu_launch.h"
#include "codegen/llvm/host_stub.h"
#include "common/extern_kernels.h"
#include "common/files.h"
#include "common/runtime_libs.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

namespace fs = std::filesystem;

// libtune_gpurt.so in the runtime folder, or NotFound naming it.
absl::StatusOr<std::string> GpuRuntimePath() {
  return TuneRuntimePath(kGpuRuntimeLibrary, "tune_gpurt", "the GPU runtime");
}

// The device module and one host stub per GPU kernel: the stubs' object.
absl::StatusOr<std::string> DeviceObject(const Target& target,
                                         const std::vector<ir::LoweredFunc>& device,
                                         const GpuModuleEmitter& emit, GpuLibraryBinary& out) {
  GpuCodegenOptions options;
  options.target = target;
  ASSIGN_OR_RETURN(GpuModule module, emit(device, options));
  const bool cuda = target.kind == TargetKind::kCuda;
  const CodeFormat want = cuda ? CodeFormat::kPtx : CodeFormat::kHsaco;
  if (module.format != want) {
    return absl::InternalError(StrCat("the GPU backend returned ", CodeFormatName(module.format),
                                      " for target '", target.ToString(), "', expected ",
                                      CodeFormatName(want)));
  }
  std::map<std::string, GpuLaunch> launches;
  for (const GpuKernel& kernel : module.kernels) {
    launches[kernel.name] = kernel.launch;
  }
  HostStubModule stubs;
  stubs.api = cuda ? GpuApi::kCuda : GpuApi::kHip;
  for (const ir::LoweredFunc& func : device) {
    auto it = launches.find(func.name);
    if (it == launches.end()) {
      return absl::InternalError(
          StrCat("the GPU backend's module has no kernel '", func.name, "'"));
    }
    // The kernel keeps the function's name: its entry symbol lives in the image, not among the
    // library's host symbols.
    HostStub stub{func.name, func.name, static_cast<int>(func.params.size()), it->second};
    for (uint32_t arg : it->second.zeroed_args) {
      if (arg >= func.param_elements.size()) {
        return absl::InvalidArgumentError(StrCat(
            "GPU kernel '", func.name, "' accumulates into its parameter ", func.params[arg].name(),
            " with atomic adds, but the parameter's size is not known (set "
            "LoweredFunc::param_elements)"));
      }
      stub.zeroed_bytes.push_back(static_cast<uint64_t>(func.param_elements[arg]) * 4);
    }
    stubs.stubs.push_back(std::move(stub));
    out.kernels.push_back({func.name, it->second});
  }
  stubs.image = module.code;
  std::string stub_ir;
  ASSIGN_OR_RETURN(std::string object, EmitHostStubObject(stubs, &stub_ir));
  out.device_format = module.format;
  out.device_code = std::move(module.code);
  StrAppend(&out.llvm_ir, "; ----- device module (", target.ToString(), ") -----\n", module.llvm_ir,
            "\n; ----- host stubs -----\n", stub_ir);
  return object;
}

}  // namespace

bool IsGpuKernel(const ir::LoweredFunc& func) { return HasGpuLoops(func.body); }

absl::StatusOr<GpuLibraryBinary> LinkGpuLibrary(const Target& target,
                                                const std::vector<ir::LoweredFunc>& funcs,
                                                const std::string& soname,
                                                const GpuModuleEmitter& emit,
                                                const GpuLibraryExtras& extras) {
  if (target.kind != TargetKind::kCuda && target.kind != TargetKind::kRocm) {
    return absl::InvalidArgumentError(StrCat("target '", target.ToString(),
                                             "': GPU libraries are built for 'cuda -arch=sm_NN' "
                                             "or 'rocm -mcpu=gfxNNN' targets"));
  }
  if (funcs.empty()) {
    return absl::InvalidArgumentError("no kernels to link into a GPU library");
  }
  std::set<std::string> names;
  std::vector<ir::LoweredFunc> device;
  std::vector<ir::LoweredFunc> host;
  std::vector<std::string> symbols;
  for (const ir::LoweredFunc& func : funcs) {
    if (!IsCIdentifier(func.name) || !names.insert(func.name).second) {
      return absl::InvalidArgumentError(StrCat(
          "function name '", func.name, "' must be a C identifier used once in the library"));
    }
    if (!IsGpuKernel(func) && !func.stream_param.defined()) {
      // Every function of a GPU library has the GPU host ABI: a host kernel takes the stream.
      return absl::InvalidArgumentError(
          StrCat("function '", func.name,
                 "' is host code without a stream parameter (LoweredFunc::stream_param): a GPU "
                 "library's functions take (device pointers..., void* stream)"));
    }
    (IsGpuKernel(func) ? device : host).push_back(func);
    symbols.push_back(func.name);
  }

  GpuLibraryBinary out;
  std::vector<std::string> objects;
  std::vector<std::string> link_args = {StrCat("--soname=", soname)};
  std::set<std::string> rpaths = {"$ORIGIN"};
  if (!device.empty()) {
    ASSIGN_OR_RETURN(std::string object, DeviceObject(target, device, emit, out));
    objects.push_back(std::move(object));
    ASSIGN_OR_RETURN(std::string runtime, GpuRuntimePath());
    link_args.push_back(runtime);
    rpaths.insert(fs::path(runtime).parent_path().string());
    out.needed_libs.push_back(kGpuRuntimeLibrary);
  }
  if (!host.empty()) {
    // Library kernels: host code with the GPU host ABI (LoweredFunc::stream_param becomes the
    // last parameter), calling a vendor library through tune's runtime shim, which is linked
    // like a CPU library's (DT_NEEDED, found through RUNPATH); other external libraries are the
    // caller's.
    CpuCodegenOptions cpu;
    cpu.cpu = "x86-64";
    std::string host_ir;
    ASSIGN_OR_RETURN(std::string object, EmitCpuObject(host, cpu, &host_ir));
    objects.push_back(std::move(object));
    StrAppend(&out.llvm_ir, "; ----- host kernels -----\n", host_ir);
    std::set<std::string> external;
    for (const ir::LoweredFunc& func : host) {
      external.insert(func.external_libs.begin(), func.external_libs.end());
    }
    for (const std::string& lib : external) {
      const RuntimeLibrary* runtime = FindRuntimeLibraryByShim(lib);
      if (runtime == nullptr) {
        out.external_libs.push_back(lib);
        continue;
      }
      ASSIGN_OR_RETURN(std::string path, RuntimeLibraryPath(*runtime));
      link_args.push_back(path);
      rpaths.insert(fs::path(path).parent_path().string());
      out.needed_libs.push_back(std::string(runtime->shim_file));
    }
  }
  for (const std::string& rpath : rpaths) {
    link_args.push_back(StrCat("-rpath=", rpath));
  }
  objects.insert(objects.end(), extras.objects.begin(), extras.objects.end());
  link_args.insert(link_args.end(), extras.link_args.begin(), extras.link_args.end());
  out.needed_libs.insert(out.needed_libs.end(), extras.needed_libs.begin(),
                         extras.needed_libs.end());

  ASSIGN_OR_RETURN(TempDir dir, TempDir::Create("tune-gpu-build-"));
  std::vector<std::string> object_paths;
  for (size_t i = 0; i < objects.size(); ++i) {
    object_paths.push_back(dir.File(StrCat("part", i, ".o")));
    RETURN_IF_ERROR(WriteFileAtomically(object_paths.back(), objects[i]));
  }
  const std::string so_path = dir.File("library.so");
  std::vector<std::string> linker_runtime;  // libgomp: never for GPU libraries' code
  RETURN_IF_ERROR(LinkSharedObject(object_paths, link_args, so_path, &linker_runtime));
  out.needed_libs.insert(out.needed_libs.end(), linker_runtime.begin(), linker_runtime.end());
  for (const std::string& symbol : symbols) {
    ASSIGN_OR_RETURN(bool defined, ElfDefinesSymbol(so_path, symbol));
    if (!defined) {
      return absl::InternalError(StrCat("the linked GPU library does not define ", symbol));
    }
  }
  ASSIGN_OR_RETURN(out.shared_object, ReadFile(so_path));
  return out;
}

}  // namespace tune
