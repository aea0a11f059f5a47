// A GPU kernel's launch on the wire (proto/convert.h: LaunchDimsToProto, LaunchFromProto): what
// the daemon's builder writes is what the worker launches.
#include <cstdint>

#include "common/gpu_arch.h"
#include "gtest/gtest.h"
#include "proto/convert.h"

namespace tune {
namespace {

GpuLaunch ClusteredLaunchWithTwoMaps() {
  GpuLaunch launch;
  launch.grid = {16, 8, 1};
  launch.block = {128, 1, 1};
  launch.dynamic_shared_bytes = 99 * 1024;
  launch.zeroed_args = {2};
  GpuTensorMap a;
  a.arg = 0;
  a.element_bytes = 2;
  a.rank = 2;
  a.dims = {1024, 512, 1, 1, 1};
  a.strides = {2048, 0, 0, 0};
  a.box = {64, 128, 1, 1, 1};
  a.swizzle_bytes = 128;
  GpuTensorMap b;
  b.arg = 1;
  b.element_bytes = 1;
  b.rank = 3;
  b.dims = {256, 64, 9, 1, 1};
  b.strides = {256, 256 * 64, 0, 0};
  b.box = {128, 32, 1, 1, 1};
  b.swizzle_bytes = 0;
  GpuTensorMap c;  // an im2col map: a 3x3 convolution of stride 2, padding 1
  c.arg = 2;
  c.rank = 4;
  c.dims = {64, 56, 56, 8, 1};
  c.strides = {128, 128 * 56, 128 * 56 * 56, 0};
  c.box = {64, 128, 1, 1, 1};
  c.im2col = true;
  c.lower_corner = {-1, -1, 0};
  c.upper_corner = {-1, -1, 0};
  c.element_strides = {1, 2, 2, 1, 1};
  launch.tensor_maps = {a, b, c};
  launch.cluster = {2, 1, 1};
  return launch;
}

TEST(LaunchDims, TensorMapsAndTheClusterSurviveTheWire) {
  const GpuLaunch launch = ClusteredLaunchWithTwoMaps();
  const v1::LaunchDims proto = LaunchDimsToProto(launch);
  EXPECT_EQ(LaunchFromProto(proto), launch) << ToString(LaunchFromProto(proto));

  // Only the entries of each map's rank travel.
  ASSERT_EQ(proto.tensor_maps_size(), 3);
  EXPECT_EQ(proto.tensor_maps(1).dims_size(), 3);
  EXPECT_FALSE(proto.tensor_maps(1).im2col());
  EXPECT_EQ(proto.tensor_maps(1).element_strides_size(), 0);  // all 1: not sent
  EXPECT_TRUE(proto.tensor_maps(2).im2col());
  EXPECT_EQ(proto.tensor_maps(2).lower_corner_size(), 2);
  EXPECT_EQ(proto.tensor_maps(2).element_strides_size(), 4);
  EXPECT_EQ(proto.tensor_maps(1).strides_size(), 2);
  EXPECT_EQ(proto.tensor_maps(1).box_size(), 3);
  EXPECT_EQ(proto.cluster_x(), 2u);
}

TEST(LaunchDims, ALaunchWithoutMapsOrClusterIsTheOldWireForm) {
  GpuLaunch launch;
  launch.grid = {4, 1, 1};
  launch.block = {256, 1, 1};
  const v1::LaunchDims proto = LaunchDimsToProto(launch);
  EXPECT_EQ(proto.tensor_maps_size(), 0);
  EXPECT_EQ(LaunchFromProto(proto), launch);

  // A sender that predates the cluster fields leaves them 0: no cluster.
  v1::LaunchDims old;
  old.set_grid_x(4);
  old.set_block_x(256);
  EXPECT_EQ(LaunchFromProto(old).cluster, (std::array<uint32_t, 3>{1, 1, 1}));
  EXPECT_EQ(LaunchFromProto(old), launch);
}

TEST(LaunchDims, AMalformedMapArrivesAsSentForTheLauncherToRefuse) {
  v1::LaunchDims proto;
  v1::TensorMapDesc* desc = proto.add_tensor_maps();
  desc->set_arg(7);
  desc->set_rank(9);
  for (int d = 0; d < 9; ++d) {
    desc->add_dims(100 + d);
    desc->add_box(8);
  }
  const GpuLaunch launch = LaunchFromProto(proto);
  ASSERT_EQ(launch.tensor_maps.size(), 1u);
  EXPECT_EQ(launch.tensor_maps[0].arg, 7u);
  EXPECT_EQ(launch.tensor_maps[0].rank, 9u);
  EXPECT_EQ(launch.tensor_maps[0].dims[4], 104u) << "entries past 5 are dropped, not a crash";
}

}  // namespace
}  // namespace tune
