// How tune reads a codegen plugin's answers (proto/tune/v1/plugin.proto), as functions of the
// messages alone, so that tests and fuzz/ reach them without running a plugin. Internal to
// codegen/plugins: includers link tune_proto themselves.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/workload.h"
#include "search/config_space.h"
#include "tune/v1/plugin.pb.h"

namespace tune {

/// A plugin's standard output as its PluginResponse. Bytes that are not a PluginResponse, or a
/// response that carries an error, are InvalidArgument "codegen plugin <plugin>: ...".
absl::StatusOr<v1::PluginResponse> ParsePluginResponse(std::string_view plugin,
                                                       std::string_view bytes);

/// The operator of a described family, once its op, target kind and version are checked (the
/// name is checked against the other templates by WithCodegenPlugins). InvalidArgument
/// naming the field otherwise.
absl::StatusOr<OpKind> CheckPluginFamily(const v1::PluginFamily& family);

/// OK when a supported space reply describes a space: every knob has a non-empty name of its
/// own and at least one candidate value, no value twice, and each default names a candidate of
/// its knob. InvalidArgument naming the knob otherwise (the daemon then treats the family as
/// not applying to that workload; it must never abort on a plugin's answer).
absl::Status CheckSpaceReply(const v1::SpaceReply& reply);

/// The space of a reply that CheckSpaceReply accepts (empty when it is not supported).
ConfigSpace SpaceOfReply(const v1::SpaceReply& reply);

/// The config to measure first: each knob's default, else its first candidate.
Config DefaultOfReply(const v1::SpaceReply& reply);

}  // namespace tune
