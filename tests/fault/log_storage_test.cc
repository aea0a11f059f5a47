// The tuning log on bad storage: a damaged file is refused at start-up and never overwritten; a
// log on a read-only file system serves reads and refuses writes naming the reason. The
// read-only case mounts a small tmpfs, which needs root (CAP_SYS_ADMIN): without it, it skips.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <cstdio>
#include <filesystem>
#include <set>

#include "common/artifact_hash.h"
#include "common/strings.h"
#include "tests/e2e/harness.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int kExitInvalid = 4;

// A tmpfs of `size` mounted at `path` while the object lives.
class Tmpfs {
 public:
  static std::unique_ptr<Tmpfs> Mount(const std::string& path, const std::string& size) {
    std::filesystem::create_directories(path);
    if (mount("tmpfs", path.c_str(), "tmpfs", 0, StrCat("size=", size).c_str()) != 0) {
      return nullptr;
    }
    return std::unique_ptr<Tmpfs>(new Tmpfs(path));
  }
  ~Tmpfs() { umount2(path_.c_str(), MNT_DETACH); }
  bool RemountReadOnly() {
    return mount("tmpfs", path_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr) == 0;
  }

 private:
  explicit Tmpfs(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

TEST(LogStorageTest, ADaemonRefusesAFileThatIsNoTuningLogAndLeavesItUntouched) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  const std::string garbage(64 * 1024, 'x');
  ASSERT_TRUE(WriteFileAtomically(db, garbage).ok());
  CommandResult r =
      RunCommand({Binaries::Daemon(), "--listen", "127.0.0.1:0", "--db", db}, seconds(30));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(db));
  EXPECT_THAT(r.err, HasSubstr("not a database"));
  EXPECT_THAT(r.err, HasSubstr("left untouched"));
  EXPECT_EQ(*ReadFile(db), garbage);
  EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
}

TEST(LogStorageTest, ALogOnAReadOnlyFileSystemServesReadsAndRefusesWrites) {
  TempDir dir;
  std::unique_ptr<Tmpfs> tmpfs = Tmpfs::Mount(dir.File("mnt"), "32m");
  if (tmpfs == nullptr) {
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  }
  const std::string db = dir.File("mnt/tuning.db");
  const std::string workload = "gemm:M=16,N=16,K=16";
  const std::string target = "llvm -mcpu=native -threads=1";
  {
    auto daemon = Daemon::Start(dir, db, {.local_workers = 1});
    ASSERT_TRUE(daemon.ok()) << daemon.status();
    auto job = SubmitJob((*daemon)->address(), FastSpec(workload, 2));
    ASSERT_TRUE(job.ok()) << job.status();
    auto done = WaitForJob((*daemon)->address(), job->job_id(), seconds(240));
    ASSERT_TRUE(done.ok()) << done.status();
    ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED);
    (*daemon)->process().Signal(SIGTERM);
    ASSERT_EQ((*daemon)->process().Wait(seconds(60)), 0);
  }
  ASSERT_TRUE(tmpfs->RemountReadOnly());
  const std::string before = Sha256Hex(*ReadFile(db));

  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  EXPECT_THAT((*daemon)->process().Log(), HasSubstr("serving it read-only"));
  CommandResult jobs = RunClient(address, {"jobs"});
  EXPECT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_THAT(jobs.out, HasSubstr(workload));
  CommandResult best = RunClient(address, {"best", "--workload", workload, "--target", target});
  EXPECT_EQ(best.exit_code, 0) << best.err;
  EXPECT_THAT(best.out, HasSubstr("GFLOPS"));
  CommandResult exported = RunClient(address, {"export", "--out", dir.File("out.jsonl")});
  EXPECT_EQ(exported.exit_code, 0) << exported.err;

  CommandResult submit =
      RunClient(address, {"submit", "--workload", workload, "--target", target, "--trials", "1"});
  EXPECT_EQ(submit.exit_code, kExitInvalid);
  EXPECT_THAT(submit.err, HasSubstr("read-only"));
  EXPECT_THAT(submit.err, HasSubstr("cannot create a job"));
  CommandResult token = RunCommand(
      {Binaries::Daemon(), "token", "create", "--db", db, "--name", "x", "--role", "read"});
  EXPECT_NE(token.exit_code, 0);
  EXPECT_THAT(token.err, HasSubstr("read-only"));
  EXPECT_EQ(Sha256Hex(*ReadFile(db)), before);
}

// Fills the file system holding `path` with a file at `path`, until a write fails.
void FillUp(const std::string& path) {
  FILE* file = fopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr);
  const std::string chunk(16 * 1024, 'f');
  while (fwrite(chunk.data(), 1, chunk.size(), file) == chunk.size() && fflush(file) == 0) {
  }
  fclose(file);
}

TEST(LogStorageTest, AJobPausesWhileTheDiskIsFullAndResumesWithoutLosingOrRepeatingATrial) {
  TempDir dir;
  std::unique_ptr<Tmpfs> tmpfs = Tmpfs::Mount(dir.File("mnt"), "4m");
  if (tmpfs == nullptr) {
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root)";
  }
  const std::string db = dir.File("mnt/tuning.db");
  constexpr int kTrials = 3;
  // No worker yet: the job waits, queued, while the disk fills up.
  auto daemon = Daemon::Start(dir, db);
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  const std::string address = (*daemon)->address();
  auto job = SubmitJob(address, FastSpec("gemm:M=16,N=16,K=24", kTrials));
  ASSERT_TRUE(job.ok()) << job.status();
  FillUp(dir.File("mnt/filler"));

  auto worker = StartWorker(dir, address, "w1");
  ASSERT_TRUE(worker.ok()) << worker.status();
  std::string message;
  EXPECT_TRUE(WaitFor(
      [&] {
        auto now = GetJob(address, job->job_id());
        message = now.ok() ? now->message() : "";
        return message.find("paused") != std::string::npos;
      },
      seconds(120)))
      << message;
  EXPECT_THAT(message, HasSubstr("resumes when space returns"));
  {
    auto paused = GetJob(address, job->job_id());
    ASSERT_TRUE(paused.ok());
    EXPECT_EQ(paused->state(), v1::JOB_STATE_RUNNING);
    EXPECT_EQ(paused->trials_done(), 0);
  }

  ASSERT_EQ(std::remove(dir.File("mnt/filler").c_str()), 0);
  auto done = WaitForJob(address, job->job_id(), seconds(240));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->message();
  EXPECT_EQ(done->trials_done(), kTrials);
  EXPECT_THAT(done->message(), Not(HasSubstr("paused")));
  CommandResult exported =
      RunClient(address, {"export", "--out", dir.File("out.jsonl"), "--include-failures"});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::vector<std::string> lines;
  for (std::string_view line : Split(*ReadFile(dir.File("out.jsonl")), '\n', true)) {
    lines.emplace_back(line);
  }
  // Each trial once: the budget's records, and no config twice.
  std::set<std::string> configs;
  int budget_records = 0;
  for (const std::string& line : lines) {
    if (line.find("\"final\":true") != std::string::npos) {
      continue;
    }
    ++budget_records;
    size_t at = line.find("\"config\":");
    configs.insert(line.substr(at, line.find('}', at) - at));
  }
  EXPECT_EQ(budget_records, kTrials);
  EXPECT_EQ(static_cast<int>(configs.size()), kTrials);
}

}  // namespace
}  // namespace tune::testing
