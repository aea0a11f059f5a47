// tune-daemon --http, spoken to as a browser or Prometheus would: a real daemon and worker on
// 127.0.0.1, jobs submitted over gRPC, the JSON API and /metrics read with cpp-httplib's client.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "httplib.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/harness.h"
#include "tests/e2e/http_test_util.h"

namespace tune::testing {
namespace {

constexpr auto kJobTimeout = seconds(240);

TEST(HttpApiTest, SubmittedJobShowsItsProgressRecordsAndTrialOutcomes) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"), {.local_workers = 1, .http = true});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  httplib::Client http("127.0.0.1", (*daemon)->http_port());

  auto submitted = SubmitJob((*daemon)->address(), FastSpec("gemm:M=32,N=32,K=32", 4));
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  const uint64_t id = submitted->job_id();

  // Listed at once, with its budget.
  const nlohmann::json listed = GetJson(http, "/api/jobs", 200);
  const nlohmann::json* row = FindJob(listed, id);
  ASSERT_NE(row, nullptr) << listed.dump(2);
  EXPECT_EQ((*row)["trials"], 4);
  EXPECT_EQ((*row)["workload"], "gemm:M=32,N=32,K=32");

  auto done = WaitForJob((*daemon)->address(), id, kJobTimeout);
  ASSERT_TRUE(done.ok()) << done.status() << (*daemon)->process().Log();
  ASSERT_EQ(done->state(), v1::JOB_STATE_SUCCEEDED) << done->DebugString();
  const int successful = done->trials_done() - done->trials_failed();
  ASSERT_GT(successful, 0);

  nlohmann::json job = GetJson(http, "/api/jobs/" + std::to_string(id), 200);
  EXPECT_EQ(job["state"], "SUCCEEDED");
  EXPECT_EQ(job["trials_done"], done->trials_done());
  EXPECT_EQ(job["trials_failed"], done->trials_failed());
  EXPECT_EQ(job["eta_seconds"], 0);
  // The same best as gRPC's (once the job has left the daemon's memory it is computed from the
  // log, and its last bits may differ).
  EXPECT_NEAR(job["best"]["gflops"].get<double>(), done->best().gflops(),
              1e-9 * done->best().gflops());
  const nlohmann::json succeeded = GetJson(http, "/api/jobs?state=succeeded", 200);
  const nlohmann::json* again = FindJob(succeeded, id);
  ASSERT_NE(again, nullptr) << succeeded.dump(2);
  EXPECT_EQ((*again)["trials_done"], done->trials_done());
  EXPECT_EQ(FindJob(GetJson(http, "/api/jobs?state=QUEUED,RUNNING", 200), id), nullptr);

  // Its records: every trial once, in the order recorded, plus its finalists' re-measurements.
  nlohmann::json records = GetJson(http, "/api/jobs/" + std::to_string(id) + "/records", 200);
  EXPECT_EQ(records["more"], false);
  int trials = 0;
  int ok = 0;
  int64_t last_id = 0;
  for (const nlohmann::json& r : records["records"]) {
    EXPECT_EQ(r["job_id"], id);
    EXPECT_GT(r["id"].get<int64_t>(), last_id);
    last_id = r["id"].get<int64_t>();
    if (!r["final"].get<bool>()) {
      ++trials;
      ok += r["error"] == "NONE";
    }
  }
  EXPECT_EQ(trials, done->trials_done());
  EXPECT_EQ(ok, successful);
  EXPECT_EQ(records["next_after"], last_id);
  // Pages: the first record alone, then the rest after it.
  nlohmann::json first = GetJson(http, "/api/jobs/" + std::to_string(id) + "/records?limit=1", 200);
  ASSERT_EQ(first["records"].size(), 1u);
  EXPECT_EQ(first["more"], true);
  nlohmann::json rest = GetJson(
      http, "/api/jobs/" + std::to_string(id) + "/records?after=" + first["next_after"].dump(),
      200);
  EXPECT_EQ(rest["records"].size() + 1, records["records"].size());

  // The workers: the local one, with its device key.
  nlohmann::json workers = GetJson(http, "/api/workers", 200);
  ASSERT_EQ(workers["workers"].size(), 1u) << workers.dump(2);
  EXPECT_EQ(workers["workers"][0]["device_key"], done->device_key());

  // Metrics count the job's trials by outcome, and the latencies of what they went through.
  std::map<std::string, double> metrics = ParseMetrics(GetText(http, "/metrics", 200));
  EXPECT_EQ(metrics["tune_trials_total{outcome=\"ok\"}"], successful);
  double all_outcomes = 0;
  for (const auto& [series, value] : metrics) {
    if (series.starts_with("tune_trials_total{")) {
      all_outcomes += value;
    }
  }
  EXPECT_EQ(all_outcomes, done->trials_done());
  EXPECT_EQ(metrics["tune_workers{device_key=\"" + done->device_key() + "\"}"], 1);
  EXPECT_EQ(metrics["tune_jobs{state=\"running\"}"], 0);
  EXPECT_EQ(metrics["tune_trials_pending{stage=\"in_flight\"}"], 0);
  EXPECT_GE(metrics["tune_measurement_duration_seconds_count"], successful);
  EXPECT_GE(metrics["tune_db_write_duration_seconds_count"], done->trials_done());
  EXPECT_GE(metrics["tune_build_duration_seconds_count"], 1);
  EXPECT_GT(metrics["tune_process_start_time_seconds"], 1.6e9);
}

TEST(HttpApiTest, BadPathsIdsAndParametersAreJsonErrorsNamingWhatWasWrong) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"), {.http = true});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  httplib::Client http("127.0.0.1", (*daemon)->http_port());

  nlohmann::json error = GetJson(http, "/api/nope", 404);
  EXPECT_EQ(error["error"]["code"], "NOT_FOUND");
  EXPECT_NE(error["error"]["message"].get<std::string>().find("/api/nope"), std::string::npos);
  EXPECT_NE(error["error"]["message"].get<std::string>().find("/api/jobs"), std::string::npos);

  error = GetJson(http, "/api/jobs/abc", 400);
  EXPECT_EQ(error["error"]["code"], "INVALID_ARGUMENT");
  EXPECT_NE(error["error"]["message"].get<std::string>().find("'abc'"), std::string::npos);

  error = GetJson(http, "/api/jobs/999", 404);
  EXPECT_EQ(error["error"]["message"], "job 999 does not exist");
  error = GetJson(http, "/api/jobs/999/records", 404);
  EXPECT_EQ(error["error"]["message"], "job 999 does not exist");

  error = GetJson(http, "/api/jobs?state=DONE", 400);
  EXPECT_NE(error["error"]["message"].get<std::string>().find("state: 'DONE'"), std::string::npos);
  error = GetJson(http, "/api/jobs?limit=-1", 400);
  EXPECT_NE(error["error"]["message"].get<std::string>().find("limit"), std::string::npos);
  error = GetJson(http, "/api/jobs/1/records?limit=0", 400);
  EXPECT_NE(error["error"]["message"].get<std::string>().find("limit"), std::string::npos);

  httplib::Result posted = http.Post("/api/jobs", "{}", "application/json");
  ASSERT_TRUE(posted) << httplib::to_string(posted.error());
  EXPECT_EQ(posted->status, 405);
  EXPECT_NE(
      nlohmann::json::parse(posted->body)["error"]["message"].get<std::string>().find("read-only"),
      std::string::npos);

  // An empty daemon answers with empty lists, not errors.
  EXPECT_EQ(GetJson(http, "/api/jobs", 200)["jobs"].size(), 0u);
  EXPECT_EQ(GetJson(http, "/api/workers", 200)["workers"].size(), 0u);
  EXPECT_EQ(GetJson(http, "/api/quarantine", 200)["entries"].size(), 0u);
  EXPECT_EQ(GetJson(http, "/api/fingerprints", 200)["fingerprints"].size(), 0u);
  EXPECT_EQ(GetJson(http, "/api/health", 200)["status"], "SERVING");
}

TEST(HttpApiTest, DashboardPageIsServedFromTheBinary) {
  TempDir dir;
  auto daemon = Daemon::Start(dir, dir.File("tuning.db"), {.http = true});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  httplib::Client http("127.0.0.1", (*daemon)->http_port());
  for (const auto& [path, type, text] :
       {std::tuple{"/", "text/html", "<title>tune dashboard</title>"},
        {"/index.html", "text/html", "app.js"},
        {"/app.js", "text/javascript", "/api/jobs"},
        {"/plot.js", "text/javascript", "convergencePlot"},
        {"/style.css", "text/css", "svg.convergence"}}) {
    httplib::Result got = http.Get(path);
    ASSERT_TRUE(got) << path << ": " << httplib::to_string(got.error());
    EXPECT_EQ(got->status, 200) << path;
    EXPECT_TRUE(got->get_header_value("Content-Type").starts_with(type)) << path;
    EXPECT_NE(got->body.find(text), std::string::npos) << path;
  }
}

TEST(HttpApiTest, WithTokensOnEveryApiRequestNeedsATokenWithTheReadRole) {
  TempDir dir;
  const std::string db = dir.File("tuning.db");
  auto token = [&](const std::string& name, const std::string& role) {
    CommandResult created = RunCommand(
        {Binaries::Daemon(), "token", "create", "--db", db, "--name", name, "--role", role});
    EXPECT_EQ(created.exit_code, 0) << created.err;
    return created.out.substr(0, created.out.find('\n'));
  };
  const std::string reader = token("reader", "read");
  const std::string worker = token("worker", "worker");
  auto daemon = Daemon::Start(dir, db, {.http = true});
  ASSERT_TRUE(daemon.ok()) << daemon.status();
  httplib::Client http("127.0.0.1", (*daemon)->http_port());

  for (const std::string path : {"/api/jobs", "/api/workers", "/api/quarantine",
                                 "/api/fingerprints", "/api/health", "/metrics"}) {
    nlohmann::json refused = GetJson(http, path, 401);
    EXPECT_EQ(refused["error"]["code"], "UNAUTHENTICATED") << path;
    EXPECT_FALSE(refused["error"]["message"].get<std::string>().empty()) << path;

    refused = GetJson(http, path, 401, {{"Authorization", "Bearer tune_0000_1111"}});
    EXPECT_EQ(refused["error"]["code"], "UNAUTHENTICATED") << path;

    refused = GetJson(http, path, 403, {{"Authorization", "Bearer " + worker}});
    EXPECT_EQ(refused["error"]["code"], "PERMISSION_DENIED") << path;

    httplib::Result allowed = http.Get(path, {{"Authorization", "Bearer " + reader}});
    ASSERT_TRUE(allowed) << path;
    EXPECT_EQ(allowed->status, 200) << path << ": " << allowed->body;
  }
  // The page itself holds no data: it loads, then asks for a token.
  httplib::Result page = http.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
}

}  // namespace
}  // namespace tune::testing
