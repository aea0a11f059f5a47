// The daemon's edges against callers it should not trust, with real processes on loopback: the
// first admin token, the audit lines of admin actions, a call without a token that sends a large
// request, an import whose stream carries a message that does not parse, a worker whose name
// would forge log lines, and a dashboard served in plaintext beyond loopback.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "common/files.h"
#include "common/strings.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/impl/rpc_method.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/sync_stream.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/harness.h"
#include "tests/e2e/http_test_util.h"
#include "tests/e2e/test_util.h"
#include "tests/e2e/token_util.h"
#include "tune/v1/tuner.grpc.pb.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kExitDenied = 7;

bool LogShows(Process& process, const std::string& text) {
  return WaitFor([&] { return process.Log().find(text) != std::string::npos; }, seconds(60));
}

// The peak resident memory of `pid` in KiB (VmHWM), or -1.
int64_t PeakRssKib(pid_t pid) {
  std::ifstream status(StrCat("/proc/", pid, "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("VmHWM:")) {
      return std::stoll(line.substr(6));
    }
  }
  return -1;
}

std::unique_ptr<v1::Tuner::Stub> Stub(const std::string& address) {
  return v1::Tuner::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
}

// A record that every check of an import accepts, but for `template_name`.
v1::Record ValidRecord(const std::string& uid, const std::string& template_name) {
  v1::Record record;
  record.set_uid(uid);
  record.set_workload("gemm:M=16,N=16,K=16");
  record.set_target("llvm -mcpu=haswell -threads=1");
  record.set_device_key("cpu/x86_64/haswell");
  record.set_template_name(template_name);
  record.set_config("{}");
  record.mutable_measurement()->set_error_kind(v1::ERROR_KIND_BUILD_ERROR);
  record.mutable_measurement()->set_message("does not build");
  record.set_created_at_ms(1);
  return record;
}

grpc::ByteBuffer BytesOf(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

TEST(HardeningTest, TheFirstAdminTokenComesOnlyFromTheDaemonsHostAndAdminActionsAreAudited) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();

  // A daemon without tokens serves every caller, but hands out no admin token.
  CommandResult minted = RunClient(address, {"token", "create", "--name", "me", "--role", "admin"});
  EXPECT_EQ(minted.exit_code, kExitDenied) << minted.out;
  EXPECT_THAT(minted.err, HasSubstr("tune-daemon token create --db"));
  CommandResult listed = RunCommand({Binaries::Daemon(), "token", "list", "--db", db});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, Not(HasSubstr("me")));

  // The first one comes from the daemon's host; with it, tokens are managed remotely.
  const std::string admin = TokenFile(dir, "admin", CreateToken(db, "root", "admin"));
  // The daemon sees the new token within a second: once a call without a token is refused.
  ASSERT_TRUE(
      WaitFor([&] { return RunClient(address, {"jobs"}).exit_code == kExitDenied; }, seconds(60)));
  CommandResult created = RunClient(
      address, {"token", "create", "--name", "ci", "--role", "submit", "--token-file", admin});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const std::string submit =
      TokenFile(dir, "submit", created.out.substr(0, created.out.find('\n')));
  Process& log = (*daemon)->process();
  EXPECT_TRUE(LogShows(log, "audit"));
  EXPECT_TRUE(LogShows(log, "(ci, role submit) created by root (token "));

  // Cancelling a job, importing and revoking name the caller.
  auto job = SubmitJob(address, FastSpec("gemm:M=16,N=16,K=16", 2));
  EXPECT_EQ(job.status().code(), absl::StatusCode::kUnauthenticated);  // tokens are on now
  CommandResult submitted =
      RunClient(address, {"submit", "--workload", "gemm:M=16,N=16,K=16", "--target",
                          "llvm -mcpu=native -threads=1", "--trials", "2", "--token-file", submit});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const uint64_t id = FirstLineJobId(submitted.out);
  ASSERT_NE(id, 0u) << submitted.out;
  CommandResult cancelled =
      RunClient(address, {"cancel", std::to_string(id), "--token-file", admin});
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;
  EXPECT_TRUE(LogShows(log, StrCat("job ", id, " (submitted by ci@")));
  EXPECT_TRUE(LogShows(log, "cancelled by root (token "));
  const std::string records = dir.File("records.jsonl");
  ASSERT_TRUE(WriteFileAtomically(records, "").ok());
  CommandResult imported = RunClient(address, {"import", records, "--token-file", submit});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_TRUE(LogShows(log, "import by ci (token "));
}

TEST(HardeningTest, ACallWithoutATokenIsRefusedBeforeItsRequestIsRead) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  const std::string admin = CreateToken(db, "root", "admin");
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  auto stub = Stub((*daemon)->address());
  const pid_t pid = (*daemon)->process().pid();

  v1::SubmitJobRequest large;
  large.mutable_spec()->set_name(std::string(size_t{64} << 20, 'x'));
  const int64_t before = PeakRssKib(pid);
  ASSERT_GT(before, 0);
  grpc::ClientContext anonymous;
  v1::Job job;
  grpc::Status refused = stub->SubmitJob(&anonymous, large, &job);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAUTHENTICATED) << refused.error_message();
  // Reading the 64 MiB request would have raised the daemon's peak by more than that.
  EXPECT_LT(PeakRssKib(pid) - before, 16 * 1024);

  // With a token, the request is read, and one that large is beyond what the daemon accepts.
  grpc::ClientContext admitted;
  admitted.AddMetadata("authorization", "Bearer " + admin);
  grpc::Status too_large = stub->SubmitJob(&admitted, large, &job);
  EXPECT_EQ(too_large.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << too_large.error_message();

  // An ordinary call with the token still works: its request is read after the check.
  grpc::ClientContext listing;
  listing.AddMetadata("authorization", "Bearer " + admin);
  v1::ListJobsResponse jobs;
  EXPECT_TRUE(stub->ListJobs(&listing, v1::ListJobsRequest(), &jobs).ok());
}

TEST(HardeningTest, AnImportWithAMessageThatDoesNotParseAddsNothing) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  auto channel = grpc::CreateChannel((*daemon)->address(), grpc::InsecureChannelCredentials());

  // Valid records, then bytes that are no Record (field 1, a string, holding invalid UTF-8).
  grpc::ClientContext context;
  grpc::ByteBuffer reply;
  std::unique_ptr<grpc::ClientWriter<grpc::ByteBuffer>> writer(
      grpc::internal::ClientWriterFactory<grpc::ByteBuffer>::Create(
          channel.get(),
          grpc::internal::RpcMethod("/tune.v1.Tuner/ImportRecords",
                                    grpc::internal::RpcMethod::CLIENT_STREAMING),
          &context, &reply));
  for (const char* uid : {"first", "second"}) {
    ASSERT_TRUE(writer->Write(BytesOf(ValidRecord(uid, "gemm.cpu.blocked").SerializeAsString())));
  }
  ASSERT_TRUE(writer->Write(BytesOf(std::string("\x0a\x02\xff\xfe", 4))));
  writer->WritesDone();
  grpc::Status status = writer->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("message 3 of the import is not a tune.v1.Record"));
  auto records = AllRecords(db);
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_TRUE(records->empty());

  // A record of a template that no table of this daemon knows is rejected; the others go in.
  auto stub = Stub((*daemon)->address());
  grpc::ClientContext import;
  v1::ImportRecordsResponse response;
  auto stream = stub->ImportRecords(&import, &response);
  ASSERT_TRUE(stream->Write(ValidRecord("known", "gemm.cpu.blocked")));
  ASSERT_TRUE(stream->Write(ValidRecord("unknown", "gemm.cpu.madeup")));
  stream->WritesDone();
  ASSERT_TRUE(stream->Finish().ok());
  EXPECT_EQ(response.imported(), 1);
  EXPECT_EQ(response.rejected(), 1);
  ASSERT_EQ(response.errors_size(), 1);
  EXPECT_THAT(response.errors(0),
              HasSubstr("record.template: 'gemm.cpu.madeup' is not a template"));
  EXPECT_THAT(response.errors(0), HasSubstr("accepted form:"));
}

TEST(HardeningTest, AWorkerWhoseNameHoldsANewlineIsRefusedAtRegistration) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"));
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  auto forger = Process::Start(
      {Binaries::Server(), "--daemon", (*daemon)->address(), "--device", "cpu", "--cache-dir",
       dir.File("forger-cache"), "--name", "x\n2026-01-01 00:00:00 [daemon] [info] forged"},
      dir.File("forger.log"));
  ASSERT_TRUE(forger.ok()) << forger.status();
  EXPECT_TRUE(LogShows(**forger, "register.name: byte 1 is 0x0a, not a printable character"));
  EXPECT_TRUE(LogShows((*daemon)->process(), "registration from"));
  EXPECT_THAT((*daemon)->process().Log(), Not(HasSubstr("\n2026-01-01 00:00:00 [daemon]")));
  auto workers = ConnectedWorkers((*daemon)->address());
  ASSERT_TRUE(workers.ok()) << workers.status();
  EXPECT_EQ(*workers, 0);
}

TEST(HardeningTest, ADashboardInPlaintextBeyondLoopbackWarnsAtStartAndInThePage) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  CommandResult refused =
      RunCommand({Binaries::Daemon(), "--listen", "127.0.0.1:0", "--http", "0.0.0.0:0", "--db", db},
                 seconds(30));
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("give --tls-cert and --tls-key to serve HTTPS"));

  auto daemon = Daemon::Start(
      dir, db,
      {.extra = {"--http", "0.0.0.0:0", "--http-port-file", dir.File("http.port"), "--insecure"}});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  EXPECT_TRUE(LogShows((*daemon)->process(), "are plain HTTP (--insecure)"));
  absl::StatusOr<std::string> port = ReadFile(dir.File("http.port"));
  ASSERT_TRUE(port.ok()) << port.status();
  httplib::Client http("127.0.0.1", std::stoi(*port));
  nlohmann::json health = GetJson(http, "/api/health", 200);
  std::string warnings = health["warnings"].dump();
  EXPECT_THAT(warnings, HasSubstr("plain HTTP"));
  EXPECT_THAT(warnings, HasSubstr("needs no token"));
}

}  // namespace
}  // namespace tune::testing
