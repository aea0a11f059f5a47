// Start-up failures say what is wrong and exit non-zero: a preloaded library that is missing, a
// database that cannot be opened, an address that cannot be bound, and a client whose daemon is
// not there.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/e2e/harness.h"

namespace tune::testing {
namespace {

using ::testing::HasSubstr;

TEST(StartupTest, WorkerWithAMissingPreloadedLibraryExitsWithTheMessage) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"));
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  CommandResult r = RunCommand({Binaries::Server(), "--daemon", (*daemon)->address(), "--preload",
                                dir.File("libmissing.so")},
                               seconds(30));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("libmissing.so"));
  EXPECT_EQ(ConnectedWorkers((*daemon)->address()).value_or(-1), 0);
}

TEST(StartupTest, DaemonWithAnUnopenableDatabaseExitsNamingThePath) {
  TempDir dir;
  const std::string db = dir.File("no-such-dir/tuning.db");
  CommandResult r =
      RunCommand({Binaries::Daemon(), "--listen", "127.0.0.1:0", "--db", db}, seconds(30));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(db));
}

TEST(StartupTest, DaemonOnAnAddressInUseExitsNamingTheAddress) {
  TempDir dir;
  auto first = Daemon::Start(dir, dir.File("a.db"));
  ASSERT_TRUE(first.ok()) << first.status();
  CommandResult r = RunCommand(
      {Binaries::Daemon(), "--listen", (*first)->address(), "--db", dir.File("b.db")}, seconds(30));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot listen on " + (*first)->address()));
}

TEST(StartupTest, ClientWithoutADaemonSaysWhereItLookedAndHowToStartOne) {
  // Port 1 on loopback: nothing listens there.
  CommandResult r =
      RunCommand({Binaries::Client(), "--daemon", "127.0.0.1:1", "jobs"}, seconds(30));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, HasSubstr("cannot reach tune-daemon at 127.0.0.1:1"));
  EXPECT_THAT(r.err, HasSubstr("tune-daemon --listen"));
}

}  // namespace
}  // namespace tune::testing
