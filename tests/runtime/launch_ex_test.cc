// The checks of launches with TMA tensor maps and thread-block clusters (runtime/tune_launch_ex.h)
// and the driver ABI they fill (runtime/tune_cuda_driver.h), without a driver.
#include <cstddef>
#include <cstring>
#include <string>

#include "gtest/gtest.h"
#include "runtime/tune_launch_ex.h"

namespace {

// A 2-D map of 2-byte elements over a 256 x 512 row-major buffer, 64 x 64 boxes, swizzled.
tune_gpurt_tensor_map GoodMap() {
  tune_gpurt_tensor_map map{};
  map.struct_bytes = sizeof map;
  map.arg = 1;
  map.element_bytes = 2;
  map.rank = 2;
  map.dims[0] = 256;
  map.dims[1] = 512;
  map.strides[0] = 256 * 2;
  map.box[0] = 64;
  map.box[1] = 64;
  map.swizzle_bytes = 128;
  return map;
}

constexpr uint64_t kAddress = 0x7f0000000000;

// The refusal of `map` for a kernel of 3 arguments at kAddress (empty when it is accepted).
std::string Refusal(const tune_gpurt_tensor_map& map, uint64_t address = kAddress) {
  tune_tensor_map_encoding encoding;
  char error[1024] = "";
  if (tune_tensor_map_prepare(&map, 3, address, &encoding, error, sizeof error)) {
    return "";
  }
  return error;
}

TEST(TensorMapPrepare, AGoodMapFillsTheEncodeArgumentsWithRawTypesZeroFillAndL2Promotion) {
  tune_gpurt_tensor_map map = GoodMap();
  tune_tensor_map_encoding e;
  char error[1024] = "";
  ASSERT_TRUE(tune_tensor_map_prepare(&map, 3, kAddress, &e, error, sizeof error)) << error;
  EXPECT_EQ(e.data_type, TUNE_CU_TENSOR_MAP_DATA_TYPE_UINT16);
  EXPECT_EQ(e.rank, 2u);
  EXPECT_EQ(e.global_address, reinterpret_cast<void*>(kAddress));
  EXPECT_EQ(e.global_dims[0], 256u);
  EXPECT_EQ(e.global_dims[1], 512u);
  EXPECT_EQ(e.global_strides[0], 512u);
  EXPECT_EQ(e.box[0], 64u);
  EXPECT_EQ(e.box[1], 64u);
  EXPECT_EQ(e.element_strides[0], 1u);
  EXPECT_EQ(e.element_strides[1], 1u);
  EXPECT_EQ(e.interleave, TUNE_CU_TENSOR_MAP_INTERLEAVE_NONE);
  EXPECT_EQ(e.swizzle, TUNE_CU_TENSOR_MAP_SWIZZLE_128B);
  EXPECT_EQ(e.l2_promotion, TUNE_CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  EXPECT_EQ(e.oob_fill, TUNE_CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);

  map.element_bytes = 1;
  map.box[0] = 128;
  map.swizzle_bytes = 0;
  ASSERT_TRUE(tune_tensor_map_prepare(&map, 3, kAddress, &e, error, sizeof error)) << error;
  EXPECT_EQ(e.data_type, TUNE_CU_TENSOR_MAP_DATA_TYPE_UINT8);
  EXPECT_EQ(e.swizzle, TUNE_CU_TENSOR_MAP_SWIZZLE_NONE);
  map.element_bytes = 4;
  map.box[0] = 32;
  ASSERT_TRUE(tune_tensor_map_prepare(&map, 3, kAddress, &e, error, sizeof error)) << error;
  EXPECT_EQ(e.data_type, TUNE_CU_TENSOR_MAP_DATA_TYPE_UINT32);
}

TEST(TensorMapPrepare, TheEnumValuesAreCudaHs) {
  // cuda.h: CU_TENSOR_MAP_DATA_TYPE_UINT8..UINT32 = 0..2, CU_TENSOR_MAP_SWIZZLE_128B = 3,
  // CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2, CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4.
  EXPECT_EQ(TUNE_CU_TENSOR_MAP_DATA_TYPE_UINT8, 0);
  EXPECT_EQ(TUNE_CU_TENSOR_MAP_DATA_TYPE_UINT16, 1);
  EXPECT_EQ(TUNE_CU_TENSOR_MAP_DATA_TYPE_UINT32, 2);
  EXPECT_EQ(TUNE_CU_TENSOR_MAP_SWIZZLE_128B, 3);
  EXPECT_EQ(TUNE_CU_TENSOR_MAP_L2_PROMOTION_L2_128B, 2);
  EXPECT_EQ(TUNE_CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, 4);
}

TEST(TensorMapPrepare, AMisalignedStrideIsRefusedNamingTheMapAndTheRule) {
  tune_gpurt_tensor_map map = GoodMap();
  map.strides[0] = 500;
  const std::string error = Refusal(map);
  EXPECT_NE(error.find("strides[0] = 500 bytes is not a multiple of 16"), std::string::npos)
      << error;
  EXPECT_NE(error.find("argument 1, 2-byte elements, rank 2, dims [256,512], strides [500], "
                       "box [64,64], swizzle 128"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find(TUNE_TENSOR_MAP_RULES), std::string::npos) << error;

  map.strides[0] = uint64_t{1} << 40;
  EXPECT_NE(Refusal(map).find("below 2^40"), std::string::npos) << Refusal(map);
}

TEST(TensorMapPrepare, ABoxTooLargeIsRefused) {
  tune_gpurt_tensor_map map = GoodMap();
  map.box[1] = 257;
  EXPECT_NE(Refusal(map).find("box[1] = 257 is not 1..256"), std::string::npos) << Refusal(map);
  map = GoodMap();
  map.box[1] = 0;
  EXPECT_NE(Refusal(map).find("box[1] = 0 is not 1..256"), std::string::npos) << Refusal(map);
  // 128 two-byte elements are 256 bytes: twice the 128-byte swizzle span.
  map = GoodMap();
  map.box[0] = 128;
  EXPECT_NE(Refusal(map).find("box[0] * element_bytes = 256 bytes exceeds the 128-byte swizzle"),
            std::string::npos)
      << Refusal(map);
  map.swizzle_bytes = 0;
  EXPECT_EQ(Refusal(map), "") << "without a swizzle the inner box may be wider";
  // 12 bytes of inner box is not a whole number of 16-byte chunks.
  map.box[0] = 6;
  EXPECT_NE(Refusal(map).find("box[0] * element_bytes = 12 bytes is not a multiple of 16"),
            std::string::npos)
      << Refusal(map);
}

TEST(TensorMapPrepare, RankZeroOrSixIsRefused) {
  tune_gpurt_tensor_map map = GoodMap();
  map.rank = 0;
  EXPECT_NE(Refusal(map).find("rank 0 is not 1..5"), std::string::npos) << Refusal(map);
  map.rank = 6;
  EXPECT_NE(Refusal(map).find("rank 6 is not 1..5"), std::string::npos) << Refusal(map);
  map.rank = 1;
  EXPECT_EQ(Refusal(map), "");
}

TEST(TensorMapPrepare, ASwizzleOtherThanNoneOr128IsRefused) {
  tune_gpurt_tensor_map map = GoodMap();
  map.swizzle_bytes = 64;
  EXPECT_NE(Refusal(map).find("swizzle_bytes 64 is not 0 or 128"), std::string::npos)
      << Refusal(map);
}

TEST(TensorMapPrepare, AnArgumentOutOfRangeIsRefused) {
  tune_gpurt_tensor_map map = GoodMap();
  map.arg = 3;
  EXPECT_NE(Refusal(map).find("argument 3 is not one of the kernel's 3 arguments"),
            std::string::npos)
      << Refusal(map);
}

TEST(TensorMapPrepare, OtherElementSizesZeroDimsAndMisalignedAddressesAreRefused) {
  tune_gpurt_tensor_map map = GoodMap();
  map.element_bytes = 8;
  EXPECT_NE(Refusal(map).find("element_bytes 8 is not 1, 2 or 4"), std::string::npos)
      << Refusal(map);
  map = GoodMap();
  map.dims[1] = 0;
  EXPECT_NE(Refusal(map).find("dims[1] = 0 is not 1..2^32"), std::string::npos) << Refusal(map);
  map = GoodMap();
  EXPECT_NE(Refusal(map, kAddress + 8).find("is not 16-byte aligned"), std::string::npos)
      << Refusal(map, kAddress + 8);
}

TEST(ClusterCheck, AClusterMustDivideTheGridAndHoldAtMostEightBlocks) {
  const uint32_t grid[3] = {8, 6, 1};
  char error[512] = "";
  const uint32_t two[3] = {2, 1, 1};
  EXPECT_TRUE(tune_cluster_check(grid, two, error, sizeof error)) << error;
  const uint32_t eight[3] = {4, 2, 1};
  EXPECT_TRUE(tune_cluster_check(grid, eight, error, sizeof error)) << error;

  const uint32_t four_y[3] = {1, 4, 1};
  EXPECT_FALSE(tune_cluster_check(grid, four_y, error, sizeof error));
  EXPECT_NE(std::string(error).find("cluster.y = 4 does not divide grid.y = 6"), std::string::npos)
      << error;
  const uint32_t zero[3] = {0, 1, 1};
  EXPECT_FALSE(tune_cluster_check(grid, zero, error, sizeof error));
  const uint32_t sixteen[3] = {8, 2, 1};
  EXPECT_FALSE(tune_cluster_check(grid, sixteen, error, sizeof error));
  EXPECT_NE(std::string(error).find("16 blocks exceeds the portable maximum of 8"),
            std::string::npos)
      << error;
}

TEST(CudaDriverAbi, LaunchConfigAndAttributeHaveCudaHsLayout) {
  EXPECT_EQ(sizeof(tune_cu_tensor_map), 128u);
  EXPECT_EQ(alignof(tune_cu_tensor_map) % 64, 0u);
  EXPECT_EQ(sizeof(tune_cu_launch_attribute), 72u);
  EXPECT_EQ(offsetof(tune_cu_launch_attribute, value), 8u);
  EXPECT_EQ(sizeof(tune_cu_launch_config), 56u);
  EXPECT_EQ(offsetof(tune_cu_launch_config, shared_bytes), 24u);
  EXPECT_EQ(offsetof(tune_cu_launch_config, stream), 32u);
  EXPECT_EQ(offsetof(tune_cu_launch_config, attrs), 40u);
  EXPECT_EQ(offsetof(tune_cu_launch_config, num_attrs), 48u);
}

TEST(CudaDriverAbi, TheTensorMapDescriptorKeepsVersionOneAndAppendsVersionTwo) {
  EXPECT_EQ(sizeof(tune_gpurt_tensor_map), size_t{TUNE_GPURT_TENSOR_MAP_BYTES});
  EXPECT_EQ(offsetof(tune_gpurt_tensor_map, dims), 16u);
  EXPECT_EQ(offsetof(tune_gpurt_tensor_map, strides), 56u);
  EXPECT_EQ(offsetof(tune_gpurt_tensor_map, box), 88u);
  EXPECT_EQ(offsetof(tune_gpurt_tensor_map, swizzle_bytes), 108u);
  EXPECT_EQ(offsetof(tune_gpurt_tensor_map, im2col), size_t{TUNE_GPURT_TENSOR_MAP_V1_BYTES});
  EXPECT_EQ(offsetof(tune_gpurt_tensor_map, lower_corner), 116u);
  EXPECT_EQ(offsetof(tune_gpurt_tensor_map, upper_corner), 128u);
  EXPECT_EQ(offsetof(tune_gpurt_tensor_map, element_strides), 140u);
}

// The im2col map of a 3x3 convolution, padding 1, over an NHWC input [8][56][56][64] of 2-byte
// elements: columns of 128 pixels of 64 channels.
tune_gpurt_tensor_map Im2colMap() {
  tune_gpurt_tensor_map map{};
  map.struct_bytes = sizeof map;
  map.arg = 0;
  map.element_bytes = 2;
  map.rank = 4;
  const uint64_t dims[4] = {64, 56, 56, 8};
  for (int d = 0; d < 4; ++d) {
    map.dims[d] = dims[d];
    map.element_strides[d] = 1;
  }
  map.strides[0] = 64 * 2;
  map.strides[1] = 56 * 64 * 2;
  map.strides[2] = 56 * 56 * 64 * 2;
  map.box[0] = 64;
  map.box[1] = 128;
  map.box[2] = map.box[3] = 1;
  map.swizzle_bytes = 128;
  map.im2col = 1;
  map.lower_corner[0] = map.lower_corner[1] = -1;
  map.upper_corner[0] = map.upper_corner[1] = -1;
  return map;
}

TEST(TensorMapPrepare, AnIm2colMapFillsTheCornersAndThePixelsOfAColumn) {
  const tune_gpurt_tensor_map map = Im2colMap();
  tune_tensor_map_encoding e;
  char error[2048] = "";
  ASSERT_EQ(tune_tensor_map_prepare(&map, 3, kAddress, &e, error, sizeof error), 1) << error;
  EXPECT_EQ(e.im2col, 1);
  EXPECT_EQ(e.rank, 4u);
  EXPECT_EQ(e.box[0], 64u);   // channels per pixel
  EXPECT_EQ(e.box[1], 128u);  // pixels per column
  EXPECT_EQ(e.lower_corner[0], -1);
  EXPECT_EQ(e.upper_corner[1], -1);
  EXPECT_EQ(e.element_strides[3], 1u);
  EXPECT_STREQ(tune_tensor_map_encoder(&e), "cuTensorMapEncodeIm2col");
  // Columns of up to 1024 pixels.
  tune_gpurt_tensor_map tall = map;
  tall.box[1] = 1024;
  EXPECT_EQ(Refusal(tall), "");
}

TEST(TensorMapPrepare, Im2colMapsOutsideTheEncodersRulesAreRefusedNamingWhatIsWrong) {
  tune_gpurt_tensor_map rank2 = Im2colMap();
  rank2.rank = 2;
  EXPECT_NE(Refusal(rank2).find("an im2col map of rank 2 (3..5)"), std::string::npos);
  tune_gpurt_tensor_map far = Im2colMap();
  far.lower_corner[1] = -129;
  EXPECT_NE(Refusal(far).find("im2col corners -129..-1 of spatial dimension 1 are not within "
                              "-128..127"),
            std::string::npos)
      << Refusal(far);
  tune_gpurt_tensor_map empty = Im2colMap();
  empty.upper_corner[0] = -60;  // corners -1..-5 of a width of 56: no window corner
  EXPECT_NE(Refusal(empty).find("bound no window corner"), std::string::npos) << Refusal(empty);
  tune_gpurt_tensor_map stride = Im2colMap();
  stride.element_strides[1] = 9;
  EXPECT_NE(Refusal(stride).find("element_strides[1] = 9 is not 1..8"), std::string::npos);
  tune_gpurt_tensor_map deep = Im2colMap();
  deep.box[2] = 2;
  EXPECT_NE(Refusal(deep).find("box[2] = 2 of an im2col map is not 1"), std::string::npos);
  // Every refusal says the rules and describes the corners.
  EXPECT_NE(Refusal(far).find("an im2col map (im2col 1) rank 3..5"), std::string::npos);
  EXPECT_NE(Refusal(far).find("im2col corners [-1..-1,-129..-1]"), std::string::npos)
      << Refusal(far);
}

TEST(TensorMapRead, AVersionOneArrayIsReadAtItsOwnStrideWithTiledDefaults) {
  // Two version-1 descriptors, back to back at 112 bytes each, as an older header lays them out.
  unsigned char bytes[2 * TUNE_GPURT_TENSOR_MAP_V1_BYTES];
  tune_gpurt_tensor_map first = GoodMap(), second = GoodMap();
  first.struct_bytes = second.struct_bytes = TUNE_GPURT_TENSOR_MAP_V1_BYTES;
  second.arg = 2;
  std::memcpy(bytes, &first, TUNE_GPURT_TENSOR_MAP_V1_BYTES);
  std::memcpy(bytes + TUNE_GPURT_TENSOR_MAP_V1_BYTES, &second, TUNE_GPURT_TENSOR_MAP_V1_BYTES);
  const auto* maps = reinterpret_cast<const tune_gpurt_tensor_map*>(bytes);
  tune_gpurt_tensor_map read;
  uint32_t own = 0;
  ASSERT_EQ(tune_tensor_map_read(maps, TUNE_GPURT_TENSOR_MAP_V1_BYTES, 1, &read, &own), 1);
  EXPECT_EQ(read.arg, 2u);
  EXPECT_EQ(read.box[1], 64u);
  EXPECT_EQ(read.im2col, 0u);
  EXPECT_EQ(read.struct_bytes, uint32_t{TUNE_GPURT_TENSOR_MAP_BYTES});
  EXPECT_EQ(Refusal(read), "");  // element strides 0 read as 1
  EXPECT_EQ(tune_tensor_map_read(maps, 100, 0, &read, &own), 0);
}

}  // namespace
