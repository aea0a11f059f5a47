// Security on loopback, with real processes: client tokens and their roles on every call, mutual
// TLS between the daemon, its workers and its clients (certificates from
// deploy/tls/make-dev-certs.sh), and the refusal to serve plaintext beyond loopback.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "common/files.h"
#include "common/strings.h"
#include "db/tuning_log.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/harness.h"
#include "tests/e2e/token_util.h"
#include "tuner/api/client.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kExitDenied = 7;
constexpr int kExitUnreachable = 3;

// Development certificates in `dir`/`sub` (ca.pem, daemon.pem, worker.pem, client.pem, keys).
std::string MakeCerts(const TempDir& dir, const std::string& sub) {
  std::string out = dir.File(sub);
  CommandResult r = RunCommand({"/bin/bash", TUNE_MAKE_DEV_CERTS, out});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return out;
}

// Waits until `process`'s log contains `text`.
bool LogShows(Process& process, const std::string& text) {
  return WaitFor([&] { return process.Log().find(text) != std::string::npos; }, seconds(60));
}

TEST(SecurityTest, WithTokensEveryCallNeedsATokenWhoseRoleGrantsIt) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  const std::string admin = TokenFile(dir, "admin", CreateToken(db, "root", "admin"));
  const std::string read_token = CreateToken(db, "dashboard", "read");
  const std::string reader = TokenFile(dir, "read", read_token);
  const std::string submitter = TokenFile(dir, "submit", CreateToken(db, "ci", "submit"));
  // The log keeps the hash, never the secret.
  std::string secret = read_token.substr(read_token.rfind('_') + 1);
  ASSERT_EQ(secret.size(), 64u);
  ASSERT_THAT(*ReadFile(db), Not(HasSubstr(secret)));

  auto daemon = Daemon::Start(dir, db, {.local_workers = 1});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();

  CommandResult none = RunClient(address, {"jobs"});
  EXPECT_EQ(none.exit_code, kExitDenied);
  EXPECT_THAT(none.err, HasSubstr("no token given"));
  EXPECT_THAT(none.err, HasSubstr("role read"));

  EXPECT_EQ(RunClient(address, {"jobs", "--token-file", reader}).exit_code, 0);
  CommandResult read_submits =
      RunClient(address, {"submit", "--workload", "gemm:M=16,N=16,K=16", "--target",
                          "llvm -mcpu=native -threads=1", "--trials", "2", "--token-file", reader});
  EXPECT_EQ(read_submits.exit_code, kExitDenied);
  EXPECT_THAT(read_submits.err, HasSubstr("needs a token with role submit"));
  EXPECT_THAT(read_submits.err, HasSubstr("has role read"));

  // A submit token's job runs to the end: the local worker holds the daemon's own token.
  CommandResult submitted =
      RunClient(address, {"submit", "--workload", "gemm:M=16,N=16,K=16", "--target",
                          "llvm -mcpu=native -threads=1", "--trials", "2", "--strategy", "random",
                          "--wait", "--token-file", submitter});
  EXPECT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;
  // Reverify re-measures on workers like a job: a read token may not, a submit token may, and
  // the daemon writes an audit line naming the token.
  const std::vector<std::string> reverify = {
      "reverify", "--workload",  "gemm:M=16,N=16,K=16", "--target", "llvm -mcpu=native -threads=1",
      "--wait",   "--token-file"};
  std::vector<std::string> as_reader = reverify;
  as_reader.push_back(reader);
  CommandResult read_reverifies = RunClient(address, as_reader);
  EXPECT_EQ(read_reverifies.exit_code, kExitDenied);
  EXPECT_THAT(read_reverifies.err, HasSubstr("needs a token with role submit"));
  std::vector<std::string> as_submitter = reverify;
  as_submitter.push_back(submitter);
  CommandResult reverified = RunClient(address, as_submitter);
  EXPECT_EQ(reverified.exit_code, 0) << reverified.out << reverified.err;
  EXPECT_THAT(reverified.out, HasSubstr("1 confirmed"));
  EXPECT_THAT((*daemon)->process().Log(), HasSubstr("[audit] reverify job"));
  CommandResult jobs = RunClient(address, {"jobs", "--json", "--token-file", reader});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  nlohmann::json listed = nlohmann::json::parse(jobs.out);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0]["state"], "SUCCEEDED");

  // Only an admin manages tokens; a revoked token is refused from then on.
  EXPECT_EQ(RunClient(address, {"token", "list", "--token-file", submitter}).exit_code,
            kExitDenied);
  CommandResult tokens = RunClient(address, {"token", "list", "--json", "--token-file", admin});
  ASSERT_EQ(tokens.exit_code, 0) << tokens.err;
  nlohmann::json token_list = nlohmann::json::parse(tokens.out);
  ASSERT_EQ(token_list.size(), 3u);
  std::string read_id;
  for (const auto& t : token_list) {
    EXPECT_FALSE(t.contains("text"));
    if (t["name"] == "dashboard") {
      read_id = t["id"];
    }
  }
  ASSERT_FALSE(read_id.empty());
  EXPECT_EQ(RunClient(address, {"token", "revoke", read_id, "--token-file", admin}).exit_code, 0);
  CommandResult revoked = RunClient(address, {"jobs", "--token-file", reader});
  EXPECT_EQ(revoked.exit_code, kExitDenied);
  EXPECT_THAT(revoked.err, HasSubstr("was revoked"));
}

TEST(SecurityTest, AWorkerNeedsAWorkerTokenToRegister) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  const std::string admin = TokenFile(dir, "admin", CreateToken(db, "root", "admin"));
  const std::string submitter = TokenFile(dir, "submit", CreateToken(db, "ci", "submit"));
  const std::string worker_token = TokenFile(dir, "worker", CreateToken(db, "gpu-host", "worker"));
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();

  auto intruder = StartWorker(dir, address, "intruder", {"--token-file", submitter});
  ASSERT_TRUE(intruder.ok()) << intruder.status();
  EXPECT_TRUE(LogShows(**intruder, "refused this worker"));
  EXPECT_TRUE(LogShows(**intruder, "role worker"));

  auto worker = StartWorker(dir, address, "trusted", {"--token-file", worker_token});
  ASSERT_TRUE(worker.ok()) << worker.status();
  EXPECT_TRUE(LogShows(**worker, "registered with"));
  CommandResult workers = RunClient(address, {"workers", "--json", "--token-file", admin});
  ASSERT_EQ(workers.exit_code, 0) << workers.err;
  nlohmann::json listed = nlohmann::json::parse(workers.out);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["name"], "trusted");
}

TEST(SecurityTest, MutualTlsServesOnlyPeersWithCertificatesOfItsCa) {
  TempDir dir;
  const std::string certs = MakeCerts(dir, "tls");
  auto daemon =
      Daemon::Start(dir, dir.File("tuning.db"),
                    {.local_workers = 1,
                     .extra = {"--tls-cert", certs + "/daemon.pem", "--tls-key",
                               certs + "/daemon-key.pem", "--tls-ca", certs + "/ca.pem"}});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  const std::vector<std::string> client_tls = {"--tls-ca",   certs + "/ca.pem",
                                               "--tls-cert", certs + "/client.pem",
                                               "--tls-key",  certs + "/client-key.pem"};

  // A client with a certificate of the CA tunes through the local worker, itself on TLS.
  std::vector<std::string> submit = {"submit",
                                     "--workload",
                                     "gemm:M=16,N=16,K=16",
                                     "--target",
                                     "llvm -mcpu=native -threads=1",
                                     "--trials",
                                     "2",
                                     "--wait"};
  submit.insert(submit.end(), client_tls.begin(), client_tls.end());
  CommandResult submitted = RunClient(address, submit);
  EXPECT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;

  // Plaintext, and TLS without a client certificate, do not get through.
  CommandResult plaintext = RunClient(address, {"jobs", "--rpc-timeout-ms", "5000"});
  EXPECT_EQ(plaintext.exit_code, kExitUnreachable) << plaintext.out;
  CommandResult no_cert =
      RunClient(address, {"jobs", "--rpc-timeout-ms", "5000", "--tls-ca", certs + "/ca.pem"});
  EXPECT_EQ(no_cert.exit_code, kExitUnreachable) << no_cert.out;
  EXPECT_THAT(no_cert.err, HasSubstr("--tls-ca"));

  // A worker whose CA did not sign the daemon's certificate never registers, so it is sent
  // nothing; one of the daemon's CA does.
  const std::string other = MakeCerts(dir, "other");
  auto stranger = StartWorker(dir, address, "stranger",
                              {"--tls-ca", other + "/ca.pem", "--tls-cert", other + "/worker.pem",
                               "--tls-key", other + "/worker-key.pem"});
  ASSERT_TRUE(stranger.ok()) << stranger.status();
  EXPECT_TRUE(LogShows(**stranger, "not reachable yet (with TLS"));
  auto worker = StartWorker(dir, address, "remote",
                            {"--tls-ca", certs + "/ca.pem", "--tls-cert", certs + "/worker.pem",
                             "--tls-key", certs + "/worker-key.pem"});
  ASSERT_TRUE(worker.ok()) << worker.status();
  EXPECT_TRUE(LogShows(**worker, "registered with"));
  std::vector<std::string> list = {"workers", "--json"};
  list.insert(list.end(), client_tls.begin(), client_tls.end());
  CommandResult workers = RunClient(address, list);
  ASSERT_EQ(workers.exit_code, 0) << workers.err;
  std::string names;
  for (const auto& w : nlohmann::json::parse(workers.out)) {
    names += w["name"].get<std::string>() + " ";
  }
  EXPECT_THAT(names, HasSubstr("remote"));
  EXPECT_THAT(names, Not(HasSubstr("stranger")));
}

TEST(SecurityTest, ADaemonRefusesPlaintextBeyondLoopbackAndUnusableTlsFiles) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  CommandResult open =
      RunCommand({Binaries::Daemon(), "--listen", "0.0.0.0:0", "--db", db}, seconds(30));
  EXPECT_EQ(open.exit_code, 2);
  EXPECT_THAT(open.err, HasSubstr("--insecure"));
  EXPECT_THAT(open.err, HasSubstr("--tls-cert"));
  EXPECT_FALSE(std::filesystem::exists(db));

  const std::string not_pem = dir.File("not.pem");
  ASSERT_TRUE(WriteFileAtomically(not_pem, "hello\n").ok());
  CommandResult bad = RunCommand({Binaries::Daemon(), "--listen", "127.0.0.1:0", "--db", db,
                                  "--tls-cert", not_pem, "--tls-key", not_pem},
                                 seconds(30));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--tls-cert " + not_pem + ": is not PEM"));
  EXPECT_FALSE(std::filesystem::exists(db));

  CommandResult half =
      RunCommand({Binaries::Daemon(), "--listen", "127.0.0.1:0", "--db", db, "--tls-cert", not_pem},
                 seconds(30));
  EXPECT_EQ(half.exit_code, 2);
  EXPECT_THAT(half.err, HasSubstr("--tls-cert and --tls-key go together"));

  CommandResult bad_role = RunCommand(
      {Binaries::Daemon(), "token", "create", "--db", db, "--name", "x", "--role", "root"});
  EXPECT_EQ(bad_role.exit_code, 2);
  EXPECT_THAT(bad_role.err, HasSubstr("accepted: read, submit, admin, worker"));
  EXPECT_FALSE(std::filesystem::exists(db));
}

}  // namespace
}  // namespace tune::testing
