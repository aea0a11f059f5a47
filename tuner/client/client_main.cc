// tune-client: the command line of tune-daemon.
//
//   tune-client [--daemon HOST:PORT] [--json] [--rpc-timeout-ms MS] COMMAND ...
//     submit (--workload W | --workloads-file F | --model NAME | --onnx MODEL [--dim N=V]...)
//            --target T --trials N [--strategy S] [--priority P] [--seed S] [--template NAME]...
//            [--wait]                                      prints the job id
//     status JOB | watch JOB | cancel JOB | jobs | workers [--all]
//     models [NAME]                                        built-in models and their layers
//     onnx MODEL [--dim NAME=VALUE]...                     an ONNX model's workloads file
//     best --workload W (--target T | --device-key K) [--top K]
//     export --out F.jsonl [--workload W] [--device-key K] [--include-failures]
//     import F.jsonl
//     token create --name NAME --role read|submit|admin|worker | token revoke ID | token list
//     quarantine [--device-key K] [--all] | quarantine lift ID (admin)
//     reverify (--workload W | --workloads-file F | --model NAME | --all) --target T
//              [--trials N] [--wait]          re-measures the best configs under the newest
//                                             fingerprint; prints the job id (and verdicts)
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
#include "common/target.h"
#include "common/workload_list.h"
#include "db/record_json.h"
#include "tuner/api/client.h"
#include "tuner/api/client_format.h"
#include "tuner/api/proto_convert.h"
#include "tuner/client/client_commands.h"
#include "tuner/client/client_follow.h"

namespace tune::tuner {
namespace {

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
  auto* workload_opt = submit_cmd->add_option(
      "--workload", *submit.spec.mutable_workload(),
      "e.g. gemm:M=512,N=512,K=512, or a shape range, e.g. gemm:M=1..4096,N=4096,K=4096 (a range "
      "job: its sizes chosen by the daemon, at least one trial per size)");
  auto* file_opt = submit_cmd->add_option(
      "--workloads-file", submit.workloads_file,
      "a model job: one workload per line, optionally followed by its weight (how often it "
      "runs); '#' comments");
  auto* model_opt = submit_cmd->add_option(
      "--model", submit.model,
      StrCat("a model job over a built-in model's layers: ", Join(BuiltinModelNames(), ", ")));
  auto* onnx_opt = submit_cmd->add_option(
      "--onnx", submit.onnx,
      "a model job over an ONNX model's Conv, Gemm and MatMul nodes (what `tune-client onnx "
      "MODEL` prints); nodes tune cannot run are listed on stderr");
  submit_cmd
      ->add_option("--dim", submit.dims,
                   "with --onnx: NAME=VALUE, the size of a symbolic dimension of the model's "
                   "inputs (repeatable), e.g. batch=1")
      ->needs(onnx_opt);
  workload_opt->excludes(file_opt)->excludes(model_opt)->excludes(onnx_opt);
  file_opt->excludes(model_opt)->excludes(onnx_opt);
  model_opt->excludes(onnx_opt);
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
                         "grid, random, ga, xgb, auto (the default: random until a cost model "
                         "has data, then xgb) or seeds (each template's default and seeds only)");
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
  best_cmd
      ->add_option("--workload", *best.mutable_workload(),
                   "canonical workload, or a shape range (e.g. gemm:M=1..4096,N=4096,K=4096: the "
                   "best of each size measured)")
      ->required();
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
  export_cmd->add_option("--workload", *export_request.mutable_workload(),
                         "only this workload, or the sizes of a shape range");
  export_cmd->add_option("--device-key", *export_request.mutable_device_key(),
                         "only this device key");
  export_cmd->add_flag("--include-failures", include_failures, "also failed trials");

  std::string model_name;
  CLI::App* models_cmd =
      app.add_subcommand("models", "list the built-in models, or print one's workloads file");
  models_cmd->add_option("NAME", model_name, Join(BuiltinModelNames(), ", "));

  std::string onnx_path;
  std::vector<std::string> onnx_dims;
  CLI::App* onnx_cmd = app.add_subcommand(
      "onnx",
      "print the workloads file of an ONNX model's Conv, Gemm and MatMul nodes, and the "
      "nodes tune cannot run");
  onnx_cmd->add_option("MODEL", onnx_path, "the .onnx file")->required();
  onnx_cmd->add_option("--dim", onnx_dims,
                       "NAME=VALUE: the size of a symbolic dimension of the model's inputs "
                       "(repeatable), e.g. batch=1");

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

  ReverifyFlags reverify;
  CLI::App* reverify_cmd = app.add_subcommand(
      "reverify",
      "re-measure the log's best configs (each workload's winner and runners-up) on workers of "
      "the device's newest fingerprint, after a driver or library upgrade; each workload's "
      "winner is confirmed or changed (needs a submit token)");
  reverify_cmd->add_option("--workload", *reverify.request.mutable_workload(),
                           "one workload, e.g. gemm:M=512,N=512,K=512");
  reverify_cmd->add_option("--workloads-file", reverify.workloads_file,
                           "the workloads of a file (as submit's)");
  reverify_cmd->add_option(
      "--model", reverify.model,
      StrCat("the layers of a built-in model: ", Join(BuiltinModelNames(), ", ")));
  bool reverify_all = false;
  reverify_cmd->add_flag("--all", reverify_all,
                         "every workload the log has successful records of on the target");
  reverify_cmd
      ->add_option("--target", *reverify.request.mutable_target(),
                   "whose records, e.g. 'llvm -mcpu=native -threads=1'")
      ->required();
  int reverify_trials = 0;
  reverify_cmd->add_option("--trials", reverify_trials,
                           "re-measurements per workload, best first (default 3: the winner and "
                           "two runners-up; at most 64)");
  reverify_cmd->add_option("--name", *reverify.request.mutable_name(),
                           "a label for people (default: reverify)");
  reverify_cmd->add_flag("--wait", reverify.wait,
                         "follow the job until it ends and print each workload's verdict");
  reverify_cmd->add_option("--wait-timeout-s", reverify.wait_timeout_s,
                           "with --wait: give up after this many seconds (0: never)");

  v1::ListQuarantineRequest quarantine_request;
  uint64_t lift_id = 0;
  CLI::App* quarantine_cmd = app.add_subcommand(
      "quarantine",
      "code quarantined for crashing or computing wrong on two workers of a device key and "
      "fingerprint: list the entries, or lift one (admin)");
  quarantine_cmd->add_option("--device-key", *quarantine_request.mutable_device_key(),
                             "only this device key");
  bool quarantine_all = false;
  quarantine_cmd->add_flag("--all", quarantine_all, "lifted entries too");
  CLI::App* lift_cmd = quarantine_cmd->add_subcommand(
      "lift", "lift an entry: workers of its device key and fingerprint measure the code again");
  lift_cmd->add_option("ID", lift_id, "the entry's id (>= 1)")
      ->required()
      ->check(CLI::PositiveNumber);

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
  // The target's syntax is checked here, before a round trip; which libraries exist is the
  // daemon's catalog's to say.
  for (const auto& [target, field] :
       {std::pair{submit_cmd->parsed() ? &submit.spec.target() : nullptr, "spec.target"},
        std::pair{best_cmd->parsed() ? &best.target() : nullptr, "target"},
        std::pair{reverify_cmd->parsed() ? &reverify.request.target() : nullptr, "target"}}) {
    if (target != nullptr && !target->empty()) {
      if (absl::Status s = Target::Parse(*target).status(); !s.ok()) {
        return Report(absl::InvalidArgumentError(StrCat(field, ": ", s.message())), g);
      }
    }
  }

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

  if (onnx_cmd->parsed()) {
    return PrintOnnx(g, onnx_path, onnx_dims);
  }

  absl::StatusOr<std::string> token = net::ResolveToken(g.token_file);
  if (!token.ok()) {
    fmt::print(stderr, "tune-client: {}\n", token.status().message());
    return kExitUsage;
  }
  absl::StatusOr<std::unique_ptr<TunerClient>> connected =
      TunerClient::Create(g.daemon, std::chrono::milliseconds(g.rpc_timeout_ms), {g.tls, *token});
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
  if (reverify_cmd->parsed()) {
    reverify.request.set_trials(reverify_trials);
    reverify.request.set_all(reverify_all);
    return Reverify(client, g, reverify);
  }
  if (quarantine_cmd->parsed()) {
    quarantine_request.set_include_lifted(quarantine_all);
    return Quarantine(client, g, quarantine_request, lift_cmd->parsed() ? lift_id : 0);
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
