// tune-client: the command line of tune-daemon.
//
//   tune-client [--daemon HOST:PORT] [--json] [--rpc-timeout-ms MS] COMMAND ...
//     submit (--workload W | --workloads-file F | --model NAME) --target T --trials N
//            [--strategy S] [--priority P] [--seed S] [--template NAME]... [--wait]
//                                                          prints the job id
//     status JOB | watch JOB | cancel JOB | jobs | workers [--all]
//     models [NAME]                                        built-in models and their layers
//     best --workload W (--target T | --device-key K) [--top K]
//     export --out F.jsonl [--workload W] [--device-key K] [--include-failures]
//     import F.jsonl
//     token create --name NAME --role read|submit|admin|worker | token revoke ID | token list
//
// Security flags (each also from the environment): --tls-ca F (TUNE_TLS_CA: turns TLS on; the
// daemon's certificate must be signed by it), --tls-cert F --tls-key F (TUNE_TLS_CERT,
// TUNE_TLS_KEY: this client's certificate, for mutual TLS), --tls-server-name NAME,
// --token-file F (else TUNE_TOKEN).
//
// Exit codes: 0 success; 1 no result (`best` found nothing; a waited-for job FAILED or was
// CANCELLED); 2 bad command line; 3 daemon unreachable; 4 invalid request (the daemon's message
// is printed); 5 unknown job (NOT_FOUND); 6 any other error; 7 not allowed (no valid token, or
// its role does not grant the command; the message names the role needed).

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "CLI/CLI.hpp"
#include "common/files.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/workload_list.h"
#include "db/record_json.h"
#include "tuner/client.h"
#include "tuner/client_follow.h"
#include "tuner/client_format.h"
#include "tuner/proto_convert.h"

namespace tune::tuner {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitNoResult = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnreachable = 3;
constexpr int kExitInvalid = 4;
constexpr int kExitNotFound = 5;
constexpr int kExitError = 6;
constexpr int kExitDenied = 7;

using std::chrono::milliseconds;

struct Globals {
  std::string daemon = "127.0.0.1:7070";
  bool json = false;
  int rpc_timeout_ms = 10000;
  net::TlsFiles tls;
  std::string token_file;
};

// The one place where a failed call becomes a message and an exit code.
int Report(const absl::Status& status, const Globals& g) {
  const std::string message(status.message());
  switch (status.code()) {
    case absl::StatusCode::kUnavailable:
      fmt::print(stderr,
                 "tune-client: cannot reach tune-daemon at {} ({}).\n"
                 "Is it running? Start one with: tune-daemon --listen {} --db tuning.db "
                 "--local-workers 1\n",
                 g.daemon, message, g.daemon);
      if (g.tls.enabled()) {
        fmt::print(stderr,
                   "With TLS, also check that --tls-ca signed the daemon's certificate, that "
                   "the certificate names the host dialed (else --tls-server-name) and that the "
                   "daemon accepts --tls-cert.\n");
      }
      return kExitUnreachable;
    case absl::StatusCode::kDeadlineExceeded:
      fmt::print(stderr, "tune-client: tune-daemon at {} did not answer in time ({})\n", g.daemon,
                 message);
      return kExitUnreachable;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
      fmt::print(stderr, "tune-client: invalid request: {}\n", message);
      return kExitInvalid;
    case absl::StatusCode::kNotFound:
      fmt::print(stderr, "tune-client: not found: {}\n", message);
      return kExitNotFound;
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      fmt::print(stderr, "tune-client: not allowed: {}\n", message);
      return kExitDenied;
    default:
      fmt::print(stderr, "tune-client: error: {}\n", status);
      return kExitError;
  }
}

void PrintJson(const nlohmann::json& j) { fmt::print("{}\n", j.dump(2)); }

// Exit code of a job that ended in `state`, with a message for the ones that did not succeed.
int FinalExit(const v1::Job& job) {
  if (job.state() == v1::JOB_STATE_SUCCEEDED) {
    return kExitOk;
  }
  fmt::print(stderr, "tune-client: job {} {}{}\n", job.job_id(), JobStateText(job.state()),
             job.message().empty() ? "" : StrCat(": ", job.message()));
  return kExitNoResult;
}

struct SubmitFlags {
  v1::JobSpec spec;
  std::string workloads_file;
  std::string model;
  std::vector<std::string> templates;
  int number = 0, repeat = 0, max_repeat = 0, min_repeat_ms = 0, kernel_timeout_ms = 0;
  double target_ci = 0;
  bool flush_cache = false;
  bool wait = false;
  int wait_timeout_s = 0;
};

// A model job's tasks from --workloads-file or --model, read here so that a bad line is
// reported by its number before anything is submitted.
absl::Status AddModelTasks(SubmitFlags& f) {
  if (f.workloads_file.empty() && f.model.empty()) {
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<WeightedWorkload>> list =
      f.model.empty() ? ReadWorkloadList(f.workloads_file) : BuiltinModel(f.model);
  if (!list.ok()) {
    return list.status();
  }
  for (const WeightedWorkload& w : *list) {
    v1::WorkloadTask* task = f.spec.add_tasks();
    task->set_workload(w.workload.ToString());
    task->set_weight(w.weight);
  }
  if (f.spec.name().empty()) {
    f.spec.set_name(f.model.empty() ? f.workloads_file : f.model);
  }
  return absl::OkStatus();
}

int Submit(TunerClient& client, const Globals& g, SubmitFlags& f) {
  if (f.spec.workload().empty() && f.workloads_file.empty() && f.model.empty()) {
    fmt::print(stderr, "tune-client: submit needs --workload, --workloads-file or --model\n");
    return kExitUsage;
  }
  if (absl::Status s = AddModelTasks(f); !s.ok()) {
    fmt::print(stderr, "tune-client: {}\n", s.message());
    return kExitUsage;
  }
  for (const std::string& t : f.templates) {
    f.spec.add_templates(t);
  }
  v1::TimingOptions* timing = f.spec.mutable_timing();
  timing->set_number(f.number);
  timing->set_repeat(f.repeat);
  timing->set_max_repeat(f.max_repeat);
  timing->set_target_ci(f.target_ci);
  timing->set_min_repeat_ms(f.min_repeat_ms);
  timing->set_timeout_ms(f.kernel_timeout_ms);
  timing->set_flush_cache(f.flush_cache);
  absl::StatusOr<v1::Job> job = client.SubmitJob(f.spec);
  if (!job.ok()) {
    return Report(job.status(), g);
  }
  if (!f.wait) {
    if (g.json) {
      PrintJson(JobJson(*job));
    } else {
      fmt::print("{}\n", job->job_id());
    }
    return kExitOk;
  }
  if (!g.json) {
    fmt::print("{}\n", job->job_id());
    std::fflush(stdout);
  }
  milliseconds deadline = f.wait_timeout_s > 0 ? milliseconds(f.wait_timeout_s * 1000LL)
                                               : milliseconds(std::chrono::hours(24 * 30));
  absl::StatusOr<v1::JobState> state;
  {
    ProgressDisplay display(client, g.json);
    state =
        Follow(client, job->job_id(), deadline, [&](const v1::JobEvent& e) { display.Show(e); });
  }
  if (!state.ok()) {
    return Report(state.status(), g);
  }
  absl::StatusOr<v1::Job> done = client.GetJob(job->job_id());
  if (!done.ok()) {
    return Report(done.status(), g);
  }
  if (g.json) {
    PrintJson(JobJson(*done));
  } else if (done->spec().tasks_size() > 0) {
    fmt::print("{}", TasksTable(done->tasks()));
    fmt::print("total: {}\n",
               ModelTotalText(done->estimated_total_secs(), done->default_total_secs()));
  } else if (done->has_best()) {
    fmt::print("best: {:.3f} GFLOPS ({:.4g} s) {} {}\n", done->best().gflops(), done->best().secs(),
               done->best().template_name(), done->best().config());
  } else {
    fmt::print("best: none ({} of {} trials failed)\n", done->trials_failed(), done->trials_done());
  }
  return FinalExit(*done);
}

int Watch(TunerClient& client, const Globals& g, uint64_t job_id) {
  std::map<uint64_t, std::string> task_lines;  // a model job's tasks, as last printed
  absl::StatusOr<v1::JobState> state =
      Follow(client, job_id, milliseconds(std::chrono::hours(24 * 30)), [&](const v1::JobEvent& e) {
        if (g.json) {
          fmt::print("{}\n", EventJson(e).dump());
        } else {
          std::string why;
          if (e.state() == v1::JOB_STATE_QUEUED) {
            // Events do not say why a job waits; the job does.
            absl::StatusOr<v1::Job> job = client.GetJob(e.job_id());
            if (job.ok() && !job->message().empty()) {
              why = StrCat(" (", job->message(), ")");
            }
          } else if (e.state() == v1::JOB_STATE_RUNNING && !e.message().empty()) {
            why = StrCat(" (", e.message(), ")");  // e.g. re-measuring its finalists
          }
          fmt::print("job {}: {}{}{}\n", e.job_id(), ProgressText(e), why,
                     e.last_error().empty() ? "" : StrCat("; last error: ", e.last_error()));
          // A model job: the workloads whose progress moved since the last event.
          for (const v1::TaskProgress& t : e.tasks()) {
            std::string line = TaskLine(t);
            if (std::string& last = task_lines[t.job_id()]; last != line) {
              fmt::print("  {}\n", line);
              last = std::move(line);
            }
          }
        }
        std::fflush(stdout);
      });
  if (!state.ok()) {
    return Report(state.status(), g);
  }
  absl::StatusOr<v1::Job> job = client.GetJob(job_id);
  if (!job.ok()) {
    return Report(job.status(), g);
  }
  return g.json ? (job->state() == v1::JOB_STATE_SUCCEEDED ? kExitOk : kExitNoResult)
                : FinalExit(*job);
}

int Best(TunerClient& client, const Globals& g, const v1::QueryBestRequest& request) {
  absl::StatusOr<v1::QueryBestResponse> best = client.QueryBest(request);
  if (absl::IsNotFound(best.status())) {
    if (g.json) {
      PrintJson(nlohmann::json::array());
    } else {
      fmt::print(stderr, "tune-client: {}\n", best.status().message());
    }
    return kExitNoResult;
  }
  if (!best.ok()) {
    return Report(best.status(), g);
  }
  // A fallback is never silent: each JSON record says so, and the text says what was matched
  // before the records.
  if (g.json) {
    PrintJson(BestJson(*best, request.target()));
  } else {
    // A fallback is never silent: say what was matched before the records.
    if (best->match() == v1::BEST_MATCH_SAME_DEVICE || best->events_fallback()) {
      fmt::print(stderr, "tune-client: {}\n", best->note());
    }
    fmt::print("{}", BestText({best->records().begin(), best->records().end()}));
  }
  return kExitOk;
}

int Export(TunerClient& client, const Globals& g, const v1::ExportRecordsRequest& request,
           const std::string& out_path) {
  // The whole export is written at once, so a failure leaves no partial file behind.
  std::string lines;
  int64_t count = 0;
  absl::Status s = client.ExportRecords(
      request,
      [&](const v1::Record& proto) -> absl::Status {
        ASSIGN_OR_RETURN(Record record, RecordFromProto(proto));
        StrAppend(&lines, RecordToJsonLine(record), "\n");
        ++count;
        return absl::OkStatus();
      },
      milliseconds(std::chrono::hours(1)));
  if (!s.ok()) {
    return Report(s, g);
  }
  if (absl::Status written = WriteFileAtomically(out_path, lines); !written.ok()) {
    fmt::print(stderr, "tune-client: {}\n", written.message());
    return kExitError;
  }
  if (g.json) {
    PrintJson({{"exported", count}, {"path", out_path}});
  } else {
    fmt::print("exported {} record(s) to {}\n", count, out_path);
  }
  return kExitOk;
}

int Import(TunerClient& client, const Globals& g, const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fmt::print(stderr, "tune-client: cannot read {}\n", path);
    return kExitError;
  }
  std::vector<v1::Record> records;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    absl::StatusOr<Record> record = RecordFromJsonLine(line);
    if (!record.ok()) {
      fmt::print(stderr, "tune-client: invalid request: {} line {}: {}\n", path, n,
                 record.status().message());
      return kExitInvalid;
    }
    records.push_back(RecordToProto(*record));
  }
  size_t next = 0;
  absl::StatusOr<v1::ImportRecordsResponse> response = client.ImportRecords(
      [&](v1::Record* out) {
        if (next == records.size()) {
          return false;
        }
        *out = records[next++];
        return true;
      },
      milliseconds(std::chrono::hours(1)));
  if (!response.ok()) {
    return Report(response.status(), g);
  }
  if (g.json) {
    PrintJson({{"imported", response->imported()},
               {"duplicates", response->duplicates()},
               {"rejected", response->rejected()},
               {"errors",
                std::vector<std::string>(response->errors().begin(), response->errors().end())}});
  } else {
    fmt::print("imported {} record(s), {} already present, {} rejected\n", response->imported(),
               response->duplicates(), response->rejected());
    for (const std::string& e : response->errors()) {
      fmt::print(stderr, "  {}\n", e);
    }
  }
  return response->rejected() > 0 ? kExitInvalid : kExitOk;
}

enum class TokenCommand { kCreate, kRevoke, kList };

int Tokens(TunerClient& client, const Globals& g, TokenCommand command, const std::string& name,
           const std::string& role, const std::string& id) {
  switch (command) {
    case TokenCommand::kCreate: {
      absl::StatusOr<v1::CreateTokenResponse> created = client.CreateToken(name, role);
      if (!created.ok()) {
        return Report(created.status(), g);
      }
      if (g.json) {
        nlohmann::json out = TokenJson(created->token());
        out["text"] = created->text();
        PrintJson(out);
      } else {
        fmt::print("{}\n", created->text());
        fmt::print(stderr, "token {} for {} (role {}); it is shown only now\n",
                   created->token().id(), name, role);
      }
      return kExitOk;
    }
    case TokenCommand::kRevoke: {
      absl::StatusOr<v1::TokenInfo> revoked = client.RevokeToken(id);
      if (!revoked.ok()) {
        return Report(revoked.status(), g);
      }
      g.json ? PrintJson(TokenJson(*revoked)) : fmt::print("revoked {}\n", id);
      return kExitOk;
    }
    case TokenCommand::kList: {
      absl::StatusOr<std::vector<v1::TokenInfo>> tokens = client.ListTokens();
      if (!tokens.ok()) {
        return Report(tokens.status(), g);
      }
      if (g.json) {
        nlohmann::json out = nlohmann::json::array();
        for (const v1::TokenInfo& t : *tokens) {
          out.push_back(TokenJson(t));
        }
        PrintJson(out);
      } else {
        fmt::print("{}", TokensTable(*tokens));
      }
      return kExitOk;
    }
  }
  return kExitUsage;
}

int Main(int argc, char** argv) {
  CLI::App app{"tune-client: talks to a tune-daemon"};
  app.require_subcommand(1);
  // Global flags (--json, --daemon, ...) are accepted after the subcommand too.
  app.fallthrough();
  Globals g;
  app.add_option("--daemon", g.daemon, "the daemon's address, HOST:PORT")
      ->envname("TUNE_DAEMON")
      ->capture_default_str();
  app.add_flag("--json", g.json, "machine-readable JSON output");
  app.add_option("--rpc-timeout-ms", g.rpc_timeout_ms, "deadline of each call")
      ->capture_default_str();
  app.add_option("--tls-ca", g.tls.ca,
                 "CA certificate (PEM) that signed the daemon's certificate; turns TLS on")
      ->envname("TUNE_TLS_CA");
  app.add_option("--tls-cert", g.tls.cert, "this client's certificate (PEM), for mutual TLS")
      ->envname("TUNE_TLS_CERT");
  app.add_option("--tls-key", g.tls.key, "the private key of --tls-cert (PEM)")
      ->envname("TUNE_TLS_KEY");
  app.add_option("--tls-server-name", g.tls.server_name,
                 "the name the daemon's certificate must carry, when not the host of --daemon");
  app.add_option("--token-file", g.token_file,
                 "file whose first line is this client's token (default: $TUNE_TOKEN)");

  SubmitFlags submit;
  CLI::App* submit_cmd = app.add_subcommand("submit", "queue a tuning job and print its id");
  auto* workload_opt = submit_cmd->add_option("--workload", *submit.spec.mutable_workload(),
                                              "e.g. gemm:M=512,N=512,K=512");
  auto* file_opt = submit_cmd->add_option(
      "--workloads-file", submit.workloads_file,
      "a model job: one workload per line, optionally followed by its weight (how often it "
      "runs); '#' comments");
  auto* model_opt = submit_cmd->add_option(
      "--model", submit.model,
      StrCat("a model job over a built-in model's layers: ", Join(BuiltinModelNames(), ", ")));
  workload_opt->excludes(file_opt)->excludes(model_opt);
  file_opt->excludes(model_opt);
  submit_cmd
      ->add_option("--target", *submit.spec.mutable_target(),
                   "e.g. 'llvm -mcpu=native -threads=1' (native: the daemon's CPU)")
      ->required();
  int trials = 0, priority = 0, early_stopping = 0;
  bool no_transfer = false;
  uint64_t seed = 0;
  std::string strategy;
  submit_cmd
      ->add_option("--trials", trials,
                   "measurements to make (>= 1; a model job's, at least one per workload)")
      ->required();
  submit_cmd->add_option("--strategy", strategy,
                         "grid, random, ga, xgb or auto (default: auto, random until a cost "
                         "model has data, then xgb)");
  submit_cmd->add_option("--priority", priority, "higher runs first (-1000 to 1000)");
  submit_cmd->add_option("--seed", seed, "seed of the search (default 1)");
  submit_cmd->add_option("--template", submit.templates,
                         "only this template (repeatable; default: all that apply)");
  submit_cmd->add_flag("--no-transfer", no_transfer,
                       "do not learn from the log's records of other workloads");
  submit_cmd->add_option("--early-stopping", early_stopping,
                         "stop after this many trials without improvement (0: never)");
  submit_cmd->add_option("--name", *submit.spec.mutable_name(), "a label for people");
  submit_cmd->add_option("--number", submit.number, "timing: initial calls per round");
  submit_cmd->add_option("--repeat", submit.repeat, "timing: rounds at least (default 3)");
  submit_cmd->add_option("--max-repeat", submit.max_repeat,
                         "timing: rounds at most, timed while the median is not known to within "
                         "--target-ci (default 10)");
  submit_cmd->add_option("--target-ci", submit.target_ci,
                         "timing: relative 95% confidence half-width of the median that ends "
                         "the rounds (default 0.02)");
  submit_cmd->add_option("--min-repeat-ms", submit.min_repeat_ms,
                         "timing: minimum duration of a round");
  submit_cmd->add_option("--kernel-timeout-ms", submit.kernel_timeout_ms,
                         "timing: deadline of one measurement");
  submit_cmd->add_flag("--flush-cache", submit.flush_cache,
                       "timing: evict the kernel's buffers from every cache level (clflush) before "
                       "each round; only a round's first call starts cold, and a round's time is "
                       "the mean of its calls");
  submit_cmd->add_flag("--wait", submit.wait, "follow the job with a progress bar until it ends");
  submit_cmd->add_option("--wait-timeout-s", submit.wait_timeout_s,
                         "with --wait: give up after this many seconds (0: never)");

  uint64_t job_id = 0;
  CLI::App* status_cmd = app.add_subcommand("status", "describe a job");
  status_cmd->add_option("JOB", job_id, "job id")->required();
  CLI::App* watch_cmd = app.add_subcommand("watch", "stream a job's progress until it ends");
  watch_cmd->add_option("JOB", job_id, "job id")->required();
  CLI::App* cancel_cmd = app.add_subcommand("cancel", "cancel a queued or running job");
  cancel_cmd->add_option("JOB", job_id, "job id")->required();
  int limit = 0;
  CLI::App* jobs_cmd = app.add_subcommand("jobs", "list jobs, newest first");
  jobs_cmd->add_option("--limit", limit, "at most this many (default 100)");
  bool all_workers = false;
  CLI::App* workers_cmd = app.add_subcommand("workers", "list the connected workers");
  workers_cmd->add_flag("--all", all_workers, "also workers lost since the daemon started");

  v1::QueryBestRequest best;
  int top = 1;
  CLI::App* best_cmd = app.add_subcommand("best", "the fastest recorded configs of a workload");
  best_cmd->add_option("--workload", *best.mutable_workload(), "canonical workload")->required();
  auto* best_target = best_cmd->add_option("--target", *best.mutable_target(), "target text");
  auto* best_key = best_cmd->add_option("--device-key", *best.mutable_device_key(), "device key");
  best_target->excludes(best_key);
  best_cmd->add_option("--top", top, "how many (default 1)");
  bool best_cold = false;
  best_cmd->add_flag("--flush-cache", best_cold,
                     "with --target: records timed with cold caches (submit --flush-cache)");

  v1::ExportRecordsRequest export_request;
  std::string export_path;
  bool include_failures = false;
  CLI::App* export_cmd = app.add_subcommand("export", "write records as JSON lines");
  export_cmd->add_option("--out", export_path, "output file (.jsonl)")->required();
  export_cmd->add_option("--workload", *export_request.mutable_workload(), "only this workload");
  export_cmd->add_option("--device-key", *export_request.mutable_device_key(),
                         "only this device key");
  export_cmd->add_flag("--include-failures", include_failures, "also failed trials");

  std::string model_name;
  CLI::App* models_cmd =
      app.add_subcommand("models", "list the built-in models, or print one's workloads file");
  models_cmd->add_option("NAME", model_name, Join(BuiltinModelNames(), ", "));

  std::string import_path;
  CLI::App* import_cmd = app.add_subcommand("import", "add records from a JSON-lines file");
  import_cmd->add_option("FILE", import_path, "input file (.jsonl)")->required();

  std::string token_name, token_role, token_id;
  CLI::App* token_cmd = app.add_subcommand("token", "client tokens (admin)");
  token_cmd->require_subcommand(1);
  CLI::App* token_create = token_cmd->add_subcommand("create", "create a token, shown once");
  token_create->add_option("--name", token_name, "who holds it (letters, digits and . _ @ -)")
      ->required();
  token_create->add_option("--role", token_role, "read, submit, admin or worker")->required();
  CLI::App* token_revoke = token_cmd->add_subcommand("revoke", "revoke a token by id");
  token_revoke->add_option("ID", token_id, "the token's id (16 hex digits)")->required();
  token_cmd->add_subcommand("list", "list the tokens");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (best_cmd->parsed() && best.target().empty() && best.device_key().empty()) {
    fmt::print(stderr, "tune-client: best needs --target or --device-key\n");
    return kExitUsage;
  }
  best.set_flush_cache(best_cold);

  if (models_cmd->parsed()) {
    if (model_name.empty()) {
      fmt::print("{}\n", Join(BuiltinModelNames(), "\n"));
      return kExitOk;
    }
    std::string_view text = BuiltinModelText(model_name);
    if (text.empty()) {
      fmt::print(stderr, "tune-client: {}\n", BuiltinModel(model_name).status().message());
      return kExitUsage;
    }
    fmt::print("{}", text);
    return kExitOk;
  }

  absl::StatusOr<std::string> token = net::ResolveToken(g.token_file);
  if (!token.ok()) {
    fmt::print(stderr, "tune-client: {}\n", token.status().message());
    return kExitUsage;
  }
  absl::StatusOr<std::unique_ptr<TunerClient>> connected =
      TunerClient::Create(g.daemon, milliseconds(g.rpc_timeout_ms), {g.tls, *token});
  if (!connected.ok()) {
    fmt::print(stderr, "tune-client: {}\n", connected.status().message());
    return kExitUsage;
  }
  TunerClient& client = **connected;
  if (token_cmd->parsed()) {
    return Tokens(client, g,
                  token_create->parsed()   ? TokenCommand::kCreate
                  : token_revoke->parsed() ? TokenCommand::kRevoke
                                           : TokenCommand::kList,
                  token_name, token_role, token_id);
  }
  if (submit_cmd->parsed()) {
    submit.spec.set_trials(trials);
    submit.spec.set_priority(priority);
    submit.spec.set_seed(seed);
    submit.spec.set_strategy(strategy);
    submit.spec.set_early_stopping(early_stopping);
    submit.spec.set_no_transfer(no_transfer);
    return Submit(client, g, submit);
  }
  if (status_cmd->parsed()) {
    absl::StatusOr<v1::Job> job = client.GetJob(job_id);
    if (!job.ok()) {
      return Report(job.status(), g);
    }
    g.json ? PrintJson(JobJson(*job)) : fmt::print("{}", JobText(*job));
    return kExitOk;
  }
  if (watch_cmd->parsed()) {
    return Watch(client, g, job_id);
  }
  if (cancel_cmd->parsed()) {
    absl::StatusOr<v1::Job> job = client.CancelJob(job_id);
    if (!job.ok()) {
      return Report(job.status(), g);
    }
    if (g.json) {
      PrintJson(JobJson(*job));
    } else {
      fmt::print("job {} cancelled after {} of {} trials\n", job->job_id(), job->trials_done(),
                 job->spec().trials());
    }
    return kExitOk;
  }
  if (jobs_cmd->parsed()) {
    absl::StatusOr<std::vector<v1::Job>> jobs = client.ListJobs(limit);
    if (!jobs.ok()) {
      return Report(jobs.status(), g);
    }
    if (g.json) {
      nlohmann::json out = nlohmann::json::array();
      for (const v1::Job& job : *jobs) {
        out.push_back(JobJson(job));
      }
      PrintJson(out);
    } else {
      fmt::print("{}", JobsTable(*jobs));
    }
    return kExitOk;
  }
  if (workers_cmd->parsed()) {
    absl::StatusOr<std::vector<v1::WorkerInfo>> workers = client.ListWorkers(all_workers);
    if (!workers.ok()) {
      return Report(workers.status(), g);
    }
    if (g.json) {
      nlohmann::json out = nlohmann::json::array();
      for (const v1::WorkerInfo& w : *workers) {
        out.push_back(WorkerJson(w));
      }
      PrintJson(out);
    } else {
      fmt::print("{}", WorkersTable(*workers));
    }
    return kExitOk;
  }
  if (best_cmd->parsed()) {
    best.set_top_k(top);
    return Best(client, g, best);
  }
  if (export_cmd->parsed()) {
    export_request.set_include_failures(include_failures);
    return Export(client, g, export_request, export_path);
  }
  if (import_cmd->parsed()) {
    return Import(client, g, import_path);
  }
  return kExitUsage;
}

}  // namespace
}  // namespace tune::tuner

int main(int argc, char** argv) { return tune::tuner::Main(argc, argv); }
