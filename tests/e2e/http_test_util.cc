#include "tests/e2e/http_test_util.h"

#include <gtest/gtest.h>

#include <sstream>

namespace tune::testing {

nlohmann::json GetJson(httplib::Client& http, const std::string& path, int status,
                       const httplib::Headers& headers) {
  httplib::Result got = http.Get(path, headers);
  if (!got) {
    ADD_FAILURE() << "GET " << path << ": " << httplib::to_string(got.error());
    return nlohmann::json::object();
  }
  EXPECT_EQ(got->status, status) << "GET " << path << ": " << got->body;
  EXPECT_TRUE(got->get_header_value("Content-Type").starts_with("application/json"))
      << "GET " << path;
  nlohmann::json body = nlohmann::json::parse(got->body, nullptr, false);
  if (body.is_discarded()) {
    ADD_FAILURE() << "GET " << path << " is not JSON: " << got->body;
    return nlohmann::json::object();
  }
  return body;
}

std::string GetText(httplib::Client& http, const std::string& path, int status) {
  httplib::Result got = http.Get(path);
  if (!got) {
    ADD_FAILURE() << "GET " << path << ": " << httplib::to_string(got.error());
    return "";
  }
  EXPECT_EQ(got->status, status) << "GET " << path << ": " << got->body;
  return got->body;
}

const nlohmann::json* FindJob(const nlohmann::json& jobs, uint64_t id) {
  if (!jobs.contains("jobs")) {
    return nullptr;
  }
  for (const nlohmann::json& job : jobs["jobs"]) {
    if (job["job_id"] == id) {
      return &job;
    }
  }
  return nullptr;
}

std::map<std::string, double> ParseMetrics(const std::string& text) {
  std::map<std::string, double> samples;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.front() == '#') {
      continue;
    }
    const size_t space = line.rfind(' ');
    if (space == std::string::npos) {
      ADD_FAILURE() << "not a sample: " << line;
      continue;
    }
    samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return samples;
}

}  // namespace tune::testing
