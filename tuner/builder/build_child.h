// The builder process: tune-daemon re-executed with `--build-child`, which turns configs into
// artifacts (template IR, lowering, LLVM, link) one task at a time on pipes, so that a crash,
// an abort or a hang in code generation ends the builder, never the daemon (builder_pool.h
// supervises it). The protocol is tune/v1/builder.proto, framed as in proto/framing.h.
#pragma once

#include <vector>

#include "codegen/compiler.h"
#include "tune/v1/builder.pb.h"
#include "tuner/builder/artifact_memo.h"

namespace tune::tuner {

/// The flag that turns tune-daemon into a builder process (first argument).
inline constexpr char kBuildChildFlag[] = "--build-child";
/// The builder reads requests from this descriptor and writes replies to the next one.
inline constexpr int kBuildRequestFd = 3;
inline constexpr int kBuildReplyFd = 4;

/// What a worker is told of a built artifact (everything but its code): hash, entry symbol,
/// format, the libraries it calls (which the worker must have preloaded; libraries the shared
/// object names itself, like libgomp, are the dynamic loader's), template, config, code size.
v1::Artifact ArtifactToProto(const Artifact& built);

/// Builds one task in this process: the artifact, its code and the config's features (read off
/// the kernel it lowered, for templates whose IR tune builds), or `error` naming why the config
/// does not build (an unknown template or version, a config outside the space, a codegen or
/// link failure). The config is lowered once (Compiler::Lower) and emitted from that. With a
/// `memo`, a config whose lowered IR was compiled before reuses that artifact (`reused` is set).
/// The task's template is looked up in `catalog`.
v1::BuildChildResult BuildOne(const Catalog& catalog, const v1::BuildChildTask& task,
                              ArtifactMemo* memo = nullptr);

/// Computes the features of a FeatureChildTask's configs in this process (TemplateFeatures):
/// one row per config, or `error` naming an unknown template or version, or a config that is
/// not a valid point of the space. The task's template is looked up in `catalog`.
v1::FeatureChildResult FeaturesOne(const Catalog& catalog, const v1::FeatureChildTask& task);

/// The builder's main loop on (in_fd, out_fd): answers the setup message, then builds each task
/// (or computes each feature task's rows) until `in_fd` reaches end of file or the daemon is gone.
/// Its catalog is made of the setup's manifests and plugins and `program_templates` (the
/// program's own: tune-fault-daemon's fault templates; none in tune-daemon). Returns the process
/// exit code: 0 after EOF, 1 when the pipes broke, the first message was not a setup or the
/// catalog cannot be loaded.
int RunBuildChild(int in_fd, int out_fd,
                  const std::vector<const KernelTemplate*>& program_templates = {});

}  // namespace tune::tuner
