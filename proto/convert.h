// Conversions between the wire types of tune.v1 (common.proto, worker.proto) and the C++ types of
// common/measurement.h and common/gpu_arch.h, shared by the daemon and the worker.
#pragma once

#include "absl/status/statusor.h"
#include "common/artifact_hash.h"
#include "common/gpu_arch.h"
#include "common/measurement.h"
#include "tune/v1/common.pb.h"
#include "tune/v1/worker.pb.h"

namespace tune {

/// The wire enum of an ErrorKind (kNone -> ERROR_KIND_NONE, ...).
v1::ErrorKind ErrorKindToProto(ErrorKind kind);

/// The ErrorKind of a wire enum. ERROR_KIND_UNSPECIFIED and unknown values are
/// InvalidArgument naming `field`.
absl::StatusOr<ErrorKind> ErrorKindFromProto(v1::ErrorKind kind,
                                             std::string_view field = "error_kind");

v1::GpuClock GpuClockToProto(GpuClock clock);
/// GPU_CLOCK_UNSPECIFIED (and a value this build does not know) is GpuClock::kNone.
GpuClock GpuClockFromProto(v1::GpuClock clock);

v1::TimingOptions TimingOptionsToProto(const TimingOptions& options);

/// The timing options of a wire message, with common/measurement.h's default for every field
/// left at 0. Negative values are InvalidArgument naming the field and the accepted range.
absl::StatusOr<TimingOptions> TimingOptionsFromProto(const v1::TimingOptions& proto);

v1::Measurement MeasurementToProto(const Measurement& m);

v1::ArtifactFormat ArtifactFormatToProto(CodeFormat format);
/// The CodeFormat of a wire format; UNSPECIFIED and unknown values are InvalidArgument naming
/// `field`.
absl::StatusOr<CodeFormat> ArtifactFormatFromProto(v1::ArtifactFormat format,
                                                   std::string_view field = "artifact.format");

/// The wire form of an artifact's code: `code` in the oneof member that `format` names.
v1::ArtifactCode ArtifactCodeToProto(std::string hash, CodeFormat format, std::string code);

/// The wire form of a GPU kernel's launch: geometry, zeroed arguments, tensor maps (dims and box
/// with `rank` entries, strides with rank - 1) and cluster.
v1::LaunchDims LaunchDimsToProto(const GpuLaunch& launch);

/// The launch of a wire message. Never fails: a grid, block or cluster entry of 0 is 1, and a
/// tensor map's entries past its rank (or past 5) take GpuTensorMap's defaults; whether the
/// maps and the cluster can be launched is the launcher's check (it names what is wrong).
GpuLaunch LaunchFromProto(const v1::LaunchDims& proto);

/// The measurement of a wire message; an unspecified error kind is InvalidArgument.
absl::StatusOr<Measurement> MeasurementFromProto(const v1::Measurement& proto);

}  // namespace tune
