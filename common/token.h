// Client tokens: what a bearer token looks like, the roles it may carry and how it is stored.
//
// A token reads `tune_<id>_<secret>`: a 16-hex-digit id (public, names the token in lists and
// logs) and a 64-hex-digit secret (256 random bits). The tuning log keeps only the SHA-256 of the
// secret, so a copy of the log grants nothing. Requests carry it in the `authorization` metadata
// (gRPC) or header (HTTP) as `Bearer <token>`.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tune {

/// What a token may do. admin grants everything; submit grants read; worker is the role of a
/// tune-server dialing the daemon's WorkerLink and grants nothing else.
enum class Role { kRead, kSubmit, kAdmin, kWorker };

/// "read", "submit", "admin", "worker".
std::string_view RoleName(Role role);
/// A role by name; InvalidArgument naming the accepted names otherwise.
absl::StatusOr<Role> ParseRole(std::string_view name);
/// Whether a token holding `held` may make a request that needs `needed`.
bool RoleGrants(Role held, Role needed);

struct TokenParts {
  std::string id;      // 16 lowercase hex digits
  std::string secret;  // 64 lowercase hex digits
};

/// `bytes` bytes from the kernel's random source (via OpenSSL), as 2 * `bytes` lowercase hex
/// digits. A failing random source aborts.
std::string RandomHex(size_t bytes);
/// A fresh token from the kernel's random source.
TokenParts NewToken();
/// `tune_<id>_<secret>`.
std::string TokenText(const TokenParts& token);
/// Splits a token's text; InvalidArgument (never echoing the secret) naming the expected form.
absl::StatusOr<TokenParts> ParseToken(std::string_view text);
/// The token out of an `authorization` value `Bearer <token>`; InvalidArgument otherwise.
absl::StatusOr<TokenParts> ParseBearer(std::string_view authorization);
/// The stored form of a secret: SHA-256, lowercase hex.
std::string HashTokenSecret(std::string_view secret);
/// Compares two equal-length strings in time independent of where they differ.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace tune
