// The rate limit of gRPC core's log lines (net/grpc_log.h), on a clock the test moves.
#include "net/grpc_log.h"

#include <gtest/gtest.h>

namespace tune::net {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(LogRateLimiterTest, ALineRepeatedFromOnePlaceIsWrittenOncePerWindowWithACount) {
  LogRateLimiter limiter(seconds(10));
  const auto t0 = std::chrono::steady_clock::time_point() + seconds(100);
  EXPECT_TRUE(limiter.Admit("ssl_transport_security.cc:1", t0).write);
  // A handshake failing four times a second for nine seconds: nothing more from there.
  int written = 0;
  for (int i = 1; i < 36; ++i) {
    written += limiter.Admit("ssl_transport_security.cc:1", t0 + milliseconds(250 * i)).write;
  }
  EXPECT_EQ(written, 0);
  // Another place is not held back by the first.
  EXPECT_TRUE(limiter.Admit("chttp2_server.cc:2", t0 + seconds(1)).write);
  // Once the window has passed, one line says how many were left out.
  LogRateLimiter::Verdict next = limiter.Admit("ssl_transport_security.cc:1", t0 + seconds(10));
  EXPECT_TRUE(next.write);
  EXPECT_EQ(next.left_out, 35);
  EXPECT_FALSE(limiter.Admit("ssl_transport_security.cc:1", t0 + seconds(11)).write);
}

}  // namespace
}  // namespace tune::net
