#include "tuner/auth/auth.h"

#include "common/clock.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/strings.h"

namespace tune::tuner {
namespace {

constexpr auto kReloadAfter = std::chrono::seconds(1);

}  // namespace

Authorizer::Authorizer(TuningLog* log) : log_(log) {
  local_worker_ = NewToken();
  local_worker_token_ = TokenText(local_worker_);
}

absl::StatusOr<std::unique_ptr<Authorizer>> Authorizer::Create(TuningLog* log) {
  std::unique_ptr<Authorizer> authorizer(new Authorizer(log));
  std::lock_guard<std::mutex> lock(authorizer->mu_);
  RETURN_IF_ERROR(authorizer->ReloadLocked());
  return authorizer;
}

absl::Status Authorizer::ReloadLocked() {
  ASSIGN_OR_RETURN(std::vector<TokenInfo> tokens, log_->ListTokens());
  tokens_.clear();
  for (TokenInfo& token : tokens) {
    tokens_.emplace(token.id, std::move(token));
  }
  loaded_at_ = std::chrono::steady_clock::now();
  return absl::OkStatus();
}

void Authorizer::ReloadIfStaleLocked() {
  if (std::chrono::steady_clock::now() - loaded_at_ <= kReloadAfter) {
    return;
  }
  if (absl::Status s = ReloadLocked(); !s.ok()) {
    Logger("auth")->error("reading the tokens: {}", s.message());
  }
}

bool Authorizer::enabled() {
  std::lock_guard<std::mutex> lock(mu_);
  ReloadIfStaleLocked();
  return !tokens_.empty();
}

absl::StatusOr<Caller> Authorizer::Check(std::string_view authorization, Role needed) {
  std::lock_guard<std::mutex> lock(mu_);
  ReloadIfStaleLocked();  // a log that cannot be read keeps the old copy: it never opens up
  absl::StatusOr<TokenParts> token = ParseBearer(authorization);
  // The local workers' token is valid whether tokens are on or not.
  if (token.ok() && token->id == local_worker_.id) {
    if (!ConstantTimeEquals(token->secret, local_worker_.secret)) {
      return absl::UnauthenticatedError("the token's secret does not match");
    }
    if (!RoleGrants(Role::kWorker, needed)) {
      return absl::PermissionDeniedError(StrCat("this request needs a token with role ",
                                                RoleName(needed), "; the token has role worker"));
    }
    return Caller{local_worker_.id, "local-worker", Role::kWorker};
  }
  if (tokens_.empty()) {
    // A daemon without tokens is open to every caller that reaches it, but never so far as to
    // hand out the first admin token: that one comes from the daemon's own host.
    if (needed == Role::kAdmin) {
      return absl::UnauthenticatedError(
          StrCat("this request needs an admin token, and ", log_->path(),
                 " holds no token yet: create the first one on the daemon's host with `tune-daemon "
                 "token create --db ",
                 log_->path(), " --name NAME --role admin`"));
    }
    return Caller{};
  }
  const std::string needs = StrCat("this request needs a token with role ", RoleName(needed),
                                   needed == Role::kWorker ? "" : " (or one that grants it)");
  if (authorization.empty()) {
    return absl::UnauthenticatedError(
        StrCat("no token given; ", needs, ": pass --token-file or set TUNE_TOKEN"));
  }
  if (!token.ok()) {
    return absl::UnauthenticatedError(StrCat(token.status().message(), "; ", needs));
  }
  auto it = tokens_.find(token->id);
  if (it == tokens_.end() ||
      !ConstantTimeEquals(HashTokenSecret(token->secret), it->second.secret_hash)) {
    return absl::UnauthenticatedError(StrCat("token ", token->id, " is not known; ", needs));
  }
  const TokenInfo& info = it->second;
  if (info.revoked_at_ms != 0) {
    return absl::UnauthenticatedError(
        StrCat("token ", info.id, " (", info.name, ") was revoked; ", needs));
  }
  if (!RoleGrants(info.role, needed)) {
    return absl::PermissionDeniedError(
        StrCat(needs, "; token ", info.id, " (", info.name, ") has role ", RoleName(info.role)));
  }
  return Caller{info.id, info.name, info.role};
}

absl::StatusOr<Authorizer::CreatedToken> Authorizer::CreateToken(std::string_view name, Role role) {
  TokenParts parts = NewToken();
  TokenInfo info;
  info.id = parts.id;
  info.name = std::string(name);
  info.role = role;
  info.secret_hash = HashTokenSecret(parts.secret);
  info.created_at_ms = UnixNowMs();
  RETURN_IF_ERROR(log_->AddToken(info));
  std::lock_guard<std::mutex> lock(mu_);
  tokens_[info.id] = info;
  return CreatedToken{std::move(info), TokenText(parts)};
}

absl::StatusOr<TokenInfo> Authorizer::RevokeToken(std::string_view id) {
  RETURN_IF_ERROR(log_->RevokeToken(id));
  std::lock_guard<std::mutex> lock(mu_);
  RETURN_IF_ERROR(ReloadLocked());
  auto it = tokens_.find(id);
  if (it == tokens_.end()) {
    return absl::NotFoundError(StrCat("token ", id, " is gone from ", log_->path()));
  }
  return it->second;
}

absl::StatusOr<std::vector<TokenInfo>> Authorizer::ListTokens() { return log_->ListTokens(); }

}  // namespace tune::tuner
