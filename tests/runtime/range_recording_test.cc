// libtune_range.so's recording (runtime/tune_range.h: TUNE_RECORD_SHAPES), run in child
// processes of this test binary, since the variable is read once per process: counts per size,
// sizes the log measured left out, appends at each flush and at exit, four threads with
// concurrent flushes, an unwritable file, recording off, a forked child.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "range_test_kernels.h"
#include "runtime/tune_range.h"

extern char** environ;

namespace {

using namespace tune_range_test;

// ---- Recording, in a child process started from this test binary: the scenario runs before
// main (a static initializer, below) when TUNE_RANGE_TEST_SCENARIO names one, with the
// environment the parent gave it.

constexpr int64_t kRecordHi = 16;

// The M range over kernels 1, 2, 4, 8, 16 (every size of 1..16 runs), the one at 8 built with
// a config measured at another size (recording counts it).
const tune_range_plan& RecordPlan() {
  static std::unique_ptr<Plan> plan = [] {
    std::unique_ptr<Plan> p = GemmPlan(Dim::kM, {1, 2, 4, 8, 16});
    p->kernels[3].measured = 0;
    return p;
  }();
  return plan->plan;
}

// Runs `size` with fresh operands; false (and a message) unless it returns `want`.
bool CallSize(int64_t size, int32_t want = 0) {
  Operands ops(DimsAt(Dim::kM, size > 0 && size <= kRecordHi ? size : 1));
  int32_t rc = tune_range_call(&RecordPlan(), size, ops.args.data(), nullptr);
  if (rc != want) {
    std::fprintf(stderr, "size %lld returned %d, not %d: %s\n", static_cast<long long>(size), rc,
                 want, tune_range_last_error());
    return false;
  }
  return true;
}

bool Flushed(int32_t want = 0) {
  int32_t rc = tune_range_flush_recording();
  if (rc != want) {
    std::fprintf(stderr, "flush returned %d, not %d: %s\n", rc, want, tune_range_last_error());
    return false;
  }
  return true;
}

// Two flushes: sizes 3 (x2), 5 and 8 (a kernel of its own, not measured), 4 and 16 (their own
// measured kernels) and 17 (out of range); then 3.
int ScenarioCounts() {
  bool ok = CallSize(3) && CallSize(3) && CallSize(5) && CallSize(8) && CallSize(4) &&
            CallSize(16) && CallSize(17, TUNE_RANGE_ERROR_OUT_OF_RANGE) && Flushed() && Flushed() &&
            CallSize(3) && Flushed();
  return ok ? 0 : 1;
}

// Records 7 (x5) and leaves by exit(): the exit handler appends them.
int ScenarioExit() {
  for (int i = 0; i < 5; ++i) {
    if (!CallSize(7)) {
      return 1;
    }
  }
  std::exit(0);
}

// 4 threads call 1000 times each over sizes with and without kernels, each flushing every 100
// calls while the others call; a last flush.
constexpr int64_t kThreadSizes[] = {3, 5, 4, 6, 7, 8, 9, 17, 12, 13};

int ScenarioThreads() {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        const int64_t size = kThreadSizes[i % std::size(kThreadSizes)];
        if (!CallSize(size, size > kRecordHi ? TUNE_RANGE_ERROR_OUT_OF_RANGE : 0)) {
          ++failures;
        }
        if (i % 100 == 99 && !Flushed()) {
          ++failures;
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  return failures.load() == 0 && Flushed() ? 0 : 1;
}

// TUNE_RECORD_SHAPES names a file in a folder that does not exist yet: the flush fails naming
// it, the counts are kept, and once the folder exists the next flush writes them.
int ScenarioUnwritable() {
  const char* path = std::getenv("TUNE_RECORD_SHAPES");
  if (!CallSize(6) || !CallSize(6) || !Flushed(TUNE_RANGE_ERROR_RECORDING)) {
    return 1;
  }
  const std::string error = tune_range_last_error();
  if (!Contains(error, path) || !Contains(error, std::strerror(ENOENT))) {
    std::fprintf(stderr, "the error does not name the file and the reason: %s\n", error.c_str());
    return 1;
  }
  const std::string folder = std::filesystem::path(path).parent_path();
  if (mkdir(folder.c_str(), 0755) != 0) {
    std::perror("mkdir");
    return 1;
  }
  return CallSize(6) && Flushed() ? 0 : 1;
}

// Recording off (TUNE_RECORD_SHAPES unset or empty): flush writes nothing and returns 0.
int ScenarioOff() {
  bool ok = CallSize(3) && CallSize(5) && Flushed();
  if (ok && std::strcmp(tune_range_last_error(), "") != 0) {
    std::fprintf(stderr, "flush left an error: %s\n", tune_range_last_error());
    ok = false;
  }
  std::exit(ok ? 0 : 1);  // the exit handler writes nothing either
}

// A forked child counts only its own calls: the parent records 3 (x2) before the fork, the child
// records 5 and exits, the parent flushes.
int ScenarioFork() {
  if (!CallSize(3) || !CallSize(3)) {
    return 1;
  }
  pid_t child = fork();
  if (child == 0) {
    std::exit(CallSize(5) ? 0 : 1);
  }
  int status = 0;
  if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "the forked child failed\n");
    return 1;
  }
  return Flushed() ? 0 : 1;
}

// Runs the scenario TUNE_RANGE_TEST_SCENARIO names, before gtest's main, and leaves.
[[maybe_unused]] const bool kScenarioRan = [] {
  const char* scenario = std::getenv("TUNE_RANGE_TEST_SCENARIO");
  if (scenario == nullptr) {
    unsetenv("TUNE_RECORD_SHAPES");  // this process records nothing
    return false;
  }
  const std::map<std::string, int (*)()> scenarios = {
      {"counts", ScenarioCounts},         {"exit", ScenarioExit}, {"threads", ScenarioThreads},
      {"unwritable", ScenarioUnwritable}, {"off", ScenarioOff},   {"fork", ScenarioFork}};
  auto it = scenarios.find(scenario);
  if (it == scenarios.end()) {
    std::fprintf(stderr, "unknown scenario %s\n", scenario);
    std::_Exit(2);
  }
  int rc = it->second();
  std::fflush(stderr);
  std::_Exit(rc);  // no exit handlers: the scenarios that want them call exit() themselves
}();

// A temporary folder removed with its files.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/tune_range_test.XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Runs this binary as the scenario's child with TUNE_RECORD_SHAPES = `record` (unset when
// null); returns its exit status (-1 when it did not exit).
int RunScenario(const std::string& scenario, const char* record) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "TUNE_RECORD_SHAPES=", 19) != 0 &&
        std::strncmp(*e, "TUNE_RANGE_TEST_SCENARIO=", 25) != 0) {
      env.emplace_back(*e);
    }
  }
  env.push_back("TUNE_RANGE_TEST_SCENARIO=" + scenario);
  if (record != nullptr) {
    env.push_back(std::string("TUNE_RECORD_SHAPES=") + record);
  }
  std::vector<char*> envp;
  for (auto& e : env) {
    envp.push_back(e.data());
  }
  envp.push_back(nullptr);
  char self[] = "/proc/self/exe";
  char* argv[] = {self, nullptr};
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    execve(self, argv, envp.data());
    std::_Exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
    return -1;
  }
  return WEXITSTATUS(status);
}

// A recording file read back: the pids of its chunks' comment lines, and each workload's
// summed count; lines of another form are kept in `bad`.
struct Recorded {
  std::vector<long> pids;
  std::map<std::string, uint64_t> counts;
  std::vector<std::string> bad;
  int lines = 0;
};

Recorded ReadRecording(const std::string& path) {
  Recorded r;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    ++r.lines;
    constexpr char kComment[] = "# sizes recorded by pid ";
    if (line.rfind(kComment, 0) == 0) {
      r.pids.push_back(std::stol(line.substr(sizeof kComment - 1)));
      continue;
    }
    size_t space = line.rfind(' ');
    if (space == std::string::npos || space == 0 ||
        line.find_first_not_of("0123456789", space + 1) != std::string::npos ||
        space + 1 == line.size()) {
      r.bad.push_back(line);
      continue;
    }
    r.counts[line.substr(0, space)] += std::stoull(line.substr(space + 1));
  }
  return r;
}

std::string MWorkload(int64_t m) { return "gemm:M=" + std::to_string(m) + ",N=3,K=5"; }

TEST(RangeRecording, SizesTheLogDidNotMeasureAreCountedAndAppendedAtEachFlush) {
  TempDir dir;
  const std::string file = dir.path() + "/sizes.txt";
  ASSERT_EQ(RunScenario("counts", file.c_str()), 0);
  Recorded r = ReadRecording(file);
  EXPECT_TRUE(r.bad.empty()) << r.bad.front();
  EXPECT_EQ(r.pids.size(), 2u) << "two flushes with counts; the empty one writes nothing";
  EXPECT_EQ(r.counts, (std::map<std::string, uint64_t>{
                          {MWorkload(3), 3}, {MWorkload(5), 1}, {MWorkload(8), 1}}));
  // The first chunk exactly: the comment, then one line per size in order.
  std::ifstream in(file);
  std::string first, second, third;
  std::getline(in, first);
  std::getline(in, second);
  std::getline(in, third);
  EXPECT_EQ(second, "gemm:M=3,N=3,K=5 2");
  EXPECT_EQ(third, "gemm:M=5,N=3,K=5 1");
  // A second process appends its own chunk.
  ASSERT_EQ(RunScenario("counts", file.c_str()), 0);
  r = ReadRecording(file);
  EXPECT_EQ(r.pids.size(), 4u);
  EXPECT_NE(r.pids[0], r.pids[2]);
  EXPECT_EQ(r.counts, (std::map<std::string, uint64_t>{
                          {MWorkload(3), 6}, {MWorkload(5), 2}, {MWorkload(8), 2}}));
  struct stat st;
  ASSERT_EQ(stat(file.c_str(), &st), 0);
  const mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(st.st_mode & 0777, 0644u & ~mask);
}

TEST(RangeRecording, TheCountsAreAppendedAtExit) {
  TempDir dir;
  const std::string file = dir.path() + "/sizes.txt";
  ASSERT_EQ(RunScenario("exit", file.c_str()), 0);
  Recorded r = ReadRecording(file);
  EXPECT_EQ(r.pids.size(), 1u);
  EXPECT_EQ(r.counts, (std::map<std::string, uint64_t>{{MWorkload(7), 5}}));
}

TEST(RangeRecording, FlushesConcurrentWithCallsFromFourThreadsLoseNothing) {
  TempDir dir;
  const std::string file = dir.path() + "/sizes.txt";
  ASSERT_EQ(RunScenario("threads", file.c_str()), 0);
  Recorded r = ReadRecording(file);
  EXPECT_TRUE(r.bad.empty()) << r.bad.front();
  std::map<std::string, uint64_t> want;
  for (int i = 0; i < 1000; ++i) {
    const int64_t size = kThreadSizes[i % std::size(kThreadSizes)];
    if (size != 4 && size <= kRecordHi) {  // 4 has a measured kernel; 8's is not measured
      want[MWorkload(size)] += 4;
    }
  }
  EXPECT_EQ(r.counts, want);
  EXPECT_GE(r.pids.size(), 1u);
}

TEST(RangeRecording, AnUnwritableFileIsAnErrorNamingItAndTheCountsWait) {
  TempDir dir;
  const std::string file = dir.path() + "/later/sizes.txt";
  ASSERT_EQ(RunScenario("unwritable", file.c_str()), 0);
  Recorded r = ReadRecording(file);
  EXPECT_EQ(r.pids.size(), 1u);
  EXPECT_EQ(r.counts, (std::map<std::string, uint64_t>{{MWorkload(6), 3}}));
}

TEST(RangeRecording, AnUnsetOrEmptyVariableRecordsNothing) {
  EXPECT_EQ(RunScenario("off", nullptr), 0);
  EXPECT_EQ(RunScenario("off", ""), 0);
  // In this process (recording off) flush is a no-op too.
  EXPECT_EQ(tune_range_flush_recording(), 0);
}

TEST(RangeRecording, AForkedChildCountsOnlyItsOwnCalls) {
  TempDir dir;
  const std::string file = dir.path() + "/sizes.txt";
  ASSERT_EQ(RunScenario("fork", file.c_str()), 0);
  Recorded r = ReadRecording(file);
  EXPECT_EQ(r.pids.size(), 2u);
  EXPECT_EQ(r.counts, (std::map<std::string, uint64_t>{{MWorkload(3), 2}, {MWorkload(5), 1}}));
}

}  // namespace
