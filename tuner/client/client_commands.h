// tune-client's commands, one function each, over TunerClient: what `Main` (client_main.cc)
// runs once the command line is parsed. Each prints its result (text, or JSON with --json) and
// returns the process's exit code; `Report` is the one place where a failed call becomes a
// message and an exit code.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "net/tls.h"
#include "nlohmann/json.hpp"
#include "tune/v1/tuner.pb.h"
#include "tuner/api/client.h"

namespace tune::tuner {

constexpr int kExitOk = 0;
constexpr int kExitNoResult = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnreachable = 3;
constexpr int kExitInvalid = 4;
constexpr int kExitNotFound = 5;
constexpr int kExitError = 6;
constexpr int kExitDenied = 7;

/// The flags every command takes.
struct Globals {
  std::string daemon = "127.0.0.1:7070";
  bool json = false;
  int rpc_timeout_ms = 10000;
  net::TlsFiles tls;
  std::string token_file;
};

/// `submit`'s flags, before they become a JobSpec.
struct SubmitFlags {
  v1::JobSpec spec;
  std::string workloads_file;
  std::string model;
  std::string onnx;               // an ONNX model's file
  std::vector<std::string> dims;  // its symbolic dimensions' values, NAME=VALUE
  std::vector<std::string> templates;
  int number = 0, repeat = 0, max_repeat = 0, min_repeat_ms = 0, kernel_timeout_ms = 0;
  double target_ci = 0;
  bool flush_cache = false;
  bool wait = false;
  int wait_timeout_s = 0;
};

/// `reverify`'s flags: exactly one of --workload, --workloads-file, --model, --all.
struct ReverifyFlags {
  v1::ReverifyRequest request;
  std::string workloads_file;
  std::string model;
  bool wait = false;
  int wait_timeout_s = 0;
};

enum class TokenCommand { kCreate, kRevoke, kList };

/// Prints what went wrong and returns the exit code for it.
int Report(const absl::Status& status, const Globals& g);
void PrintJson(const nlohmann::json& j);
/// Exit code of a job that ended in `job.state()`, with a message for one that did not succeed.
int FinalExit(const v1::Job& job);

int Submit(TunerClient& client, const Globals& g, SubmitFlags& f);
/// Follows job `job_id` with a progress bar (none with --json) until it ends or `wait_timeout_s`
/// pass (0: a month), and returns it as it ended.
absl::StatusOr<v1::Job> FollowToEnd(TunerClient& client, const Globals& g, uint64_t job_id,
                                    int wait_timeout_s);
/// With `wait_timeout_s` (0: a month), follows `job` with a progress bar until it ends and
/// prints its result (a model job: its tasks); returns FinalExit's code.
int WaitForEnd(TunerClient& client, const Globals& g, const v1::Job& job, int wait_timeout_s);
/// `reverify`: queues a reverify job and prints its id; with --wait, each workload's verdict
/// (confirmed or changed) once it ends (client_reverify.cc).
int Reverify(TunerClient& client, const Globals& g, ReverifyFlags& f);
/// `tune-client onnx MODEL`: the model's workloads file (or, with --json, its workloads and
/// skipped nodes); needs no daemon.
int PrintOnnx(const Globals& g, const std::string& path, const std::vector<std::string>& dims);
int Watch(TunerClient& client, const Globals& g, uint64_t job_id);
int Best(TunerClient& client, const Globals& g, const v1::QueryBestRequest& request);
/// Writes the records as JSON lines to `out_path` at once: a failure leaves no partial file.
int Export(TunerClient& client, const Globals& g, const v1::ExportRecordsRequest& request,
           const std::string& out_path);
int Import(TunerClient& client, const Globals& g, const std::string& path);
int Tokens(TunerClient& client, const Globals& g, TokenCommand command, const std::string& name,
           const std::string& role, const std::string& id);
/// `quarantine`: lists the entries (`request`), or lifts entry `lift_id` when it is not 0.
int Quarantine(TunerClient& client, const Globals& g, const v1::ListQuarantineRequest& request,
               uint64_t lift_id);

}  // namespace tune::tuner
