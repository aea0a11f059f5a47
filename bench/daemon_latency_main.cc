// tune-bench-daemon: how long the daemon keeps a worker's stream waiting. A real Scheduler with
// a real tuning log on disk (WAL, synchronous=FULL) and real LLVM builds runs one job of many
// cheap trials; synthetic workers behind the WorkerChannel seam answer every request at once
// (so trials commit as fast as the daemon can take them) and send heartbeats on a fixed period.
// The figures are each message's latency from the worker's send to the scheduler having taken
// it, through one reader per worker as in the daemon's gRPC handler, so a heartbeat that waits
// behind a result's commit shows it.
//
//   build/bin/tune-bench-daemon --workers 4 --trials 300 --runs 3
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "CLI/CLI.hpp"
#include "common/logging.h"
#include "common/stats.h"
#include "common/status.h"
#include "common/strings.h"
#include "db/tuning_log.h"
#include "tuner/scheduler/scheduler.h"

namespace tune::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// Durations of one kind of call, in microseconds.
struct Samples {
  std::mutex mu;
  std::vector<double> us;
  void Add(Clock::duration d) {
    std::lock_guard lock(mu);
    us.push_back(Micros(d));
  }
};

// A worker that answers every request at once with a fixed successful measurement and sends a
// heartbeat every period. Like the daemon's gRPC handler, one reader thread per worker hands its
// messages to the scheduler in order, so a heartbeat queued behind a slow OnResult waits for it:
// each message's latency runs from the moment the worker sends it to the moment the scheduler
// has taken it.
class SyntheticWorker final : public tuner::WorkerChannel {
 public:
  bool Send(v1::DaemonMessage message) override {
    std::lock_guard lock(mu_);
    if (closed_) {
      return false;
    }
    if (message.has_request()) {
      const uint64_t trial = message.request().trial_id();
      in_flight_.insert(trial);
      v1::WorkerMessage out;
      v1::MeasureResult* result = out.mutable_result();
      result->set_trial_id(trial);
      v1::Measurement* m = result->mutable_measurement();
      m->set_error_kind(v1::ERROR_KIND_NONE);
      m->add_round_secs(1e-5 + 1e-9 * static_cast<double>(trial % 97));
      m->add_round_secs(1e-5);
      m->set_number(1);
      m->set_device_fingerprint("synthetic");
      inbox_.push_back({std::move(out), Clock::now()});
      cv_.notify_all();
    }
    return true;
  }
  void Close() override {
    std::lock_guard lock(mu_);
    closed_ = true;
    cv_.notify_all();
  }

  /// The stream reader: hands every message to the scheduler in order until Close().
  void Read(tuner::Scheduler& scheduler, const std::string& id, Samples& heartbeats,
            Samples& results) {
    while (true) {
      Sent sent;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return closed_ || !inbox_.empty(); });
        if (closed_) {
          return;
        }
        sent = std::move(inbox_.front());
        inbox_.pop_front();
      }
      if (sent.message.has_result()) {
        scheduler.OnResult(id, sent.message.result());
        results.Add(Clock::now() - sent.at);
        std::lock_guard lock(mu_);
        in_flight_.erase(sent.message.result().trial_id());
      } else {
        scheduler.OnHeartbeat(id, sent.message.heartbeat());
        heartbeats.Add(Clock::now() - sent.at);
      }
    }
  }

  /// Queues a heartbeat every `period` until Close().
  void Beat(Clock::duration period) {
    std::unique_lock lock(mu_);
    while (!cv_.wait_for(lock, period, [this] { return closed_; })) {
      v1::WorkerMessage beat;
      for (uint64_t trial : in_flight_) {
        beat.mutable_heartbeat()->add_in_flight_trial_ids(trial);
      }
      inbox_.push_back({std::move(beat), Clock::now()});
      cv_.notify_all();
    }
  }

 private:
  struct Sent {
    v1::WorkerMessage message;
    Clock::time_point at;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  bool closed_ = false;
  std::deque<Sent> inbox_;
  std::set<uint64_t> in_flight_;
};

struct RunResult {
  std::vector<double> heartbeat_us;
  std::vector<double> result_us;
  double trials_per_sec = 0;
};

absl::StatusOr<RunResult> RunOnce(const std::string& dir, int run, int workers, int trials,
                                  int heartbeat_ms, int build_threads) {
  const std::string db = StrCat(dir, "/latency-", run, ".db");
  ASSIGN_OR_RETURN(std::unique_ptr<TuningLog> log, TuningLog::Open(db));
  tuner::SchedulerOptions options;
  options.build_threads = build_threads;
  options.builder_executable = TUNE_DAEMON_PATH;
  options.heartbeat_interval_ms = heartbeat_ms;
  options.heartbeat_deadline_ms = 600000;  // the synthetic workers never go silent
  auto scheduler = std::make_unique<tuner::Scheduler>(log.get(), options);
  RETURN_IF_ERROR(scheduler->Start());

  v1::JobSpec spec;
  spec.set_workload("gemm:M=16,N=16,K=16");
  spec.set_target("llvm -mcpu=native -threads=1");
  spec.set_trials(trials);
  spec.set_strategy("random");
  spec.set_seed(static_cast<uint64_t>(run) + 1);
  ASSIGN_OR_RETURN(v1::Job job, scheduler->SubmitJob(spec, "tune-bench-daemon"));

  Samples heartbeats, results;
  std::vector<std::shared_ptr<SyntheticWorker>> channels;
  std::vector<std::thread> threads;
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < workers; ++i) {
    auto channel = std::make_shared<SyntheticWorker>();
    v1::Register reg;
    reg.set_name(StrCat("synthetic-", i));
    reg.set_device_key(job.device_key());
    reg.mutable_capabilities()->set_capacity(1);
    reg.mutable_capabilities()->set_threads(1);
    ASSIGN_OR_RETURN(std::string id, scheduler->AddWorker(reg, "bench", channel));
    channels.push_back(channel);
    threads.emplace_back([&, channel, id] { channel->Read(*scheduler, id, heartbeats, results); });
    threads.emplace_back(
        [channel, heartbeat_ms] { channel->Beat(std::chrono::milliseconds(heartbeat_ms)); });
  }
  absl::Status watched = scheduler->WatchJob(
      job.job_id(), [](const v1::JobEvent&) { return true; }, [] { return false; });
  const double secs = std::chrono::duration<double>(Clock::now() - start).count();
  scheduler->BeginShutdown();
  for (std::thread& t : threads) {
    t.join();
  }
  scheduler->Shutdown();
  RETURN_IF_ERROR(watched);
  RunResult out;
  out.heartbeat_us = heartbeats.us;
  out.result_us = results.us;
  out.trials_per_sec = trials / secs;
  return out;
}

int Main(int argc, char** argv) {
  CLI::App app{"tune-bench-daemon: how long the daemon blocks worker streams under load"};
  int workers = 4;
  int trials = 300;
  int runs = 3;
  int heartbeat_ms = 10;
  int build_threads = 2;
  std::string dir;
  app.add_option("--workers", workers, "synthetic workers (capacity 1 each)")
      ->capture_default_str();
  app.add_option("--trials", trials, "trials of the one job per run")->capture_default_str();
  app.add_option("--runs", runs, "runs; the figures are medians over runs")->capture_default_str();
  app.add_option("--heartbeat-ms", heartbeat_ms, "heartbeat period of each synthetic worker")
      ->capture_default_str();
  app.add_option("--build-threads", build_threads, "the daemon's build threads")
      ->capture_default_str();
  app.add_option("--dir", dir, "directory for the tuning logs (default: a fresh one in $TMPDIR)");
  CLI11_PARSE(app, argc, argv);
  if (absl::Status s = InitLogging("warn"); !s.ok()) {
    fmt::print(stderr, "tune-bench-daemon: {}\n", s.message());
    return 2;
  }
  std::filesystem::path base = dir;
  if (dir.empty()) {
    base = std::filesystem::temp_directory_path() / StrCat("tune-bench-daemon-", getpid());
  }
  std::filesystem::create_directories(base);

  std::vector<double> hb50, hb99, hbmax, r50, r99, rmax, rate;
  for (int run = 0; run < runs; ++run) {
    absl::StatusOr<RunResult> r =
        RunOnce(base.string(), run, workers, trials, heartbeat_ms, build_threads);
    if (!r.ok()) {
      fmt::print(stderr, "tune-bench-daemon: run {}: {}\n", run, r.status().message());
      return 1;
    }
    fmt::print(
        "run {}: {:.1f} trials/s; heartbeat us p50 {:.0f} p99 {:.0f} max {:.0f} ({} calls); "
        "result us p50 {:.0f} p99 {:.0f} max {:.0f} ({} calls)\n",
        run, r->trials_per_sec, Percentile(r->heartbeat_us, 0.5), Percentile(r->heartbeat_us, 0.99),
        Percentile(r->heartbeat_us, 1.0), r->heartbeat_us.size(), Percentile(r->result_us, 0.5),
        Percentile(r->result_us, 0.99), Percentile(r->result_us, 1.0), r->result_us.size());
    hb50.push_back(Percentile(r->heartbeat_us, 0.5));
    hb99.push_back(Percentile(r->heartbeat_us, 0.99));
    hbmax.push_back(Percentile(r->heartbeat_us, 1.0));
    r50.push_back(Percentile(r->result_us, 0.5));
    r99.push_back(Percentile(r->result_us, 0.99));
    rmax.push_back(Percentile(r->result_us, 1.0));
    rate.push_back(r->trials_per_sec);
  }
  if (dir.empty()) {
    std::filesystem::remove_all(base);
  }
  fmt::print("\n| call | p50 us | p99 us | max us |\n|---|---|---|---|\n");
  fmt::print("| OnHeartbeat | {:.0f} | {:.0f} | {:.0f} |\n", Percentile(hb50, 0.5),
             Percentile(hb99, 0.5), Percentile(hbmax, 0.5));
  fmt::print("| OnResult | {:.0f} | {:.0f} | {:.0f} |\n", Percentile(r50, 0.5),
             Percentile(r99, 0.5), Percentile(rmax, 0.5));
  fmt::print("median over {} runs; {:.1f} trials/s\n", runs, Percentile(rate, 0.5));
  return 0;
}

}  // namespace
}  // namespace tune::bench

int main(int argc, char** argv) { return tune::bench::Main(argc, argv); }
