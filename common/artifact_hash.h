// What identifies an artifact's code everywhere (daemon, builder processes, worker caches): its
// format and a SHA-256 over the format's name and the code. Shared by codegen (which builds
// artifacts) and tune-server (which verifies what it caches), so both compute it one way.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tune {

/// What an artifact's code is and how it is loaded.
enum class CodeFormat : uint8_t {
  kSharedObject,  // an ELF shared object for the host CPU (dlopen)
  kPtx,           // PTX text for the CUDA driver
  kHsaco,         // an AMD HSA code object
};

/// The wire name of a format: "ARTIFACT_FORMAT_SHARED_OBJECT", "ARTIFACT_FORMAT_PTX",
/// "ARTIFACT_FORMAT_HSACO" (the names of tune.v1.ArtifactFormat).
std::string_view CodeFormatName(CodeFormat format);

/// SHA-256 of `bytes` as 64 lowercase hex digits.
std::string Sha256Hex(std::string_view bytes);

/// An artifact's identity: Sha256Hex of CodeFormatName(format), one NUL byte, then `code`.
std::string ArtifactHash(CodeFormat format, std::string_view code);

/// True for exactly 64 characters of [0-9a-f] (the form ArtifactHash returns).
bool IsArtifactHash(std::string_view hash);

}  // namespace tune
