// GPU measurement (label `gpu`): hand-written PTX kernels measured by the real tune-server child
// on cuda:0 through the supervisor (the device reference kernels are checked in
// gpu_reference_test.cc). Every test skips when no CUDA device can be opened; the PTX syntax test
// runs ptxas when /usr/local/cuda/bin/ptxas exists and skips otherwise.
#include "rpc_server/gpu/gpu_measure.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>

#include "common/artifact_hash.h"
#include "common/files.h"
#include "common/reference.h"
#include "common/stats.h"
#include "common/strings.h"
#include "common/subprocess.h"
#include "rpc_server/gpu/gpu_device.h"
#include "rpc_server/gpu/gpu_timing.h"
#include "rpc_server/gpu/reference_ptx.h"
#include "rpc_server/supervisor.h"
#include "tests/rpc_server/test_support.h"

namespace tune::rpc {
namespace {

using testing::FastTiming;
using testing::FixtureSupervisorOptions;

constexpr int kM = TUNE_TEST_GPU_M, kN = TUNE_TEST_GPU_N, kK = TUNE_TEST_GPU_K;
constexpr char kPtxas[] = "/usr/local/cuda/bin/ptxas";

// A naive gemm A[M][K] x B[K][N] -> C[M][N] with tune's GPU kernel ABI, one thread per output
// element, block (16, 16), grid (N/16, M/16) rounded up. The @...@ holes make the faulty
// variants.
constexpr char kGemmTemplate[] = R"PTX(
.version @VERSION@
.target sm_70
.address_size 64

.visible .entry @NAME@(
    .param .u64 pa,
    .param .u64 pb,
    .param .u64 pc)
{
    .reg .pred %p<4>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<8>;
    .reg .f32 %f<4>;

    ld.param.u64 %rd1, [pa];
    ld.param.u64 %rd2, [pb];
    ld.param.u64 %rd3, [pc];
@SPIN@
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mad.lo.u32 %r4, %r1, %r2, %r3;
    mov.u32 %r5, %ctaid.y;
    mov.u32 %r6, %ntid.y;
    mov.u32 %r7, %tid.y;
    mad.lo.u32 %r8, %r5, %r6, %r7;
    setp.ge.u32 %p1, %r4, @N@;
    @%p1 bra $L_end;
    setp.ge.u32 %p1, %r8, @M@;
    @%p1 bra $L_end;
    mul.lo.u32 %r9, %r8, @K@;
    mul.wide.u32 %rd4, %r9, 4;
    add.u64 %rd4, %rd1, %rd4;
    mul.wide.u32 %rd5, %r4, 4;
    add.u64 %rd5, %rd2, %rd5;
    mov.f32 %f1, 0f00000000;
    mov.u32 %r10, 0;
$L_k:
    ld.global.f32 %f2, [%rd4];
    ld.global.f32 %f3, [%rd5];
    fma.rn.f32 %f1, %f2, %f3, %f1;
    add.u64 %rd4, %rd4, 4;
    add.u64 %rd5, %rd5, @NBYTES@;
    add.u32 %r10, %r10, 1;
    setp.lt.u32 %p2, %r10, @K@;
    @%p2 bra $L_k;
@EXTRA@
    mad.lo.u32 %r11, %r8, @N@, %r4;
    mul.wide.u32 %rd6, %r11, 4;
    add.u64 %rd6, %rd3, %rd6;
@OOB@
    @STORE@ [%rd6], %f1;
$L_end:
    ret;
}
)PTX";

std::string Replace(std::string text, std::string_view hole, std::string_view with) {
  for (size_t at = text.find(hole); at != std::string::npos; at = text.find(hole, at)) {
    text.replace(at, hole.size(), with);
    at += with.size();
  }
  return text;
}

struct Variant {
  std::string version = "7.0";
  std::string spin = {};
  std::string extra = {};
  std::string oob = {};
  std::string store = "st.global.f32";
};

std::string GemmPtx(const std::string& name, const Variant& v = {}) {
  std::string ptx = kGemmTemplate;
  ptx = Replace(ptx, "@VERSION@", v.version);
  ptx = Replace(ptx, "@NAME@", name);
  ptx = Replace(ptx, "@SPIN@", v.spin);
  ptx = Replace(ptx, "@EXTRA@", v.extra);
  ptx = Replace(ptx, "@OOB@", v.oob);
  ptx = Replace(ptx, "@STORE@", v.store);
  ptx = Replace(ptx, "@NBYTES@", std::to_string(kN * 4));
  ptx = Replace(ptx, "@M@", std::to_string(kM));
  ptx = Replace(ptx, "@N@", std::to_string(kN));
  ptx = Replace(ptx, "@K@", std::to_string(kK));
  return ptx;
}

// Adds 1 to every output element: a wrong answer.
Variant Wrong() { return {.extra = "    add.f32 %f1, %f1, 0f3F800000;"}; }
// Stores 1 TiB past the output: an illegal address.
Variant OutOfBounds() { return {.oob = "    add.u64 %rd6, %rd6, 1099511627776;"}; }
// Spins until the (NaN-poisoned) output's first word is 0x12345678: never.
Variant Spin() {
  return {.spin =
              "$L_spin:\n"
              "    ld.volatile.global.u32 %r11, [%rd3];\n"
              "    setp.ne.u32 %p3, %r11, 305419896;\n"
              "    @%p3 bra $L_spin;"};
}
// A PTX ISA version no driver supports.
Variant FutureVersion() { return {.version = "99.0"}; }
// Adds its result into C atomically, as a kernel whose blocks share a reduction does: right only
// when C starts at zero.
Variant AddsIntoC() {
  Variant v;
  v.store = "red.global.add.f32";
  return v;
}

std::string GemmWorkload() { return StrCat("gemm:M=", kM, ",N=", kN, ",K=", kK); }

// Runs ptxas on `ptx`; returns its exit code and output.
std::pair<int, std::string> Ptxas(const std::string& ptx, const std::string& dir) {
  const std::string in = dir + "/kernel.ptx";
  std::ofstream(in) << ptx;
  const std::string log = dir + "/ptxas.log";
  int rc = std::system(
      StrCat(kPtxas, " -arch=sm_80 ", in, " -o ", dir, "/kernel.cubin > ", log, " 2>&1").c_str());
  absl::StatusOr<std::string> out = ReadFile(log);
  return {rc, out.ok() ? *out : ""};
}

TEST(GpuPtxTest, EveryEmbeddedPtxAssemblesWithPtxas) {
  if (access(kPtxas, X_OK) != 0) {
    GTEST_SKIP() << kPtxas << " is not installed";
  }
  TempDir dir = TempDir::Create("tune-ptxas-").value();
  for (const auto& [what, ptx] : std::vector<std::pair<std::string, std::string>>{
           {"reference kernels", std::string(gpu::ReferencePtx())},
           {"gemm", GemmPtx("gemm_ok")},
           {"wrong gemm", GemmPtx("gemm_wrong", Wrong())},
           {"out-of-bounds gemm", GemmPtx("gemm_oob", OutOfBounds())},
           {"spinning gemm", GemmPtx("gemm_spin", Spin())},
           {"gemm adding into C", GemmPtx("gemm_add", AddsIntoC())}}) {
    auto [rc, log] = Ptxas(ptx, dir.path());
    EXPECT_EQ(rc, 0) << what << ":\n" << log;
  }
  // The future version is refused by ptxas too, as the driver's JIT refuses it.
  auto [rc, log] = Ptxas(GemmPtx("gemm_future", FutureVersion()), dir.path());
  EXPECT_NE(rc, 0) << log;
}

// What a cuda worker accepts is decided without a child (and without a GPU).
TEST(GpuRequestCheckTest, ACudaWorkerTakesPtxAndHostAbiObjectsOfCudaTargetsOnly) {
  SupervisorOptions options = FixtureSupervisorOptions();
  options.device = "cuda:0";
  std::unique_ptr<MeasureSupervisor> supervisor = MeasureSupervisor::Create(options).value();
  v1::MeasureRequest request;
  request.set_trial_id(1);
  request.set_workload(GemmWorkload());
  request.set_target("cuda -arch=sm_90");
  request.mutable_artifact()->set_hash(ArtifactHash(CodeFormat::kPtx, "ptx"));
  request.mutable_artifact()->set_entry_symbol("k");
  request.mutable_artifact()->set_format(v1::ARTIFACT_FORMAT_PTX);
  EXPECT_FALSE(supervisor->CheckRequest(request).has_value());
  request.mutable_artifact()->set_format(v1::ARTIFACT_FORMAT_SHARED_OBJECT);
  EXPECT_FALSE(supervisor->CheckRequest(request).has_value());

  request.mutable_artifact()->set_format(v1::ARTIFACT_FORMAT_HSACO);
  std::optional<v1::Measurement> hsaco = supervisor->CheckRequest(request);
  ASSERT_TRUE(hsaco.has_value());
  EXPECT_EQ(hsaco->error_kind(), v1::ERROR_KIND_WORKER_ERROR);
  EXPECT_NE(hsaco->message().find("ARTIFACT_FORMAT_PTX and ARTIFACT_FORMAT_SHARED_OBJECT"),
            std::string::npos)
      << hsaco->message();

  request.mutable_artifact()->set_format(v1::ARTIFACT_FORMAT_PTX);
  request.set_target("llvm -mcpu=znver4 -threads=1");
  std::optional<v1::Measurement> cpu = supervisor->CheckRequest(request);
  ASSERT_TRUE(cpu.has_value());
  EXPECT_EQ(cpu->error_kind(), v1::ERROR_KIND_WORKER_ERROR);
  EXPECT_NE(cpu->message().find("runs cuda targets only"), std::string::npos) << cpu->message();
}

class GpuMeasureTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    SupervisorOptions options = FixtureSupervisorOptions();
    options.device = "cuda:0";
    absl::StatusOr<std::unique_ptr<MeasureSupervisor>> s = MeasureSupervisor::Create(options);
    if (!s.ok()) {
      skip_reason_ = new std::string(s.status().message());
      return;
    }
    if (absl::Status started = (*s)->StartChild(); !started.ok()) {
      skip_reason_ = new std::string(started.message());
      return;
    }
    supervisor_ = s->release();
    dir_ = new TempDir(TempDir::Create("tune-gpu-measure-").value());
  }
  static void TearDownTestSuite() {
    delete supervisor_;
    supervisor_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (supervisor_ == nullptr) {
      GTEST_SKIP() << "no CUDA device can be opened: " << *skip_reason_;
    }
  }

  // Measures `ptx` (kernel `name`) on the gemm workload with the fixture's launch.
  v1::Measurement MeasurePtx(const std::string& name, const std::string& ptx,
                             v1::TimingOptions timing = FastTiming(), uint32_t block_x = 16,
                             const std::vector<uint32_t>& zeroed_args = {},
                             const std::string& workload = GemmWorkload(),
                             const std::function<void(v1::LaunchDims*)>& adjust = nullptr) {
    const std::string path = StrCat(dir_->path(), "/", name, ".ptx");
    std::ofstream(path) << ptx;
    v1::MeasureRequest request;
    request.set_trial_id(++trial_id_);
    request.set_workload(workload);
    request.set_target(StrCat("cuda -arch=", supervisor_->gpu().arch()));
    v1::Artifact* a = request.mutable_artifact();
    a->set_hash(ArtifactHash(CodeFormat::kPtx, ptx));
    a->set_entry_symbol(name);
    a->set_format(v1::ARTIFACT_FORMAT_PTX);
    a->set_code_bytes(static_cast<int64_t>(ptx.size()));
    v1::LaunchDims* l = a->mutable_launch();
    l->set_block_x(block_x);
    l->set_block_y(16);
    l->set_grid_x((kN + 15) / 16);
    l->set_grid_y((kM + 15) / 16);
    for (uint32_t arg : zeroed_args) {
      l->add_zeroed_args(arg);
    }
    if (adjust) {
      adjust(l);
    }
    *request.mutable_timing() = timing;
    absl::StatusOr<v1::Measurement> m = supervisor_->Measure(request, path);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *m : v1::Measurement();
  }

  // Measures entry `symbol` of the host-ABI test library on the gemm workload.
  v1::Measurement MeasureHostEntry(const std::string& symbol) {
    v1::MeasureRequest request;
    request.set_trial_id(++trial_id_);
    request.set_workload(GemmWorkload());
    request.set_target(StrCat("cuda -arch=", supervisor_->gpu().arch()));
    const std::string path = testing::BuiltOrBundled(TUNE_TEST_GPU_HOST_ABI);
    v1::Artifact* a = request.mutable_artifact();
    a->set_hash(ArtifactHash(CodeFormat::kSharedObject, testing::ReadFileBytes(path)));
    a->set_entry_symbol(symbol);
    a->set_format(v1::ARTIFACT_FORMAT_SHARED_OBJECT);
    *request.mutable_timing() = FastTiming();
    absl::StatusOr<v1::Measurement> m = supervisor_->Measure(request, path);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? *m : v1::Measurement();
  }

  static double MedianOf(const google::protobuf::RepeatedField<double>& rounds) {
    return Median(std::vector<double>(rounds.begin(), rounds.end()));
  }

  static MeasureSupervisor* supervisor_;
  static TempDir* dir_;
  static std::string* skip_reason_;
  static uint64_t trial_id_;
};

MeasureSupervisor* GpuMeasureTest::supervisor_ = nullptr;
TempDir* GpuMeasureTest::dir_ = nullptr;
std::string* GpuMeasureTest::skip_reason_ = nullptr;
uint64_t GpuMeasureTest::trial_id_ = 0;

TEST_F(GpuMeasureTest, TheChildReportsTheDevicesFacts) {
  const v1::GpuDevice& gpu = supervisor_->gpu();
  EXPECT_EQ(gpu.runtime(), "cuda");
  EXPECT_TRUE(gpu.arch().starts_with("sm_")) << gpu.arch();
  EXPECT_FALSE(gpu.name().empty());
  EXPECT_GT(gpu.multiprocessors(), 0);
  EXPECT_GT(gpu.total_memory_bytes(), 0);
  EXPECT_GT(gpu.l2_cache_bytes(), 0);
  EXPECT_GT(gpu.driver_version(), 0);
  EXPECT_NE(gpu.runtime_library().find("libcuda.so"), std::string::npos);
}

TEST_F(GpuMeasureTest, ACorrectKernelIsMeasuredWithPositiveTimesAndItsRegisterCount) {
  v1::Measurement m = MeasurePtx("gemm_ok", GemmPtx("gemm_ok"));
  ASSERT_EQ(m.error_kind(), v1::ERROR_KIND_NONE) << m.message();
  ASSERT_EQ(m.round_secs_size(), 3);
  for (double s : m.round_secs()) {
    EXPECT_GT(s, 0);
  }
  EXPECT_GE(m.number(), 1);
  EXPECT_NE(m.library_info().find("kernel: regs="), std::string::npos) << m.library_info();
}

TEST_F(GpuMeasureTest, AKernelIsTimedByGraphReplayWithTheCallByCallReadingBeside) {
  v1::TimingOptions timing = FastTiming();
  timing.set_min_repeat_ms(2);
  v1::Measurement m = MeasurePtx("gemm_graph", GemmPtx("gemm_graph"), timing);
  ASSERT_EQ(m.error_kind(), v1::ERROR_KIND_NONE) << m.message();
  EXPECT_EQ(m.gpu_clock(), v1::GPU_CLOCK_GRAPH) << m.library_info();
  EXPECT_EQ(m.library_info().find("refused"), std::string::npos) << m.library_info();
  ASSERT_GE(m.host_round_secs_size(), 3);
  for (double s : m.host_round_secs()) {
    EXPECT_GT(s, 0);
  }
  // A round replays whole graphs of up to kMaxCallsPerGraph calls.
  EXPECT_TRUE(m.number() < gpu::kMaxCallsPerGraph || m.number() % gpu::kMaxCallsPerGraph == 0)
      << m.number();
  std::cout << "PTX gemm " << GemmWorkload() << ": graph " << MedianOf(m.round_secs()) * 1e6
            << " us, events " << MedianOf(m.host_round_secs()) * 1e6 << " us per call\n";
}

TEST_F(GpuMeasureTest, ColdL2TimingMeasuresTheSameKernel) {
  v1::TimingOptions timing = FastTiming();
  timing.set_flush_cache(true);
  timing.set_min_repeat_ms(1);
  v1::Measurement m = MeasurePtx("gemm_cold", GemmPtx("gemm_cold"), timing);
  ASSERT_EQ(m.error_kind(), v1::ERROR_KIND_NONE) << m.message();
  for (double s : m.round_secs()) {
    EXPECT_GT(s, 0);
  }
}

TEST_F(GpuMeasureTest, AWrongKernelIsAWrongAnswer) {
  v1::Measurement m = MeasurePtx("gemm_wrong", GemmPtx("gemm_wrong", Wrong()));
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_WRONG_ANSWER) << m.message();
  EXPECT_TRUE(m.round_secs().empty());
}

TEST_F(GpuMeasureTest, AKernelThatAddsIntoItsOutputIsRightOnlyWhenTheLaunchZeroesItFirst) {
  // The output is poisoned with NaN before the checked run: without the zeroing the sums stay NaN.
  v1::Measurement unzeroed = MeasurePtx("gemm_add", GemmPtx("gemm_add", AddsIntoC()));
  EXPECT_EQ(unzeroed.error_kind(), v1::ERROR_KIND_WRONG_ANSWER) << unzeroed.message();
  v1::Measurement zeroed =
      MeasurePtx("gemm_add", GemmPtx("gemm_add", AddsIntoC()), FastTiming(), 16, {2});
  EXPECT_EQ(zeroed.error_kind(), v1::ERROR_KIND_NONE) << zeroed.message();
  EXPECT_FALSE(zeroed.round_secs().empty());
}

TEST_F(GpuMeasureTest, AZeroedArgumentTheKernelDoesNotHaveIsALoadErrorNamingIt) {
  v1::Measurement m =
      MeasurePtx("gemm_add_bad", GemmPtx("gemm_add_bad", AddsIntoC()), FastTiming(), 16, {5});
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_LOAD_ERROR) << m.message();
  EXPECT_NE(m.message().find("zeroed_args names argument 5"), std::string::npos) << m.message();
}

// A tensor map over A (kM x kK floats, row-major) in 32 x 8 boxes, swizzled: what a TMA kernel
// of this gemm would read A through.
v1::TensorMapDesc MapOverA() {
  v1::TensorMapDesc map;
  map.set_arg(0);
  map.set_element_bytes(4);
  map.set_rank(2);
  map.add_dims(kK);
  map.add_dims(kM);
  map.add_strides(kK * 4);
  map.add_box(32);
  map.add_box(8);
  map.set_swizzle_bytes(128);
  return map;
}

// sm_90 (Hopper) or newer: where clusters and tensor maps exist.
bool Hopper(const std::string& arch) {
  return arch.starts_with("sm_") && std::atoi(arch.c_str() + 3) >= 90;
}

TEST_F(GpuMeasureTest, TensorMapsAndClustersLaunchOnHopperAndAreUnsupportedBefore) {
  // The gemm kernel reads neither: cuLaunchKernel passes the parameters it declares, so the
  // trailing map is encoded, passed and ignored, and the cluster only groups its blocks.
  v1::Measurement m = MeasurePtx("gemm_ex", GemmPtx("gemm_ex"), FastTiming(), 16, {},
                                 GemmWorkload(), [](v1::LaunchDims* l) {
                                   *l->add_tensor_maps() = MapOverA();
                                   l->set_cluster_y(2);  // grid.y is kM / 16 = 4
                                 });
  if (Hopper(supervisor_->gpu().arch())) {
    EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_NONE) << m.message();
  } else {
    EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_UNSUPPORTED) << m.message();
    EXPECT_NE(m.message().find("need sm_90 or newer"), std::string::npos) << m.message();
  }
}

TEST_F(GpuMeasureTest, ATensorMapOverAMissingArgumentOrBreakingTheRulesIsALoadError) {
  if (!Hopper(supervisor_->gpu().arch())) {
    GTEST_SKIP() << "tensor maps need sm_90; this device is " << supervisor_->gpu().arch();
  }
  v1::Measurement m = MeasurePtx("gemm_map5", GemmPtx("gemm_map5"), FastTiming(), 16, {},
                                 GemmWorkload(), [](v1::LaunchDims* l) {
                                   *l->add_tensor_maps() = MapOverA();
                                   l->mutable_tensor_maps(0)->set_arg(5);
                                 });
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_LOAD_ERROR) << m.message();
  EXPECT_NE(m.message().find("launch.tensor_maps[0] names argument 5"), std::string::npos)
      << m.message();

  m = MeasurePtx("gemm_map_stride", GemmPtx("gemm_map_stride"), FastTiming(), 16, {},
                 GemmWorkload(), [](v1::LaunchDims* l) {
                   *l->add_tensor_maps() = MapOverA();
                   l->mutable_tensor_maps(0)->set_strides(0, kK * 4 + 4);
                 });
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_LOAD_ERROR) << m.message();
  EXPECT_NE(m.message().find("is not a multiple of 16"), std::string::npos) << m.message();
}

TEST_F(GpuMeasureTest, AClusterThatDoesNotDivideTheGridIsUnsupportedNamingIt) {
  v1::Measurement m = MeasurePtx("gemm_cluster3", GemmPtx("gemm_cluster3"), FastTiming(), 16, {},
                                 GemmWorkload(), [](v1::LaunchDims* l) { l->set_cluster_y(3); });
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_UNSUPPORTED) << m.message();
  if (Hopper(supervisor_->gpu().arch())) {
    EXPECT_NE(m.message().find("cluster.y = 3 does not divide grid.y = 4"), std::string::npos)
        << m.message();
  }
}

TEST_F(GpuMeasureTest, AnIllegalAddressIsARuntimeCrashAndAFreshChildMeasuresTheNext) {
  const int before = supervisor_->children_started();
  v1::Measurement m = MeasurePtx("gemm_oob", GemmPtx("gemm_oob", OutOfBounds()));
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_RUNTIME_CRASH) << m.message();
  EXPECT_NE(m.message().find("CUDA_ERROR_"), std::string::npos) << m.message();
  v1::Measurement next = MeasurePtx("gemm_after", GemmPtx("gemm_after"));
  EXPECT_EQ(next.error_kind(), v1::ERROR_KIND_NONE) << next.message();
  EXPECT_GT(supervisor_->children_started(), before);
}

TEST_F(GpuMeasureTest, AKernelThatSpinsForeverIsATimeout) {
  v1::TimingOptions timing = FastTiming();
  timing.set_timeout_ms(1000);
  v1::Measurement m = MeasurePtx("gemm_spin", GemmPtx("gemm_spin", Spin()), timing);
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_TIMEOUT) << m.message();
  v1::Measurement next = MeasurePtx("gemm_after_spin", GemmPtx("gemm_after_spin"));
  EXPECT_EQ(next.error_kind(), v1::ERROR_KIND_NONE) << next.message();
}

// A newer driver would load it: the worker's lack, not the kernel's verdict.
TEST_F(GpuMeasureTest, PtxOfAnIsaVersionTheDriverLacksIsAWorkerError) {
  v1::Measurement m = MeasurePtx("gemm_future", GemmPtx("gemm_future", FutureVersion()));
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_WORKER_ERROR) << m.message();
  EXPECT_NE(m.message().find("cuModuleLoadDataEx"), std::string::npos) << m.message();
}

TEST_F(GpuMeasureTest, AMissingKernelNameIsALoadError) {
  v1::Measurement m = MeasurePtx("gemm_absent", GemmPtx("gemm_present"));
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_LOAD_ERROR) << m.message();
  EXPECT_NE(m.message().find("gemm_absent"), std::string::npos) << m.message();
}

TEST_F(GpuMeasureTest, PreparedWeightsAreUnsupportedOnAGpuWorker) {
  v1::Measurement m = MeasurePtx("gemm_prepared", GemmPtx("gemm_prepared"), FastTiming(), 16, {},
                                 GemmWorkload() + ",weights=prepared");
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_UNSUPPORTED) << m.message();
  EXPECT_NE(m.message().find("weights=prepared is measured on CPU workers only"), std::string::npos)
      << m.message();
}

TEST_F(GpuMeasureTest, ABlockBeyondTheDevicesLimitIsUnsupportedNamingTheLimit) {
  v1::Measurement m = MeasurePtx("gemm_big", GemmPtx("gemm_big"), FastTiming(), 128);
  EXPECT_EQ(m.error_kind(), v1::ERROR_KIND_UNSUPPORTED) << m.message();
  EXPECT_NE(m.message().find("threads per block"), std::string::npos) << m.message();
}

TEST_F(GpuMeasureTest, AHostAbiLibraryThatReturnsAnErrorIsARuntimeCrash) {
  v1::MeasureRequest request;
  request.set_trial_id(++trial_id_);
  request.set_workload(GemmWorkload());
  request.set_target(StrCat("cuda -arch=", supervisor_->gpu().arch()));
  const std::string path = testing::BuiltOrBundled(TUNE_TEST_GPU_HOST_ABI);
  v1::Artifact* a = request.mutable_artifact();
  a->set_hash(ArtifactHash(CodeFormat::kSharedObject, testing::ReadFileBytes(path)));
  a->set_entry_symbol("gpu_entry_fails");
  a->set_format(v1::ARTIFACT_FORMAT_SHARED_OBJECT);
  *request.mutable_timing() = FastTiming();
  absl::StatusOr<v1::Measurement> m = supervisor_->Measure(request, path);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->error_kind(), v1::ERROR_KIND_RUNTIME_CRASH) << m->message();
  EXPECT_NE(m->message().find("entry returned 7"), std::string::npos) << m->message();
}

TEST_F(GpuMeasureTest, AHostEntryIsTimedByGraphReplayOfItsCallsOnTheStream) {
  v1::Measurement m = MeasureHostEntry("gpu_entry_gemm");
  ASSERT_EQ(m.error_kind(), v1::ERROR_KIND_NONE) << m.message();
  EXPECT_EQ(m.gpu_clock(), v1::GPU_CLOCK_GRAPH) << m.library_info();
  EXPECT_FALSE(m.host_round_secs().empty());
  std::cout << "host entry gemm " << GemmWorkload() << ": graph " << MedianOf(m.round_secs()) * 1e6
            << " us, events " << MedianOf(m.host_round_secs()) * 1e6 << " us per call\n";
}

TEST_F(GpuMeasureTest, AHostEntryThatSynchronisesIsTimedByEventsAndTheRecordSaysWhy) {
  v1::Measurement m = MeasureHostEntry("gpu_entry_gemm_synchronizes");
  ASSERT_EQ(m.error_kind(), v1::ERROR_KIND_NONE) << m.message();
  EXPECT_EQ(m.gpu_clock(), v1::GPU_CLOCK_EVENTS);
  EXPECT_NE(m.library_info().find("timing: events, graph capture refused"), std::string::npos)
      << m.library_info();
  EXPECT_NE(m.library_info().find("entry returned 4"), std::string::npos) << m.library_info();
  ASSERT_FALSE(m.round_secs().empty());
  EXPECT_EQ(std::vector<double>(m.round_secs().begin(), m.round_secs().end()),
            std::vector<double>(m.host_round_secs().begin(), m.host_round_secs().end()));
  // The refused capture left the child's stream usable: the next trial is timed by graph.
  v1::Measurement next = MeasureHostEntry("gpu_entry_gemm");
  ASSERT_EQ(next.error_kind(), v1::ERROR_KIND_NONE) << next.message();
  EXPECT_EQ(next.gpu_clock(), v1::GPU_CLOCK_GRAPH) << next.library_info();
}

}  // namespace
}  // namespace tune::rpc
