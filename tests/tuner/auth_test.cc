// Tokens and roles, from the text form to the Authorizer's verdicts, on a real tuning log.
#include "tuner/auth/auth.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "common/files.h"
#include "common/token.h"
#include "db/tuning_log.h"
#include "net/tls.h"

namespace tune::tuner {
namespace {

using ::testing::HasSubstr;

TEST(TokenTest, ATokensTextParsesBackAndItsSecretIsStoredOnlyAsAHash) {
  TokenParts token = NewToken();
  EXPECT_EQ(token.id.size(), 16u);
  EXPECT_EQ(token.secret.size(), 64u);
  absl::StatusOr<TokenParts> parsed = ParseBearer("Bearer " + TokenText(token));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->id, token.id);
  EXPECT_EQ(parsed->secret, token.secret);
  EXPECT_NE(HashTokenSecret(token.secret), token.secret);
  EXPECT_EQ(HashTokenSecret(token.secret).size(), 64u);
  EXPECT_NE(NewToken().secret, token.secret);
}

TEST(TokenTest, MalformedTokensAreRefusedNamingTheFormWithoutEchoingThem) {
  const std::vector<std::string> malformed = {"",
                                              "tune_",
                                              "Bearer abc",
                                              "tune_0123456789abcdef_XYZ",
                                              "tune_0123456789ABCDEF_" + std::string(64, 'a'),
                                              "tune_0123456789abcdef-" + std::string(64, 'a')};
  for (const std::string& text : malformed) {
    absl::StatusOr<TokenParts> parsed = ParseToken(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_THAT(parsed.status().message(), HasSubstr("tune_<16 hex digits>_<64 hex digits>"));
  }
  absl::StatusOr<TokenParts> no_bearer = ParseBearer(TokenText(NewToken()));
  EXPECT_THAT(no_bearer.status().message(), HasSubstr("Bearer <token>"));
}

TEST(TokenTest, AdminGrantsEverythingSubmitGrantsReadAndWorkerOnlyItself) {
  EXPECT_TRUE(RoleGrants(Role::kAdmin, Role::kWorker));
  EXPECT_TRUE(RoleGrants(Role::kAdmin, Role::kSubmit));
  EXPECT_TRUE(RoleGrants(Role::kSubmit, Role::kRead));
  EXPECT_FALSE(RoleGrants(Role::kRead, Role::kSubmit));
  EXPECT_FALSE(RoleGrants(Role::kSubmit, Role::kAdmin));
  EXPECT_FALSE(RoleGrants(Role::kWorker, Role::kRead));
  EXPECT_FALSE(RoleGrants(Role::kRead, Role::kWorker));
  EXPECT_THAT(ParseRole("root").status().message(),
              HasSubstr("accepted: read, submit, admin, worker"));
}

// The text of a token just created.
absl::StatusOr<std::string> TextOf(absl::StatusOr<Authorizer::CreatedToken> created) {
  if (!created.ok()) {
    return created.status();
  }
  return created->text;
}

class AuthorizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = *TuningLog::Open(dir_.File("tuning.db"));
    authorizer_ = *Authorizer::Create(log_.get());
  }
  tune::TempDir dir_ = *tune::TempDir::Create();
  std::unique_ptr<TuningLog> log_;
  std::unique_ptr<Authorizer> authorizer_;
};

TEST_F(AuthorizerTest, WithNoTokenEverCreatedEveryRequestButAdminOnesIsAllowed) {
  EXPECT_FALSE(authorizer_->enabled());
  EXPECT_TRUE(authorizer_->Check("", Role::kSubmit).ok());
  EXPECT_TRUE(authorizer_->Check("Bearer nonsense", Role::kSubmit).ok());
  // The first admin token comes from the daemon's host, never from a caller.
  absl::Status admin = authorizer_->Check("", Role::kAdmin).status();
  EXPECT_EQ(admin.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(admin.message(), HasSubstr("tune-daemon token create"));
}

TEST_F(AuthorizerTest, OnceATokenExistsRequestsAreCheckedByRole) {
  absl::StatusOr<std::string> submit = TextOf(authorizer_->CreateToken("ci", Role::kSubmit));
  ASSERT_TRUE(submit.ok()) << submit.status();
  EXPECT_TRUE(authorizer_->enabled());
  EXPECT_EQ(authorizer_->Check("", Role::kRead).status().code(),
            absl::StatusCode::kUnauthenticated);
  absl::StatusOr<Caller> caller = authorizer_->Check("Bearer " + *submit, Role::kRead);
  ASSERT_TRUE(caller.ok()) << caller.status();
  EXPECT_EQ(caller->name, "ci");
  absl::Status denied = authorizer_->Check("Bearer " + *submit, Role::kAdmin).status();
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(denied.message(), HasSubstr("role admin"));
  EXPECT_THAT(denied.message(), HasSubstr("has role submit"));
  // The right id with another secret is not the token.
  TokenParts forged = *ParseToken(*submit);
  forged.secret = NewToken().secret;
  EXPECT_EQ(authorizer_->Check("Bearer " + TokenText(forged), Role::kRead).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(AuthorizerTest, RevokingTheLastTokenKeepsTokensRequired) {
  absl::StatusOr<std::string> admin = TextOf(authorizer_->CreateToken("root", Role::kAdmin));
  ASSERT_TRUE(admin.ok());
  ASSERT_TRUE(authorizer_->RevokeToken(ParseToken(*admin)->id).ok());
  EXPECT_TRUE(authorizer_->enabled());
  absl::Status revoked = authorizer_->Check("Bearer " + *admin, Role::kRead).status();
  EXPECT_EQ(revoked.code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(revoked.message(), HasSubstr("was revoked"));
  EXPECT_EQ(authorizer_->RevokeToken("0123456789abcdef").status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(AuthorizerTest, TheLocalWorkersTokenIsAWorkerTokenForThisProcessOnly) {
  ASSERT_TRUE(authorizer_->CreateToken("root", Role::kAdmin).ok());
  const std::string bearer = "Bearer " + authorizer_->LocalWorkerToken();
  EXPECT_TRUE(authorizer_->Check(bearer, Role::kWorker).ok());
  EXPECT_EQ(authorizer_->Check(bearer, Role::kRead).status().code(),
            absl::StatusCode::kPermissionDenied);
  // Not in the log: another daemon on the same log does not know it.
  std::unique_ptr<Authorizer> other = *Authorizer::Create(log_.get());
  EXPECT_EQ(other->Check(bearer, Role::kWorker).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST_F(AuthorizerTest, ATokenCreatedByAnotherProcessIsSeenWithoutRestart) {
  std::unique_ptr<TuningLog> second = *TuningLog::Open(dir_.File("tuning.db"));
  std::unique_ptr<Authorizer> offline = *Authorizer::Create(second.get());
  absl::StatusOr<std::string> token = TextOf(offline->CreateToken("late", Role::kRead));
  ASSERT_TRUE(token.ok());
  // The first authorizer reloads once its copy is a second old; poll for that event.
  bool seen = false;
  for (int i = 0; i < 3000 && !seen; ++i) {
    seen = authorizer_->Check("Bearer " + *token, Role::kRead).ok();
    if (!seen) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  EXPECT_TRUE(seen);
}

TEST_F(AuthorizerTest, BadTokenNamesAreRefusedNamingTheAcceptedForm) {
  absl::StatusOr<std::string> bad = TextOf(authorizer_->CreateToken("a b", Role::kRead));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("letters, digits and . _ @ -"));
  EXPECT_FALSE(authorizer_->enabled());
}

TEST(NetTest, LoopbackAddressesAreRecognisedAndOthersAreNot) {
  EXPECT_TRUE(net::IsLoopbackAddress("127.0.0.1:7070"));
  EXPECT_TRUE(net::IsLoopbackAddress("127.1.2.3:0"));
  EXPECT_TRUE(net::IsLoopbackAddress("localhost:7070"));
  EXPECT_TRUE(net::IsLoopbackAddress("[::1]:7070"));
  EXPECT_FALSE(net::IsLoopbackAddress("0.0.0.0:7070"));
  EXPECT_FALSE(net::IsLoopbackAddress("[::]:7070"));
  EXPECT_FALSE(net::IsLoopbackAddress("tuner.example:7070"));
  EXPECT_FALSE(net::IsLoopbackAddress("10.0.0.1:7070"));
}

TEST(NetTest, ANameThatStartsWith127IsNoLoopbackAddress) {
  EXPECT_FALSE(net::IsLoopbackAddress("127.attacker.example:7070"));
  EXPECT_FALSE(net::IsLoopbackAddress("127.0.0.1.nip.io:7070"));
  EXPECT_FALSE(net::IsLoopbackAddress("127.:7070"));
  EXPECT_FALSE(net::IsLoopbackAddress("[::2]:7070"));
  EXPECT_FALSE(net::IsLoopbackAddress("localhost.example:7070"));
  EXPECT_TRUE(net::IsLoopbackAddress("127.255.255.254:7070"));
  EXPECT_TRUE(net::IsLoopbackAddress("[::ffff:127.0.0.1]:7070"));
  EXPECT_FALSE(net::IsLoopbackAddress("[::ffff:10.0.0.1]:7070"));
}

TEST(NetTest, TlsFilesThatCannotBeUsedAreRefusedNamingTheFlag) {
  tune::TempDir dir = *tune::TempDir::Create();
  net::TlsFiles pair_only;
  pair_only.cert = "c.pem";
  pair_only.key = "k.pem";
  net::TlsFiles missing_ca;
  missing_ca.ca = dir.File("missing.pem");
  EXPECT_THAT(net::ChannelCredentialsFor(pair_only).status().message(),
              HasSubstr("--tls-ca is needed"));
  EXPECT_THAT(net::ServerCredentialsFor(missing_ca).status().message(),
              HasSubstr("--tls-ca needs --tls-cert and --tls-key"));
  EXPECT_THAT(net::ChannelCredentialsFor(missing_ca).status().message(),
              HasSubstr("--tls-ca " + dir.File("missing.pem") + ": cannot be read"));
  EXPECT_TRUE(net::ChannelCredentialsFor({}).ok());
  EXPECT_TRUE(net::ServerCredentialsFor({}).ok());
}

TEST(NetTest, ATokenFileGivesItsFirstLineAndAnEmptyOneIsRefused) {
  tune::TempDir dir = *tune::TempDir::Create();
  ASSERT_TRUE(WriteFileAtomically(dir.File("t"), "  tune_abc  \nsecond\n").ok());
  EXPECT_EQ(*net::ResolveToken(dir.File("t")), "tune_abc");
  ASSERT_TRUE(WriteFileAtomically(dir.File("empty"), "\n").ok());
  EXPECT_THAT(net::ResolveToken(dir.File("empty")).status().message(), HasSubstr("holds no token"));
  EXPECT_THAT(net::ResolveToken(dir.File("none")).status().message(), HasSubstr("cannot be read"));
}

}  // namespace
}  // namespace tune::tuner
