// TokenInfo: a client token as the tuning log keeps it (plain type; the tokens table is
// TuningLog's, tokens.cc).
#pragma once

#include <cstdint>
#include <string>

#include "common/token.h"

namespace tune {

/// The secret only as its hash (common/token.h).
struct TokenInfo {
  std::string id;
  std::string name;
  Role role = Role::kRead;
  std::string secret_hash;
  int64_t created_at_ms = 0;
  int64_t revoked_at_ms = 0;  // 0 while valid
};

}  // namespace tune
