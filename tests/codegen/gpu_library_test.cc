// GPU kernel libraries (codegen/gpu_library.h, codegen/llvm/host_stub.h): what tune-compile
// builds for cuda and rocm targets, checked without a GPU: the exported functions, the runtime
// they need, the embedded device code, the header, and the documented failure of a call on a
// machine without the driver.
#include "codegen/gpu_library.h"

#include <dlfcn.h>
#include <elf.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "codegen/compiler.h"
#include "common/extern_kernels.h"
#include "common/files.h"
#include "common/runtime_libs.h"
#include "gtest/gtest.h"

namespace tune {
namespace {

namespace fs = std::filesystem;

// The sections and dynamic entries of an ELF64 file, read the plain way.
struct ElfView {
  std::string bytes;

  template <typename T>
  const T* At(uint64_t offset) const {
    return reinterpret_cast<const T*>(bytes.data() + offset);
  }
  const Elf64_Ehdr* header() const { return At<Elf64_Ehdr>(0); }
  const Elf64_Shdr* Section(int i) const {
    return At<Elf64_Shdr>(header()->e_shoff + i * header()->e_shentsize);
  }
  std::optional<std::string> SectionData(const std::string& name) const {
    const Elf64_Shdr* names = Section(header()->e_shstrndx);
    for (int i = 0; i < header()->e_shnum; ++i) {
      const Elf64_Shdr* s = Section(i);
      if (name == At<char>(names->sh_offset + s->sh_name)) {
        return bytes.substr(s->sh_offset, s->sh_size);
      }
    }
    return std::nullopt;
  }
  // The strings of every dynamic entry with `tag` (DT_NEEDED, DT_RUNPATH, DT_SONAME).
  std::vector<std::string> Dynamic(int64_t tag) const {
    std::optional<std::string> dynamic = SectionData(".dynamic");
    std::optional<std::string> strings = SectionData(".dynstr");
    std::vector<std::string> out;
    if (!dynamic || !strings) {
      return out;
    }
    const auto* entries = reinterpret_cast<const Elf64_Dyn*>(dynamic->data());
    for (size_t i = 0; i < dynamic->size() / sizeof(Elf64_Dyn); ++i) {
      if (entries[i].d_tag == tag) {
        out.push_back(strings->c_str() + entries[i].d_un.d_val);
      }
    }
    return out;
  }
};

ElfView ReadElf(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFile(path);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_GE(bytes.value_or("").size(), sizeof(Elf64_Ehdr));
  return ElfView{bytes.value_or(std::string(sizeof(Elf64_Ehdr), '\0'))};
}

class GpuLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<TempDir> dir = TempDir::Create("gpu-library-test-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = std::make_unique<TempDir>(*std::move(dir));
  }

  // Builds `workloads` with default configs for `target` into lib<stem>.so + <stem>.h.
  LibraryResult Build(const std::string& target_text, const std::vector<std::string>& workloads,
                      const std::string& stem) {
    absl::StatusOr<Target> target = Target::Parse(target_text);
    EXPECT_TRUE(target.ok()) << target.status();
    std::vector<KernelRequest> requests;
    for (const std::string& text : workloads) {
      absl::StatusOr<Workload> workload = Workload::Parse(text);
      EXPECT_TRUE(workload.ok()) << workload.status();
      requests.push_back({*workload, "", std::nullopt, ""});
    }
    Compiler compiler(Catalog::BuiltIn(), *target);
    absl::StatusOr<LibraryResult> result =
        compiler.BuildLibrary(requests, dir_->File("lib" + stem + ".so"), dir_->File(stem + ".h"));
    EXPECT_TRUE(result.ok()) << result.status();
    return result.value_or(LibraryResult{});
  }

  std::unique_ptr<TempDir> dir_;
};

TEST_F(GpuLibraryTest, CudaLibraryExportsEveryKernelAndNeedsTheGpuRuntime) {
  LibraryResult result =
      Build("cuda -arch=sm_90", {"gemm:M=64,N=64,K=64", "gemm:M=100,N=70,K=33,epilogue=bias"}, "k");
  ASSERT_EQ(result.kernels.size(), 2u);
  for (const LibraryKernel& k : result.kernels) {
    absl::StatusOr<bool> defined = ElfDefinesSymbol(result.so_path, k.func_name);
    ASSERT_TRUE(defined.ok()) << defined.status();
    EXPECT_TRUE(*defined) << k.func_name;
  }
  ElfView elf = ReadElf(result.so_path);
  EXPECT_EQ(elf.header()->e_machine, EM_X86_64);
  EXPECT_EQ(elf.Dynamic(DT_NEEDED), std::vector<std::string>{"libtune_gpurt.so"});
  EXPECT_EQ(result.needed_libs, std::vector<std::string>{"libtune_gpurt.so"});
  std::vector<std::string> runpath = elf.Dynamic(DT_RUNPATH);
  ASSERT_EQ(runpath.size(), 1u);
  EXPECT_NE(runpath[0].find("$ORIGIN"), std::string::npos);
  EXPECT_NE(runpath[0].find(RuntimeLibraryDir()), std::string::npos) << runpath[0];
  EXPECT_EQ(elf.Dynamic(DT_SONAME), std::vector<std::string>{"libk.so"});
}

TEST_F(GpuLibraryTest, AKernelThatSplitsItsReductionAcrossBlocksZeroesItsOutputFirst) {
  // The default for 1024^3 shares each 128 x 128 tile's reduction between two blocks.
  LibraryResult result = Build("cuda -arch=sm_90", {"gemm:M=1024,N=1024,K=1024"}, "splitk");
  ASSERT_EQ(result.kernels.size(), 1u);
  EXPECT_EQ(result.kernels[0].choice.config.at("gridk"), 2);
  // C (argument 2) is zeroed on the caller's stream before the launch: 1024 * 1024 floats.
  EXPECT_NE(result.llvm_ir.find("call i32 @tune_gpurt_zero(ptr @tune_gpu_module, ptr %p2, i64 "
                                "4194304, ptr %stream)"),
            std::string::npos)
      << result.llvm_ir;
  EXPECT_NE(result.llvm_ir.find("atomicrmw fadd ptr addrspace(1)"), std::string::npos);
  absl::StatusOr<std::string> header = ReadFile(result.header_path);
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_NE(header->find("zeroed_args=2"), std::string::npos) << *header;
}

TEST_F(GpuLibraryTest, CudaLibraryEmbedsOnePtxModuleWithEveryKernel) {
  LibraryResult result =
      Build("cuda -arch=sm_90", {"gemm:M=64,N=64,K=64", "gemm:M=100,N=70,K=33,epilogue=bias"}, "k");
  std::optional<std::string> image = ReadElf(result.so_path).SectionData(".tune_gpu_image");
  ASSERT_TRUE(image.has_value());
  ASSERT_FALSE(image->empty());
  EXPECT_EQ(image->back(), '\0') << "PTX is handed to the driver as a C string";
  EXPECT_NE(image->find(".target sm_90"), std::string::npos);
  for (const LibraryKernel& k : result.kernels) {
    EXPECT_NE(image->find(".entry " + k.func_name + "("), std::string::npos) << k.func_name;
  }

  const char* ptxas = "/usr/local/cuda/bin/ptxas";
  if (access(ptxas, X_OK) != 0) {
    GTEST_SKIP() << ptxas << " is not installed: the PTX is not assembled";
  }
  std::string ptx_path = dir_->File("image.ptx");
  ASSERT_TRUE(WriteFileAtomically(ptx_path, image->substr(0, image->size() - 1)).ok());
  std::string command = std::string(ptxas) + " -arch=sm_90 " + ptx_path + " -o /dev/null";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

TEST_F(GpuLibraryTest, RocmLibraryEmbedsAnAmdgpuCodeObject) {
  LibraryResult result = Build("rocm -mcpu=gfx90a", {"gemm:M=64,N=64,K=64"}, "r");
  ElfView elf = ReadElf(result.so_path);
  EXPECT_EQ(elf.Dynamic(DT_NEEDED), std::vector<std::string>{"libtune_gpurt.so"});
  std::optional<std::string> image = elf.SectionData(".tune_gpu_image");
  ASSERT_TRUE(image.has_value());
  ASSERT_GE(image->size(), sizeof(Elf64_Ehdr));
  ElfView code{*image};
  EXPECT_EQ(std::memcmp(code.header()->e_ident, ELFMAG, SELFMAG), 0);
  EXPECT_EQ(code.header()->e_machine, 224) << "EM_AMDGPU";
  EXPECT_NE(image->find(result.kernels[0].func_name + ".kd"), std::string::npos)
      << "the kernel descriptor symbol";
}

TEST_F(GpuLibraryTest, HeaderDocumentsDevicePointersTheStreamAndReturnCodes) {
  LibraryResult result = Build("cuda -arch=sm_90", {"gemm:M=100,N=70,K=33,epilogue=bias"}, "k");
  absl::StatusOr<std::string> header = ReadFile(result.header_path);
  ASSERT_TRUE(header.ok()) << header.status();
  EXPECT_NE(header->find("int tune_gemm_M100_N70_K33_bias(const float* A, const float* B, const "
                         "float* bias, float* C, void* stream);"),
            std::string::npos)
      << *header;
  EXPECT_NE(header->find("DEVICE pointers"), std::string::npos);
  EXPECT_NE(header->find("NULL is the legacy default stream"), std::string::npos);
  EXPECT_NE(header->find("#define TUNE_GPURT_ERROR_DRIVER_NOT_FOUND -1"), std::string::npos);
  EXPECT_NE(header->find("const char* tune_gpurt_last_error(void);"), std::string::npos);
  EXPECT_NE(header->find("launch grid=("), std::string::npos);
  EXPECT_NE(header->find("thread-safely"), std::string::npos);
}

TEST_F(GpuLibraryTest, CallWithoutTheDriverReturnsDriverNotFoundNamingIt) {
  LibraryResult result = Build("cuda -arch=sm_90", {"gemm:M=64,N=64,K=64"}, "k");
  // A driver name that exists nowhere: the same answer on machines with and without a GPU.
  setenv("TUNE_GPURT_DRIVER", "libtune_test_no_such_driver.so.1", 1);
  void* lib = dlopen(result.so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  using Kernel = int (*)(const float*, const float*, float*, void*);
  using LastError = const char* (*)();
  auto kernel = reinterpret_cast<Kernel>(dlsym(lib, "tune_gemm_M64_N64_K64"));
  auto last_error = reinterpret_cast<LastError>(dlsym(lib, "tune_gpurt_last_error"));
  ASSERT_NE(kernel, nullptr);
  ASSERT_NE(last_error, nullptr) << "resolved through the library's DT_NEEDED";
  EXPECT_EQ(kernel(nullptr, nullptr, nullptr, nullptr), -1);
  EXPECT_NE(std::string(last_error()).find("libtune_test_no_such_driver.so.1"), std::string::npos)
      << last_error();
  EXPECT_NE(std::string(last_error()).find("CUDA driver library not found"), std::string::npos)
      << last_error();
  unsetenv("TUNE_GPURT_DRIVER");
  dlclose(lib);
}

// A GPU vector add in the GPU loop convention: c[i] = a[i] + b[i], 4 blocks of 64 threads.
ir::LoweredFunc VectorAdd(const std::string& name) {
  ir::Buffer a("a"), b("b"), c("c");
  ir::Var block = ir::Variable::Make("bx");
  ir::Var thread = ir::Variable::Make("tx");
  ir::Expr i = ir::Expr(block) * 64 + ir::Expr(thread);
  ir::Stmt body = ir::For::Make(
      block, 0, 4, ir::LoopKind::kGpuBlock,
      ir::For::Make(thread, 0, 64, ir::LoopKind::kGpuThread, ir::Store::Make(c, i, a(i) + b(i))));
  return ir::LoweredFunc{name, {a, b, c}, body};
}

// Host code with the GPU host ABI (a serial loop standing in for a library kernel's host side,
// for the link only; `stream` makes it take the stream parameter).
ir::LoweredFunc HostCopy(const std::string& name, bool stream = true) {
  ir::Buffer a("a"), b("b");
  ir::Var i = ir::Variable::Make("i");
  ir::LoweredFunc func{
      name, {a, b}, ir::For::Make(i, 0, 8, ir::LoopKind::kSerial, ir::Store::Make(b, i, a(i)))};
  if (stream) {
    func.stream_param = ir::Variable::Make("stream");
  }
  return func;
}

TEST(GpuLibraryLinkTest, GpuAndHostKernelsLinkIntoOneLibrary) {
  absl::StatusOr<Target> target = Target::Parse("cuda -arch=sm_90");
  ASSERT_TRUE(target.ok());
  std::vector<ir::LoweredFunc> funcs = {VectorAdd("vadd"), HostCopy("host_copy"),
                                        VectorAdd("vadd2")};
  EXPECT_TRUE(IsGpuKernel(funcs[0]));
  EXPECT_FALSE(IsGpuKernel(funcs[1]));
  absl::StatusOr<GpuLibraryBinary> binary =
      LinkGpuLibrary(*target, funcs, "libmixed.so", EmitGpuModule);
  ASSERT_TRUE(binary.ok()) << binary.status();
  ASSERT_EQ(binary->kernels.size(), 2u) << "only the GPU kernels have launch geometry";
  EXPECT_EQ(binary->kernels[0].name, "vadd");
  EXPECT_EQ(binary->kernels[0].launch.grid, (std::array<uint32_t, 3>{4, 1, 1}));
  EXPECT_EQ(binary->kernels[0].launch.block, (std::array<uint32_t, 3>{64, 1, 1}));
  EXPECT_NE(binary->device_code.find(".entry vadd("), std::string::npos);
  EXPECT_NE(binary->device_code.find(".entry vadd2("), std::string::npos);
  EXPECT_EQ(binary->device_code.find("host_copy"), std::string::npos)
      << "host code stays out of the device module";

  TempDir dir = *TempDir::Create("gpu-library-test-");
  ASSERT_TRUE(WriteFileAtomically(dir.File("libmixed.so"), binary->shared_object).ok());
  for (const char* symbol : {"vadd", "vadd2", "host_copy"}) {
    absl::StatusOr<bool> defined = ElfDefinesSymbol(dir.File("libmixed.so"), symbol);
    ASSERT_TRUE(defined.ok()) << defined.status();
    EXPECT_TRUE(*defined) << symbol;
  }
}

TEST(GpuLibraryLinkTest, AnAtomicallyAccumulatedArgumentOfUnknownSizeIsRefusedNamingIt) {
  absl::StatusOr<Target> target = Target::Parse("cuda -arch=sm_90");
  ASSERT_TRUE(target.ok());
  ir::Buffer a("A"), c("C");
  ir::Var bx("bx"), tx("tx");
  ir::LoweredFunc sum{
      "sum",
      {a, c},
      ir::For::Make(bx, 0, 4, ir::LoopKind::kGpuBlock,
                    ir::For::Make(tx, 0, 64, ir::LoopKind::kGpuThread,
                                  ir::Store::MakeAtomicAdd(c, 0, a(bx * 64 + tx))))};
  absl::StatusOr<GpuLibraryBinary> binary =
      LinkGpuLibrary(*target, {sum}, "libx.so", EmitGpuModule);
  ASSERT_FALSE(binary.ok());
  EXPECT_EQ(binary.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(binary.status().message().find("parameter C"), std::string::npos) << binary.status();
  sum.param_elements = {256, 1};
  EXPECT_TRUE(LinkGpuLibrary(*target, {sum}, "libx.so", EmitGpuModule).ok());
}

TEST(GpuLibraryLinkTest, HostCodeWithoutAStreamParameterIsRefused) {
  absl::StatusOr<Target> target = Target::Parse("cuda -arch=sm_90");
  ASSERT_TRUE(target.ok());
  absl::StatusOr<GpuLibraryBinary> binary =
      LinkGpuLibrary(*target, {HostCopy("plain", false)}, "libx.so", EmitGpuModule);
  ASSERT_FALSE(binary.ok());
  EXPECT_EQ(binary.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(binary.status().message().find("'plain'"), std::string::npos);
  EXPECT_NE(binary.status().message().find("stream"), std::string::npos);
}

TEST(GpuLibraryLinkTest, CpuTargetIsRefusedNamingTheAcceptedForms) {
  absl::StatusOr<GpuLibraryBinary> binary =
      LinkGpuLibrary(Target{}, {VectorAdd("vadd")}, "libx.so", EmitGpuModule);
  ASSERT_FALSE(binary.ok());
  EXPECT_EQ(binary.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(binary.status().message().find("cuda -arch=sm_NN"), std::string::npos);
}

TEST(GpuLibraryLinkTest, MissingGpuRuntimeIsNotFoundNamingIt) {
  absl::StatusOr<Target> target = Target::Parse("rocm -mcpu=gfx90a");
  ASSERT_TRUE(target.ok());
  setenv("TUNE_RUNTIME_DIR", "/nonexistent-tune-runtime", 1);
  absl::StatusOr<GpuLibraryBinary> binary =
      LinkGpuLibrary(*target, {VectorAdd("vadd")}, "libx.so", EmitGpuModule);
  unsetenv("TUNE_RUNTIME_DIR");
  ASSERT_FALSE(binary.ok());
  EXPECT_EQ(binary.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(binary.status().message().find("/nonexistent-tune-runtime/libtune_gpurt.so"),
            std::string::npos)
      << binary.status();
}

}  // namespace
}  // namespace tune
