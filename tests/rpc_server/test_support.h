// Shared helpers of the rpc_server tests: temporary directories, requests for the fixture
// kernels (kernels/*.c) and supervisor options that start the real tune-server as the child.
#pragma once

#include <cstdint>
#include <string>

#include "common/files.h"  // TempDir, ReadFile
#include "rpc_server/supervisor.h"
#include "tune/v1/worker.pb.h"

namespace tune::rpc::testing {

/// The workload the fixture kernels compute.
std::string FixtureWorkload();

/// The bytes of a file (fails the test if it cannot be read).
std::string ReadFileBytes(const std::string& path);

/// Timing that keeps tests fast: 3 rounds of at least 5 ms; a 30 s deadline that only a hang
/// reaches, however loaded the machine.
v1::TimingOptions FastTiming();

/// A request to measure `symbol` from the shared object at `library` (its hash is the file's
/// ArtifactHash; measure it with MeasureSupervisor::Measure(request, library)).
v1::MeasureRequest FixtureRequest(uint64_t trial_id, const std::string& library,
                                  const std::string& symbol,
                                  const v1::TimingOptions& timing = FastTiming());

/// Supervisor options with tune-server as the child and a 200 ms slack.
/// `build_path` (a file the build made), or when it does not exist, the file of that name beside
/// the running test binary or in ../lib of it (a relocated bundle, deploy/bundle/).
std::string BuiltOrBundled(const std::string& build_path);

SupervisorOptions FixtureSupervisorOptions();

}  // namespace tune::rpc::testing
