// Bad requests: INVALID_ARGUMENT naming the field, nothing written to the database, and the
// daemon keeps serving (a valid job still runs afterwards).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "db/tuning_log.h"
#include "grpcpp/create_channel.h"
#include "tests/e2e/harness.h"
#include "tests/e2e/test_util.h"
#include "tune/v1/worker.grpc.pb.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

struct BadSubmit {
  std::string workload;
  std::string target;
  std::string trials;
  std::string field;  // what the message must name
};

TEST(BadRequestTest, TheClientRefusesATargetThatDoesNotParseBeforeDialingTheDaemon) {
  // Nothing listens on port 1: a request that reached the network would be "cannot reach" (3).
  CommandResult r = RunClient("127.0.0.1:1", {"submit", "--workload", "gemm:M=16,N=16,K=16",
                                              "--target", "llvm -threads=0", "--trials", "1"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_THAT(r.err, HasSubstr("invalid request: spec.target: target 'llvm -threads=0'")) << r.err;
  CommandResult unknown_library =
      RunClient("127.0.0.1:1", {"submit", "--workload", "gemm:M=16,N=16,K=16", "--target",
                                "llvm -libs=no_such_library", "--trials", "1"});
  EXPECT_EQ(unknown_library.exit_code, 3)
      << "the daemon's catalog says which libraries exist: " << unknown_library.err;
}

TEST(BadRequestTest, ALibraryTheDaemonsCatalogLacksIsRefusedNamingTheAcceptedOnes) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"));
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  CommandResult r =
      RunClient((*daemon)->address(), {"submit", "--workload", "gemm:M=16,N=16,K=16", "--target",
                                       "llvm -libs=no_such_library", "--trials", "1"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_THAT(r.err, HasSubstr("spec.target: target 'llvm -libs=no_such_library': library "
                               "'no_such_library' is not available for llvm targets (accepted: "
                               "dnnl, openblas)"))
      << r.err;
}

TEST(BadRequestTest, InvalidJobsAreRejectedWithNothingWrittenAndTheDaemonKeepsServing) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto daemon = Daemon::Start(dir, db, {.local_workers = 1});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  const std::string gemm = "gemm:M=16,N=16,K=16";
  const std::string cpu = "llvm -mcpu=native";
  const std::vector<BadSubmit> cases = {
      {"matmul:M=16,N=16,K=16", cpu, "1", "spec.workload"},  // unknown op
      {"gemm:M=0,N=16,K=16", cpu, "1", "spec.workload"},     // zero size
      {"gemm:M=-4,N=16,K=16", cpu, "1", "spec.workload"},    // negative size
      {"gemm:M=16,N=16", cpu, "1", "spec.workload"},         // missing field
      {"gemm M=16 N=16 K=16", cpu, "1", "spec.workload"},    // malformed text
      {gemm, "fpga -mcpu=x", "1", "spec.target"},            // unknown target
      {gemm, "cuda -arch=sm_75", "1", "spec.target"},        // an unsupported GPU arch
      {gemm, cpu, "0", "spec.trials"},                       // no budget
      {gemm, cpu, "-2", "spec.trials"},                      // negative budget
  };
  for (const BadSubmit& c : cases) {
    CommandResult r = RunClient(
        address, {"submit", "--workload", c.workload, "--target", c.target, "--trials", c.trials});
    EXPECT_EQ(r.exit_code, 4) << c.workload << " / " << c.target << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("invalid request")) << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.field)) << r.err;
  }
  CommandResult strategy = RunClient(address, {"submit", "--workload", gemm, "--target", cpu,
                                               "--trials", "1", "--strategy", "annealing"});
  EXPECT_EQ(strategy.exit_code, 4);
  EXPECT_THAT(strategy.err, HasSubstr("spec.strategy"));
  CommandResult priority = RunClient(address, {"submit", "--workload", gemm, "--target", cpu,
                                               "--trials", "1", "--priority", "5000"});
  EXPECT_EQ(priority.exit_code, 4);
  EXPECT_THAT(priority.err, HasSubstr("spec.priority"));

  {
    auto log = TuningLog::Open(db, TuningLog::Mode::kReadOnly);
    ASSERT_TRUE(log.ok()) << log.status();
    auto jobs = (*log)->ListJobs();
    ASSERT_TRUE(jobs.ok());
    EXPECT_TRUE(jobs->empty());
    auto count = (*log)->CountRecords();
    ASSERT_TRUE(count.ok());
    EXPECT_EQ(*count, 0);
  }

  CommandResult ok = RunClient(address,
                               {"submit", "--workload", gemm, "--target", cpu, "--trials", "1",
                                "--min-repeat-ms", "1", "--wait"},
                               seconds(180));
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err << (*daemon)->process().Log();
}

TEST(BadRequestTest, UnknownJobsAreNotFoundAndFinishedJobsCannotBeCancelled) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"));
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  for (std::string command : {"status", "watch", "cancel"}) {
    CommandResult r = RunClient(address, {command, "4242"});
    EXPECT_EQ(r.exit_code, 5) << command << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("job 4242 does not exist"));
  }
  auto job = SubmitJob(address, FastSpec("gemm:M=8,N=8,K=8", 2));
  ASSERT_TRUE(job.ok()) << job.status();
  CommandResult cancel = RunClient(address, {"cancel", std::to_string(job->job_id())});
  EXPECT_EQ(cancel.exit_code, 0) << cancel.err;
  CommandResult again = RunClient(address, {"cancel", std::to_string(job->job_id())});
  EXPECT_EQ(again.exit_code, 4);
  EXPECT_THAT(again.err, HasSubstr("already CANCELLED"));
  CommandResult none = RunClient(
      address, {"best", "--workload", "gemm:M=8,N=8,K=8", "--target", "llvm -mcpu=native"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_THAT(none.err, HasSubstr("no successful record"));
}

TEST(BadRequestTest, AWorkerWithoutDeviceKeyIsRefusedNamingTheField) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"));
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  auto stub = v1::WorkerLink::NewStub(
      grpc::CreateChannel((*daemon)->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(10));
  auto stream = stub->Connect(&context);
  v1::WorkerMessage hello;
  hello.mutable_register_()->set_name("nameless-device");
  ASSERT_TRUE(stream->Write(hello));
  stream->WritesDone();
  v1::DaemonMessage reply;
  EXPECT_FALSE(stream->Read(&reply));
  grpc::Status status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("register.device_key"));
  EXPECT_EQ(ConnectedWorkers((*daemon)->address()).value_or(-1), 0);
}

}  // namespace
}  // namespace tune::testing
