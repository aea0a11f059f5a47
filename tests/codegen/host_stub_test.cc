// Host stubs of GPU kernel libraries (codegen/llvm/host_stub.h) with thread-block clusters and
// TMA tensor maps: the descriptors as private constants and the call of tune_gpurt_launch_ex,
// read from the stubs' LLVM IR; the refusals of what the runtime could never launch.
#include "codegen/llvm/host_stub.h"

#include <string>

#include "gtest/gtest.h"

namespace tune {
namespace {

constexpr char kPtx[] = ".version 8.0\n.target sm_90a\n.address_size 64\n";

GpuTensorMap HalfTiles(uint32_t arg) {
  GpuTensorMap map;
  map.arg = arg;
  map.element_bytes = 2;
  map.rank = 2;
  map.dims = {256, 128, 1, 1, 1};
  map.strides = {512, 0, 0, 0};
  map.box = {64, 32, 1, 1, 1};
  map.swizzle_bytes = 128;
  return map;
}

HostStub Stub(const std::string& name) {
  HostStub stub;
  stub.func_name = name;
  stub.kernel_name = name + "_kernel";
  stub.num_args = 3;
  stub.launch.grid = {4, 8, 1};
  stub.launch.block = {128, 1, 1};
  stub.launch.dynamic_shared_bytes = 32768;
  return stub;
}

absl::StatusOr<std::string> Ir(const HostStubModule& module) {
  std::string ir;
  absl::StatusOr<std::string> object = EmitHostStubObject(module, &ir);
  if (!object.ok()) {
    return object.status();
  }
  return ir;
}

TEST(HostStub, AKernelWithTensorMapsAndAClusterCallsLaunchExWithItsDescriptors) {
  HostStubModule module;
  module.image = kPtx;
  HostStub tma = Stub("gemm_tma");
  tma.launch.tensor_maps = {HalfTiles(0), HalfTiles(1)};
  tma.launch.cluster = {2, 1, 1};
  module.stubs = {tma, Stub("plain")};
  absl::StatusOr<std::string> ir = Ir(module);
  ASSERT_TRUE(ir.ok()) << ir.status();

  // The descriptors: struct_bytes 160, arg, element_bytes, rank, dims, strides, box, swizzle,
  // im2col, the corners and the element strides.
  EXPECT_NE(
      ir->find("@gemm_tma.tensor_maps = private unnamed_addr constant [2 x "
               "%tune_gpurt_tensor_map] [%tune_gpurt_tensor_map { i32 160, i32 0, i32 2, "
               "i32 2, [5 x i64] [i64 256, i64 128, i64 1, i64 1, i64 1], [4 x i64] [i64 "
               "512, i64 0, i64 0, i64 0], [5 x i32] [i32 64, i32 32, i32 1, i32 1, i32 1], "
               "i32 128, i32 0, [3 x i32] zeroinitializer, [3 x i32] zeroinitializer, [5 x "
               "i32] [i32 1, i32 1, i32 1, i32 1, i32 1] }, %tune_gpurt_tensor_map { i32 160, "
               "i32 1,"),
      std::string::npos)
      << *ir;
  EXPECT_NE(ir->find("@gemm_tma.cluster = private unnamed_addr constant [3 x i32] [i32 2, i32 1, "
                     "i32 1]"),
            std::string::npos)
      << *ir;
  EXPECT_NE(ir->find("call i32 @tune_gpurt_launch_ex(ptr @tune_gpu_module, ptr @gemm_tma.kernel, "
                     "ptr @gemm_tma.grid, ptr @gemm_tma.block, ptr @gemm_tma.cluster, i32 32768, "
                     "ptr %stream, ptr %args, i32 3, ptr @gemm_tma.tensor_maps, i32 2)"),
            std::string::npos)
      << *ir;
  // The other kernel keeps the plain launch.
  EXPECT_NE(ir->find("call i32 @tune_gpurt_launch(ptr @tune_gpu_module, ptr @plain.kernel"),
            std::string::npos)
      << *ir;
  EXPECT_EQ(ir->find("@plain.cluster"), std::string::npos) << *ir;
}

TEST(HostStub, AClusterWithoutTensorMapsPassesNoDescriptors) {
  HostStubModule module;
  module.image = kPtx;
  HostStub stub = Stub("clustered");
  stub.launch.cluster = {1, 4, 1};
  module.stubs = {stub};
  absl::StatusOr<std::string> ir = Ir(module);
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_NE(ir->find("ptr %args, i32 3, ptr null, i32 0)"), std::string::npos) << *ir;
}

TEST(HostStub, KernelsWithoutMapsOrClusterNeverReferenceLaunchEx) {
  HostStubModule module;
  module.image = kPtx;
  module.stubs = {Stub("plain")};
  absl::StatusOr<std::string> ir = Ir(module);
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_EQ(ir->find(kGpuLaunchExSymbol), std::string::npos) << *ir;
}

TEST(HostStub, ATensorMapThatBreaksTheEncodingRulesIsRefusedNamingIt) {
  HostStubModule module;
  module.image = kPtx;
  HostStub stub = Stub("bad_map");
  stub.launch.tensor_maps = {HalfTiles(0)};
  stub.launch.tensor_maps[0].box[0] = 128;  // 256 bytes: wider than the 128-byte swizzle
  module.stubs = {stub};
  absl::StatusOr<std::string> ir = Ir(module);
  ASSERT_FALSE(ir.ok());
  EXPECT_EQ(ir.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(ir.status().message().find("host stub 'bad_map': tensor map over argument 0"),
            std::string::npos)
      << ir.status();
  EXPECT_NE(ir.status().message().find("exceeds the 128-byte swizzle span"), std::string::npos)
      << ir.status();

  stub.launch.tensor_maps = {HalfTiles(3)};
  module.stubs = {stub};
  ir = Ir(module);
  ASSERT_FALSE(ir.ok());
  EXPECT_NE(ir.status().message().find("argument 3 is not one of the kernel's 3 arguments"),
            std::string::npos)
      << ir.status();
}

TEST(HostStub, AClusterThatDoesNotDivideTheGridOrIsTooLargeIsRefused) {
  HostStubModule module;
  module.image = kPtx;
  HostStub stub = Stub("bad_cluster");
  stub.launch.cluster = {3, 1, 1};
  module.stubs = {stub};
  absl::StatusOr<std::string> ir = Ir(module);
  ASSERT_FALSE(ir.ok());
  EXPECT_NE(ir.status().message().find("cluster.x = 3 does not divide grid.x = 4"),
            std::string::npos)
      << ir.status();
  module.stubs[0].launch.cluster = {2, 8, 1};
  ir = Ir(module);
  ASSERT_FALSE(ir.ok());
  EXPECT_NE(ir.status().message().find("portable maximum of 8 blocks"), std::string::npos)
      << ir.status();
}

TEST(HostStub, TensorMapsAndClustersForHipAreRefusedAsCudaOnly) {
  HostStubModule module;
  module.api = GpuApi::kHip;
  module.image = "\177ELF code object";
  HostStub stub = Stub("hip_tma");
  stub.launch.tensor_maps = {HalfTiles(0)};
  module.stubs = {stub};
  absl::StatusOr<std::string> ir = Ir(module);
  ASSERT_FALSE(ir.ok());
  EXPECT_NE(ir.status().message().find("CUDA-only"), std::string::npos) << ir.status();
}

}  // namespace
}  // namespace tune
