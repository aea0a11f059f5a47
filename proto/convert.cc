#include "proto/convert.h"

#include <algorithm>

#include "common/strings.h"

namespace tune {

v1::ErrorKind ErrorKindToProto(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNone:
      return v1::ERROR_KIND_NONE;
    case ErrorKind::kBuildError:
      return v1::ERROR_KIND_BUILD_ERROR;
    case ErrorKind::kLoadError:
      return v1::ERROR_KIND_LOAD_ERROR;
    case ErrorKind::kRuntimeCrash:
      return v1::ERROR_KIND_RUNTIME_CRASH;
    case ErrorKind::kTimeout:
      return v1::ERROR_KIND_TIMEOUT;
    case ErrorKind::kWrongAnswer:
      return v1::ERROR_KIND_WRONG_ANSWER;
    case ErrorKind::kUnsupported:
      return v1::ERROR_KIND_UNSUPPORTED;
    case ErrorKind::kWorkerLost:
      return v1::ERROR_KIND_WORKER_LOST;
    case ErrorKind::kWorkerError:
      return v1::ERROR_KIND_WORKER_ERROR;
  }
  return v1::ERROR_KIND_UNSPECIFIED;
}

v1::GpuClock GpuClockToProto(GpuClock clock) {
  switch (clock) {
    case GpuClock::kNone:
      return v1::GPU_CLOCK_UNSPECIFIED;
    case GpuClock::kEvents:
      return v1::GPU_CLOCK_EVENTS;
    case GpuClock::kGraph:
      return v1::GPU_CLOCK_GRAPH;
  }
  return v1::GPU_CLOCK_UNSPECIFIED;
}

GpuClock GpuClockFromProto(v1::GpuClock clock) {
  switch (clock) {
    case v1::GPU_CLOCK_EVENTS:
      return GpuClock::kEvents;
    case v1::GPU_CLOCK_GRAPH:
      return GpuClock::kGraph;
    case v1::GPU_CLOCK_UNSPECIFIED:
    case v1::GpuClock_INT_MIN_SENTINEL_DO_NOT_USE_:
    case v1::GpuClock_INT_MAX_SENTINEL_DO_NOT_USE_:
      break;
  }
  return GpuClock::kNone;  // unspecified, or a value from a newer peer
}

absl::StatusOr<ErrorKind> ErrorKindFromProto(v1::ErrorKind kind, std::string_view field) {
  switch (kind) {
    case v1::ERROR_KIND_NONE:
      return ErrorKind::kNone;
    case v1::ERROR_KIND_BUILD_ERROR:
      return ErrorKind::kBuildError;
    case v1::ERROR_KIND_LOAD_ERROR:
      return ErrorKind::kLoadError;
    case v1::ERROR_KIND_RUNTIME_CRASH:
      return ErrorKind::kRuntimeCrash;
    case v1::ERROR_KIND_TIMEOUT:
      return ErrorKind::kTimeout;
    case v1::ERROR_KIND_WRONG_ANSWER:
      return ErrorKind::kWrongAnswer;
    case v1::ERROR_KIND_UNSUPPORTED:
      return ErrorKind::kUnsupported;
    case v1::ERROR_KIND_WORKER_LOST:
      return ErrorKind::kWorkerLost;
    case v1::ERROR_KIND_WORKER_ERROR:
      return ErrorKind::kWorkerError;
    case v1::ERROR_KIND_UNSPECIFIED:
    case v1::ErrorKind_INT_MIN_SENTINEL_DO_NOT_USE_:
    case v1::ErrorKind_INT_MAX_SENTINEL_DO_NOT_USE_:
      break;
  }
  return absl::InvalidArgumentError(
      StrCat(field, " ", static_cast<int>(kind),
             " is not valid; expected ERROR_KIND_NONE .. ERROR_KIND_WORKER_ERROR"));
}

v1::TimingOptions TimingOptionsToProto(const TimingOptions& options) {
  v1::TimingOptions proto;
  proto.set_number(options.number);
  proto.set_repeat(options.repeat);
  proto.set_min_repeat_ms(options.min_repeat_ms);
  proto.set_timeout_ms(options.timeout_ms);
  proto.set_flush_cache(options.flush_cache);
  proto.set_seed(options.seed);
  proto.set_max_repeat(options.max_repeat);
  proto.set_target_ci(options.target_ci);
  return proto;
}

absl::StatusOr<TimingOptions> TimingOptionsFromProto(const v1::TimingOptions& proto) {
  struct Field {
    const char* name;
    int32_t value;
  };
  for (Field f : {Field{"timing.number", proto.number()}, Field{"timing.repeat", proto.repeat()},
                  Field{"timing.min_repeat_ms", proto.min_repeat_ms()},
                  Field{"timing.timeout_ms", proto.timeout_ms()},
                  Field{"timing.max_repeat", proto.max_repeat()}}) {
    if (f.value < 0) {
      return absl::InvalidArgumentError(
          StrCat(f.name, " = ", f.value, " is not valid; expected >= 0 (0 takes the default)"));
    }
  }
  TimingOptions options;
  if (proto.number() > 0) {
    options.number = proto.number();
  }
  if (proto.repeat() > 0) {
    options.repeat = proto.repeat();
  }
  if (proto.min_repeat_ms() > 0) {
    options.min_repeat_ms = proto.min_repeat_ms();
  }
  if (proto.timeout_ms() > 0) {
    options.timeout_ms = proto.timeout_ms();
  }
  if (!(proto.target_ci() >= 0 && proto.target_ci() < 1)) {
    return absl::InvalidArgumentError(StrCat("timing.target_ci = ", proto.target_ci(),
                                             " is not valid; expected 0 (the default) to below 1"));
  }
  if (proto.max_repeat() > 0) {
    options.max_repeat = proto.max_repeat();
  }
  if (proto.target_ci() > 0) {
    options.target_ci = proto.target_ci();
  }
  options.flush_cache = proto.flush_cache();
  if (proto.seed() != 0) {
    options.seed = proto.seed();
  }
  return options;
}

v1::Measurement MeasurementToProto(const Measurement& m) {
  v1::Measurement proto;
  proto.set_error_kind(ErrorKindToProto(m.error));
  proto.set_message(m.message);
  for (double secs : m.round_secs) {
    proto.add_round_secs(secs);
  }
  proto.set_number(m.number);
  proto.set_device_fingerprint(m.device_fingerprint);
  proto.set_library_info(m.library_info);
  proto.set_gpu_clock(GpuClockToProto(m.gpu_clock));
  for (double secs : m.host_round_secs) {
    proto.add_host_round_secs(secs);
  }
  return proto;
}

absl::StatusOr<Measurement> MeasurementFromProto(const v1::Measurement& proto) {
  Measurement m;
  absl::StatusOr<ErrorKind> kind = ErrorKindFromProto(proto.error_kind(), "measurement.error_kind");
  if (!kind.ok()) {
    return kind.status();
  }
  m.error = *kind;
  m.message = proto.message();
  m.round_secs.assign(proto.round_secs().begin(), proto.round_secs().end());
  m.number = proto.number();
  m.device_fingerprint = proto.device_fingerprint();
  m.library_info = proto.library_info();
  m.gpu_clock = GpuClockFromProto(proto.gpu_clock());
  m.host_round_secs.assign(proto.host_round_secs().begin(), proto.host_round_secs().end());
  return m;
}

v1::ArtifactFormat ArtifactFormatToProto(CodeFormat format) {
  switch (format) {
    case CodeFormat::kSharedObject:
      return v1::ARTIFACT_FORMAT_SHARED_OBJECT;
    case CodeFormat::kPtx:
      return v1::ARTIFACT_FORMAT_PTX;
    case CodeFormat::kHsaco:
      return v1::ARTIFACT_FORMAT_HSACO;
  }
  return v1::ARTIFACT_FORMAT_UNSPECIFIED;
}

absl::StatusOr<CodeFormat> ArtifactFormatFromProto(v1::ArtifactFormat format,
                                                   std::string_view field) {
  switch (format) {
    case v1::ARTIFACT_FORMAT_SHARED_OBJECT:
      return CodeFormat::kSharedObject;
    case v1::ARTIFACT_FORMAT_PTX:
      return CodeFormat::kPtx;
    case v1::ARTIFACT_FORMAT_HSACO:
      return CodeFormat::kHsaco;
    case v1::ARTIFACT_FORMAT_UNSPECIFIED:
    case v1::ArtifactFormat_INT_MIN_SENTINEL_DO_NOT_USE_:
    case v1::ArtifactFormat_INT_MAX_SENTINEL_DO_NOT_USE_:
      break;
  }
  return absl::InvalidArgumentError(
      StrCat(field, " ", static_cast<int>(format),
             " is not valid; expected ARTIFACT_FORMAT_SHARED_OBJECT, _PTX or _HSACO"));
}

v1::ArtifactCode ArtifactCodeToProto(std::string hash, CodeFormat format, std::string code) {
  v1::ArtifactCode out;
  out.set_hash(std::move(hash));
  switch (format) {
    case CodeFormat::kSharedObject:
      out.set_shared_object(std::move(code));
      break;
    case CodeFormat::kPtx:
      out.set_ptx(std::move(code));
      break;
    case CodeFormat::kHsaco:
      out.set_code_object(std::move(code));
      break;
  }
  return out;
}

v1::LaunchDims LaunchDimsToProto(const GpuLaunch& launch) {
  v1::LaunchDims proto;
  proto.set_grid_x(launch.grid[0]);
  proto.set_grid_y(launch.grid[1]);
  proto.set_grid_z(launch.grid[2]);
  proto.set_block_x(launch.block[0]);
  proto.set_block_y(launch.block[1]);
  proto.set_block_z(launch.block[2]);
  proto.set_shared_bytes(launch.dynamic_shared_bytes);
  for (uint32_t arg : launch.zeroed_args) {
    proto.add_zeroed_args(arg);
  }
  for (const GpuTensorMap& map : launch.tensor_maps) {
    v1::TensorMapDesc* desc = proto.add_tensor_maps();
    desc->set_arg(map.arg);
    desc->set_element_bytes(map.element_bytes);
    desc->set_rank(map.rank);
    // A rank the launcher will refuse still travels: its check names it.
    const uint32_t rank = std::min<uint32_t>(map.rank, map.dims.size());
    for (uint32_t d = 0; d < rank; ++d) {
      desc->add_dims(map.dims[d]);
      desc->add_box(map.box[d]);
      if (d + 1 < rank) {
        desc->add_strides(map.strides[d]);
      }
    }
    desc->set_swizzle_bytes(map.swizzle_bytes);
    if (map.im2col) {
      desc->set_im2col(true);
      for (uint32_t d = 0; d + 2 < rank && d < map.lower_corner.size(); ++d) {
        desc->add_lower_corner(map.lower_corner[d]);
        desc->add_upper_corner(map.upper_corner[d]);
      }
    }
    if (map.element_strides != std::array<uint32_t, 5>{1, 1, 1, 1, 1}) {
      for (uint32_t d = 0; d < rank; ++d) {
        desc->add_element_strides(map.element_strides[d]);
      }
    }
  }
  proto.set_cluster_x(launch.cluster[0]);
  proto.set_cluster_y(launch.cluster[1]);
  proto.set_cluster_z(launch.cluster[2]);
  return proto;
}

GpuLaunch LaunchFromProto(const v1::LaunchDims& proto) {
  auto one = [](uint32_t v) { return v == 0 ? 1u : v; };
  GpuLaunch launch;
  launch.grid = {one(proto.grid_x()), one(proto.grid_y()), one(proto.grid_z())};
  launch.block = {one(proto.block_x()), one(proto.block_y()), one(proto.block_z())};
  launch.dynamic_shared_bytes = proto.shared_bytes();
  launch.zeroed_args.assign(proto.zeroed_args().begin(), proto.zeroed_args().end());
  for (const v1::TensorMapDesc& desc : proto.tensor_maps()) {
    GpuTensorMap map;
    map.arg = desc.arg();
    map.element_bytes = desc.element_bytes();
    map.rank = desc.rank();
    for (int d = 0; d < desc.dims_size() && d < static_cast<int>(map.dims.size()); ++d) {
      map.dims[d] = desc.dims(d);
    }
    for (int d = 0; d < desc.strides_size() && d < static_cast<int>(map.strides.size()); ++d) {
      map.strides[d] = desc.strides(d);
    }
    for (int d = 0; d < desc.box_size() && d < static_cast<int>(map.box.size()); ++d) {
      map.box[d] = desc.box(d);
    }
    map.swizzle_bytes = desc.swizzle_bytes();
    map.im2col = desc.im2col();
    for (int d = 0; d < desc.lower_corner_size() && d < static_cast<int>(map.lower_corner.size());
         ++d) {
      map.lower_corner[d] = desc.lower_corner(d);
    }
    for (int d = 0; d < desc.upper_corner_size() && d < static_cast<int>(map.upper_corner.size());
         ++d) {
      map.upper_corner[d] = desc.upper_corner(d);
    }
    for (int d = 0;
         d < desc.element_strides_size() && d < static_cast<int>(map.element_strides.size()); ++d) {
      map.element_strides[d] = desc.element_strides(d);
    }
    launch.tensor_maps.push_back(map);
  }
  launch.cluster = {one(proto.cluster_x()), one(proto.cluster_y()), one(proto.cluster_z())};
  return launch;
}

}  // namespace tune
