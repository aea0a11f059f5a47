// TuningLog's client tokens: the tokens table (schema 8).
#include "common/clock.h"
#include "common/status.h"
#include "common/strings.h"
#include "db/sqlite.h"
#include "db/tuning_log.h"

namespace tune {
namespace {

constexpr size_t kMaxTokenName = 64;

absl::Status CheckTokenName(std::string_view name) {
  bool valid = !name.empty() && name.size() <= kMaxTokenName;
  for (char c : name) {
    valid = valid && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '@' || c == '-');
  }
  if (!valid) {
    return absl::InvalidArgumentError(StrCat("token name '", name,
                                             "' is not valid; accepted: 1-64 characters of "
                                             "letters, digits and . _ @ -"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status TuningLog::AddToken(const TokenInfo& token) {
  RETURN_IF_ERROR(RequireWritable("add a token"));
  RETURN_IF_ERROR(CheckTokenName(token.name));
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Statement exists, db_->Prepare("SELECT 1 FROM tokens WHERE id = ?"));
  exists.BindAll(token.id);
  ASSIGN_OR_RETURN(bool found, exists.Step());
  if (found) {
    return absl::AlreadyExistsError(StrCat("token id ", token.id, " is already in ", path_));
  }
  ASSIGN_OR_RETURN(sqlite::Statement insert,
                   db_->Prepare("INSERT INTO tokens (id, name, role, secret_sha256, "
                                "created_at_ms, revoked_at_ms) VALUES (?, ?, ?, ?, ?, 0)"));
  insert.BindAll(token.id, token.name, RoleName(token.role), token.secret_hash,
                 token.created_at_ms != 0 ? token.created_at_ms : UnixNowMs());
  return insert.Run();
}

absl::Status TuningLog::RevokeToken(std::string_view id) {
  RETURN_IF_ERROR(RequireWritable("revoke a token"));
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Statement exists, db_->Prepare("SELECT 1 FROM tokens WHERE id = ?"));
  exists.BindAll(id);
  ASSIGN_OR_RETURN(bool found, exists.Step());
  if (!found) {
    return absl::NotFoundError(StrCat("no token with id '", id, "' in ", path_));
  }
  ASSIGN_OR_RETURN(sqlite::Statement revoke, db_->Prepare("UPDATE tokens SET revoked_at_ms = ? "
                                                          "WHERE id = ? AND revoked_at_ms = 0"));
  revoke.BindAll(UnixNowMs(), id);
  return revoke.Run();
}

absl::StatusOr<std::vector<TokenInfo>> TuningLog::ListTokens() {
  std::lock_guard<std::mutex> lock(mu_);
  ASSIGN_OR_RETURN(sqlite::Statement select,
                   db_->Prepare("SELECT id, name, role, secret_sha256, created_at_ms, "
                                "revoked_at_ms FROM tokens ORDER BY created_at_ms, id"));
  std::vector<TokenInfo> tokens;
  while (true) {
    ASSIGN_OR_RETURN(bool row, select.Step());
    if (!row) {
      break;
    }
    TokenInfo token;
    token.id = select.ColumnText(0);
    token.name = select.ColumnText(1);
    absl::StatusOr<Role> role = ParseRole(select.ColumnText(2));
    if (!role.ok()) {
      return absl::DataLossError(
          StrCat(path_, ": token ", token.id, " has an unknown role: ", role.status().message()));
    }
    token.role = *role;
    token.secret_hash = select.ColumnText(3);
    token.created_at_ms = select.ColumnInt64(4);
    token.revoked_at_ms = select.ColumnInt64(5);
    tokens.push_back(std::move(token));
  }
  return tokens;
}

}  // namespace tune
