#include "proto/framing.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "tune/v1/common.pb.h"

namespace tune {
namespace {

using Clock = std::chrono::steady_clock;

class FramingTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(pipe2(fds_, O_CLOEXEC), 0); }
  void TearDown() override {
    for (int fd : fds_) {
      if (fd >= 0) {
        close(fd);
      }
    }
  }
  void CloseWriter() {
    close(fds_[1]);
    fds_[1] = -1;
  }
  int reader() const { return fds_[0]; }
  int writer() const { return fds_[1]; }

 private:
  int fds_[2] = {-1, -1};
};

TEST_F(FramingTest, MessagesArriveWholeAndInOrderThenEof) {
  v1::TimingOptions first, second;
  first.set_number(7);
  second.set_seed(42);
  ASSERT_TRUE(WriteFrame(writer(), first).ok());
  ASSERT_TRUE(WriteFrame(writer(), second).ok());
  CloseWriter();
  v1::TimingOptions read;
  std::string error;
  ASSERT_EQ(ReadFrame(reader(), &read, std::nullopt, -1, &error), ReadOutcome::kOk) << error;
  EXPECT_EQ(read.number(), 7);
  ASSERT_EQ(ReadFrame(reader(), &read, std::nullopt, -1, &error), ReadOutcome::kOk) << error;
  EXPECT_EQ(read.seed(), 42u);
  EXPECT_EQ(ReadFrame(reader(), &read, std::nullopt, -1, &error), ReadOutcome::kEof);
}

TEST_F(FramingTest, APassedDeadlineAndAWakeDescriptorEndTheWait) {
  v1::TimingOptions read;
  std::string error;
  EXPECT_EQ(ReadFrame(reader(), &read, Clock::now(), -1, &error), ReadOutcome::kDeadline);
  int wake[2];
  ASSERT_EQ(pipe2(wake, O_CLOEXEC), 0);
  ASSERT_EQ(write(wake[1], "x", 1), 1);
  EXPECT_EQ(ReadFrame(reader(), &read, std::nullopt, wake[0], &error), ReadOutcome::kWoken);
  close(wake[0]);
  close(wake[1]);
}

TEST_F(FramingTest, AnOversizedOrTruncatedFrameIsAnErrorOrEof) {
  const unsigned char huge[4] = {0xff, 0xff, 0xff, 0x7f};
  ASSERT_EQ(write(writer(), huge, sizeof(huge)), 4);
  v1::TimingOptions read;
  std::string error;
  EXPECT_EQ(ReadFrame(reader(), &read, std::nullopt, -1, &error), ReadOutcome::kError);
  EXPECT_NE(error.find("exceeds the limit"), std::string::npos) << error;
  const unsigned char truncated[6] = {10, 0, 0, 0, 1, 2};  // announces 10 bytes, sends 2
  ASSERT_EQ(write(writer(), truncated, sizeof(truncated)), 6);
  CloseWriter();
  EXPECT_EQ(ReadFrame(reader(), &read, std::nullopt, -1, &error), ReadOutcome::kEof);
}

}  // namespace
}  // namespace tune
