#include "common/logging.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "spdlog/sinks/ostream_sink.h"

namespace tune {
namespace {

using namespace std::string_literals;

// The lines a logger with the json formatter writes for `messages`.
std::vector<std::string> JsonLines(const std::vector<std::string>& messages) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger logger("json-test", sink);
  logger.set_formatter(JsonLogFormatter());
  for (const std::string& m : messages) {
    logger.warn("{}", m);
  }
  logger.flush();
  std::vector<std::string> lines;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

TEST(LoggingTest, JsonLinesRoundTripQuotesNewlinesAndControlCharacters) {
  const std::vector<std::string> messages = {
      "plain",
      "say \"hi\" to C:\\path",
      "two\nlines\r\nand a\ttab",
      "nul \0 bell \x07 escape \x1b[31m"s,
      "unicode: µs, 速い, 🚀",
      "{\"looks\": \"like json\"}",
  };
  std::vector<std::string> lines = JsonLines(messages);
  ASSERT_EQ(lines.size(), messages.size());  // a newline in a message stays inside its line
  for (size_t i = 0; i < messages.size(); ++i) {
    nlohmann::json entry = nlohmann::json::parse(lines[i]);
    EXPECT_EQ(entry["message"], messages[i]);
    EXPECT_EQ(entry["level"], "warning");
    EXPECT_EQ(entry["logger"], "json-test");
    EXPECT_EQ(entry["pid"], getpid());
    std::vector<std::string> keys;
    for (const auto& [key, value] : entry.items()) {
      keys.push_back(key);
    }
    // nlohmann sorts keys; the line itself keeps time first.
    EXPECT_TRUE(lines[i].starts_with("{\"time\":\"")) << lines[i];
    EXPECT_EQ(keys, (std::vector<std::string>{"level", "logger", "message", "pid", "time"}));
  }
}

TEST(LoggingTest, JsonTimeIsUtcWithMilliseconds) {
  nlohmann::json entry = nlohmann::json::parse(JsonLines({"x"}).at(0));
  const std::string time = entry["time"];
  ASSERT_EQ(time.size(), 24u) << time;  // 2026-01-02T03:04:05.678Z
  EXPECT_EQ(time[10], 'T');
  EXPECT_EQ(time[19], '.');
  EXPECT_EQ(time.back(), 'Z');
}

TEST(LoggingTest, InvalidUtf8BecomesTheReplacementCharacter) {
  nlohmann::json entry = nlohmann::json::parse(JsonLines({"bad \xff\xfe byte"}).at(0));
  EXPECT_EQ(entry["message"], "bad \xEF\xBF\xBD\xEF\xBF\xBD byte");
}

TEST(LoggingTest, SetLogFormatAcceptsTextAndJsonOnly) {
  EXPECT_TRUE(SetLogFormat("json").ok());
  EXPECT_TRUE(SetLogFormat("text").ok());
  absl::Status bad = SetLogFormat("xml");
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("--log-format"), std::string::npos);
}

}  // namespace
}  // namespace tune
