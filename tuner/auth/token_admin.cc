#include "tuner/auth/token_admin.h"

#include <cstdio>
#include <string>

#include "CLI/CLI.hpp"
#include "common/files.h"
#include "common/logging.h"
#include "common/strings.h"
#include "tuner/api/client_format.h"
#include "tuner/api/proto_convert.h"
#include "tuner/auth/auth.h"

namespace tune::tuner {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNotFound = 3;

int Fail(int code, absl::string_view message) {
  fmt::print(stderr, "tune-daemon token: {}\n", message);
  return code;
}

int ExitCodeOf(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      return kExitUsage;
    case absl::StatusCode::kNotFound:
      return kExitNotFound;
    default:
      return kExitFailed;
  }
}

}  // namespace

int TokenAdminMain(int argc, char** argv) {
  CLI::App app{"tune-daemon token: client tokens of a tuning log"};
  app.require_subcommand(1);
  std::string db;
  std::string name;
  std::string role;
  std::string id;
  CLI::App* create = app.add_subcommand("create", "create a token and print it (shown once)");
  create->add_option("--db", db, "the tuning log")->required();
  create->add_option("--name", name, "who holds it (letters, digits and . _ @ -)")->required();
  create->add_option("--role", role, "read, submit, admin or worker")->required();
  CLI::App* list = app.add_subcommand("list", "list the tokens (never their secrets)");
  list->add_option("--db", db, "the tuning log")->required();
  CLI::App* revoke = app.add_subcommand("revoke", "revoke a token by id");
  revoke->add_option("--db", db, "the tuning log")->required();
  revoke->add_option("id", id, "the token's id (16 hex digits)")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (absl::Status s = InitLogging(""); !s.ok()) {
    return Fail(kExitUsage, s.message());
  }

  absl::StatusOr<Role> parsed_role = Role::kRead;
  if (create->parsed()) {
    parsed_role = ParseRole(role);
    if (!parsed_role.ok()) {
      return Fail(kExitUsage, StrCat("--role: ", parsed_role.status().message()));
    }
  }
  if (!list->parsed() && !PathWritable(db)) {
    return Fail(kExitFailed, StrCat(db,
                                    ": the tuning log is read-only here (its file system or "
                                    "permissions do not allow writing); tokens cannot change"));
  }
  absl::StatusOr<std::unique_ptr<TuningLog>> log = TuningLog::Open(
      db, list->parsed() ? TuningLog::Mode::kReadOnly : TuningLog::Mode::kReadWrite);
  if (!log.ok()) {
    return Fail(kExitFailed, log.status().message());
  }
  absl::StatusOr<std::unique_ptr<Authorizer>> authorizer = Authorizer::Create(log->get());
  if (!authorizer.ok()) {
    return Fail(kExitFailed, authorizer.status().message());
  }
  if (create->parsed()) {
    absl::StatusOr<Authorizer::CreatedToken> created =
        (*authorizer)->CreateToken(name, *parsed_role);
    if (!created.ok()) {
      return Fail(ExitCodeOf(created.status()), created.status().message());
    }
    Logger("audit")->info("token {} ({}, role {}) created by `tune-daemon token create` on {}",
                          created->info.id, name, role, db);
    fmt::print("{}\n", created->text);
    fmt::print(stderr, "token for {} (role {}) stored in {}; it is shown only now\n", name, role,
               db);
    return kExitOk;
  }
  if (revoke->parsed()) {
    absl::StatusOr<TokenInfo> revoked = (*authorizer)->RevokeToken(id);
    if (!revoked.ok()) {
      return Fail(ExitCodeOf(revoked.status()), revoked.status().message());
    }
    Logger("audit")->info("token {} ({}) revoked by `tune-daemon token revoke` on {}", id,
                          revoked->name, db);
    fmt::print("revoked {}\n", id);
    return kExitOk;
  }
  absl::StatusOr<std::vector<TokenInfo>> tokens = (*authorizer)->ListTokens();
  if (!tokens.ok()) {
    return Fail(kExitFailed, tokens.status().message());
  }
  std::vector<v1::TokenInfo> rows;
  for (const TokenInfo& token : *tokens) {
    rows.push_back(TokenToProto(token));
  }
  fmt::print("{}", TokensTable(rows));
  return kExitOk;
}

}  // namespace tune::tuner
