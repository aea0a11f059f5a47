// A worker whose every connection is refused (as a daemon refusing its TLS certificate does)
// redials ever less often, not several times a second: the dials are counted by a listener that
// accepts and closes each connection at once.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "common/strings.h"
#include "tests/e2e/harness.h"

namespace tune::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Accepts connections on 127.0.0.1 and closes each at once, noting when it came.
class RefusingListener {
 public:
  RefusingListener() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(fd_, 16) != 0 ||
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "cannot listen on 127.0.0.1";
      return;
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      while (true) {
        int conn = accept(fd_, nullptr, nullptr);
        if (conn < 0) {
          return;  // shutdown() below
        }
        close(conn);
        std::lock_guard lock(mu_);
        dials_.push_back(Clock::now());
      }
    });
  }
  ~RefusingListener() {
    shutdown(fd_, SHUT_RDWR);
    if (thread_.joinable()) {
      thread_.join();
    }
    close(fd_);
  }
  int port() const { return port_; }
  std::vector<Clock::time_point> dials() {
    std::lock_guard lock(mu_);
    return dials_;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<Clock::time_point> dials_;
};

TEST(ReconnectBackoffTest, AWorkerRefusedAtEveryDialRedialsEverLessOften) {
  TempDir dir;
  RefusingListener daemon;
  ASSERT_NE(daemon.port(), 0);
  auto worker = StartWorker(dir, StrCat("127.0.0.1:", daemon.port()), "refused");
  ASSERT_TRUE(worker.ok()) << worker.status();
  constexpr size_t kDials = 10;
  ASSERT_TRUE(WaitFor([&] { return daemon.dials().size() >= kDials; }, seconds(120)))
      << daemon.dials().size() << " dials\n"
      << (*worker)->Log();
  std::vector<Clock::time_point> dials = daemon.dials();
  // Backoff from 100 ms, x1.6 per dial (±20%), up to 5 s: the 7th to 9th waits are 1.7 s,
  // 2.7 s and 4.3 s. A loaded machine only makes them longer; a worker that resets its backoff
  // redials within a fraction of a second at times.
  for (size_t i = 7; i < kDials; ++i) {
    const auto gap = std::chrono::duration_cast<std::chrono::milliseconds>(dials[i] - dials[i - 1]);
    EXPECT_GE(gap.count(), 1000) << "wait before dial " << i + 1;
  }
}

}  // namespace
}  // namespace tune::testing
