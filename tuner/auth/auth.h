// Authorizer: checks the bearer token of every request the daemon serves (gRPC and HTTP) against
// the tokens of the tuning log.
//
// Tokens are on once the log holds any token, revoked ones included: revoking the last token
// never opens a daemon again. With no token ever created, every request is allowed (a
// developer's loopback daemon; tune-daemon warns when it serves beyond loopback so) except
// those that need role admin: the first admin token comes only from `tune-daemon token create`
// on the daemon's host, never from a remote caller.
//
// The daemon's local workers get an ephemeral worker token held in memory only
// (LocalWorkerToken), so they work whether tokens are on or not.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/token.h"
#include "db/tuning_log.h"

namespace tune::tuner {

/// Who made a request, once allowed.
struct Caller {
  std::string token_id;  // empty when tokens are off
  std::string name;      // the token's name ("" when tokens are off)
  Role role = Role::kAdmin;
};

class Authorizer {
 public:
  /// Reads the log's tokens now and again when a check finds its copy older than a second, so
  /// a token created or revoked by another process is seen within a second.
  static absl::StatusOr<std::unique_ptr<Authorizer>> Create(TuningLog* log);

  /// Checks the `authorization` value of a request (empty when the request had none) against a
  /// request that needs `needed`. Unauthenticated when tokens are on and it carries no valid
  /// token (missing, malformed, unknown, revoked), and when `needed` is admin and the log holds
  /// no token yet (naming `tune-daemon token create`); PermissionDenied naming the role needed
  /// and the role held when its role does not grant `needed`.
  absl::StatusOr<Caller> Check(std::string_view authorization, Role needed);

  /// Whether requests need a token.
  bool enabled();

  /// A worker token valid for this process's lifetime only, for the local workers.
  const std::string& LocalWorkerToken() const { return local_worker_token_; }

  struct CreatedToken {
    TokenInfo info;
    std::string text;  // tune_<id>_<secret>: shown once
  };
  /// Creates a token (the log stores its hash).
  absl::StatusOr<CreatedToken> CreateToken(std::string_view name, Role role);
  /// Revokes a token by id and returns it as now stored; NotFound naming the id when there is
  /// none.
  absl::StatusOr<TokenInfo> RevokeToken(std::string_view id);
  /// Every token of the log, revoked ones included, without secrets.
  absl::StatusOr<std::vector<TokenInfo>> ListTokens();

 private:
  explicit Authorizer(TuningLog* log);
  absl::Status ReloadLocked();
  /// Reloads when the copy is older than a second; a failed read keeps the old copy (logged).
  void ReloadIfStaleLocked();

  TuningLog* log_;
  std::mutex mu_;
  std::map<std::string, TokenInfo, std::less<>> tokens_;  // by id
  std::chrono::steady_clock::time_point loaded_at_;
  TokenParts local_worker_;
  std::string local_worker_token_;
};

}  // namespace tune::tuner
