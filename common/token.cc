#include "common/token.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <array>

#include "common/artifact_hash.h"
#include "common/status.h"
#include "common/strings.h"
#include "fmt/format.h"

namespace tune {
namespace {

constexpr std::string_view kPrefix = "tune_";
constexpr size_t kIdHexDigits = 16;
constexpr size_t kSecretHexDigits = 64;
constexpr std::string_view kTokenForm = "tune_<16 hex digits>_<64 hex digits>";

bool IsLowerHex(std::string_view s, size_t length) {
  if (s.size() != length) {
    return false;
  }
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  TUNE_CHECK(RAND_bytes(reinterpret_cast<unsigned char*>(raw.data()), static_cast<int>(bytes)) == 1)
      << "the random source failed";
  std::string hex;
  hex.reserve(2 * bytes);
  for (unsigned char c : raw) {
    hex += fmt::format("{:02x}", c);
  }
  return hex;
}

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kRead:
      return "read";
    case Role::kSubmit:
      return "submit";
    case Role::kAdmin:
      return "admin";
    case Role::kWorker:
      return "worker";
  }
  return "unknown";
}

absl::StatusOr<Role> ParseRole(std::string_view name) {
  for (Role role : {Role::kRead, Role::kSubmit, Role::kAdmin, Role::kWorker}) {
    if (name == RoleName(role)) {
      return role;
    }
  }
  return absl::InvalidArgumentError(
      StrCat("role '", name, "' is not known; accepted: read, submit, admin, worker"));
}

bool RoleGrants(Role held, Role needed) {
  if (held == Role::kAdmin || held == needed) {
    return true;
  }
  return held == Role::kSubmit && needed == Role::kRead;
}

TokenParts NewToken() { return TokenParts{RandomHex(kIdHexDigits / 2), RandomHex(32)}; }

std::string TokenText(const TokenParts& token) {
  return StrCat(kPrefix, token.id, "_", token.secret);
}

absl::StatusOr<TokenParts> ParseToken(std::string_view text) {
  const size_t length = kPrefix.size() + kIdHexDigits + 1 + kSecretHexDigits;
  if (text.size() != length || !text.starts_with(kPrefix) ||
      text[kPrefix.size() + kIdHexDigits] != '_') {
    return absl::InvalidArgumentError(
        StrCat("the token is malformed (", text.size(), " characters); expected ", kTokenForm));
  }
  TokenParts parts{std::string(text.substr(kPrefix.size(), kIdHexDigits)),
                   std::string(text.substr(kPrefix.size() + kIdHexDigits + 1))};
  if (!IsLowerHex(parts.id, kIdHexDigits) || !IsLowerHex(parts.secret, kSecretHexDigits)) {
    return absl::InvalidArgumentError(
        StrCat("the token is malformed (not lowercase hex); expected ", kTokenForm));
  }
  return parts;
}

absl::StatusOr<TokenParts> ParseBearer(std::string_view authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  if (!authorization.starts_with(kBearer)) {
    return absl::InvalidArgumentError(StrCat(
        "the authorization value is not 'Bearer <token>' with a token of the form ", kTokenForm));
  }
  return ParseToken(authorization.substr(kBearer.size()));
}

std::string HashTokenSecret(std::string_view secret) { return Sha256Hex(secret); }

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace tune
