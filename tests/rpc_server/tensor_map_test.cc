// The measurement child's tensor maps (rpc_server/gpu/tensor_map.h): GpuTensorMap checked and
// turned into cuTensorMapEncodeTiled's arguments without a driver, refusals named.
#include "rpc_server/gpu/tensor_map.h"

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace tune::gpu {
namespace {

constexpr uint64_t kAddress = 0x7f0000001000;

GpuTensorMap TwoByTwoBoxesOfHalves() {
  GpuTensorMap map;
  map.arg = 0;
  map.element_bytes = 2;
  map.rank = 2;
  map.dims = {512, 256, 1, 1, 1};
  map.strides = {1024, 0, 0, 0};
  map.box = {64, 32, 1, 1, 1};
  map.swizzle_bytes = 128;
  return map;
}

std::string Refusal(const GpuTensorMap& map, uint32_t num_args = 3) {
  absl::StatusOr<tune_tensor_map_encoding> e = PrepareTensorMap(map, num_args, kAddress);
  EXPECT_FALSE(e.ok());
  if (e.ok()) {
    return "";
  }
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(e.status().message());
}

TEST(WorkerTensorMap, TheDescriptorCarriesEveryFieldAndItsSize) {
  const tune_gpurt_tensor_map d = ToRuntimeTensorMap(TwoByTwoBoxesOfHalves());
  EXPECT_EQ(d.struct_bytes, uint32_t{TUNE_GPURT_TENSOR_MAP_BYTES});
  EXPECT_EQ(d.element_bytes, 2u);
  EXPECT_EQ(d.rank, 2u);
  EXPECT_EQ(d.dims[1], 256u);
  EXPECT_EQ(d.strides[0], 1024u);
  EXPECT_EQ(d.box[0], 64u);
  EXPECT_EQ(d.swizzle_bytes, 128u);
  EXPECT_EQ(d.im2col, 0u);
  EXPECT_EQ(d.element_strides[1], 1u);
  GpuTensorMap im2col = TwoByTwoBoxesOfHalves();
  im2col.im2col = true;
  im2col.lower_corner = {-1, -2, 0};
  im2col.upper_corner = {-3, -4, 0};
  im2col.element_strides = {1, 2, 2, 1, 1};
  const tune_gpurt_tensor_map i = ToRuntimeTensorMap(im2col);
  EXPECT_EQ(i.im2col, 1u);
  EXPECT_EQ(i.lower_corner[1], -2);
  EXPECT_EQ(i.upper_corner[0], -3);
  EXPECT_EQ(i.element_strides[2], 2u);
}

TEST(WorkerTensorMap, AGoodMapPreparesWithTheBuffersAddress) {
  absl::StatusOr<tune_tensor_map_encoding> e =
      PrepareTensorMap(TwoByTwoBoxesOfHalves(), 3, kAddress);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->global_address, reinterpret_cast<void*>(kAddress));
  EXPECT_EQ(e->data_type, TUNE_CU_TENSOR_MAP_DATA_TYPE_UINT16);
  EXPECT_EQ(e->swizzle, TUNE_CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(e->global_strides[0], 1024u);
}

TEST(WorkerTensorMap, RefusalsNameTheMapWhatIsWrongAndTheRules) {
  GpuTensorMap map = TwoByTwoBoxesOfHalves();
  map.strides[0] = 1000;
  std::string error = Refusal(map);
  EXPECT_NE(error.find("strides[0] = 1000 bytes is not a multiple of 16"), std::string::npos)
      << error;
  EXPECT_NE(error.find("argument 0, 2-byte elements, rank 2, dims [512,256], strides [1000], "
                       "box [64,32], swizzle 128"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find(TUNE_TENSOR_MAP_RULES), std::string::npos) << error;

  map = TwoByTwoBoxesOfHalves();
  map.box[1] = 300;
  EXPECT_NE(Refusal(map).find("box[1] = 300 is not 1..256"), std::string::npos);
  map = TwoByTwoBoxesOfHalves();
  map.rank = 0;
  EXPECT_NE(Refusal(map).find("rank 0 is not 1..5"), std::string::npos);
  map.rank = 6;
  EXPECT_NE(Refusal(map).find("rank 6 is not 1..5"), std::string::npos);
  map = TwoByTwoBoxesOfHalves();
  map.swizzle_bytes = 32;
  EXPECT_NE(Refusal(map).find("swizzle_bytes 32 is not 0 or 128"), std::string::npos);
  map = TwoByTwoBoxesOfHalves();
  map.arg = 3;
  EXPECT_NE(Refusal(map).find("argument 3 is not one of the kernel's 3 arguments"),
            std::string::npos);
}

}  // namespace
}  // namespace tune::gpu
