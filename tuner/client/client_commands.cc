// tune-client's commands (client_commands.h).
#include "tuner/client/client_commands.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "common/files.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/workload_list.h"
#include "db/record_json.h"
#include "model_import/onnx_model.h"
#include "tuner/api/client_format.h"
#include "tuner/api/proto_convert.h"
#include "tuner/client/client_follow.h"

namespace tune::tuner {

using std::chrono::milliseconds;

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

namespace {

absl::StatusOr<OnnxWorkloads> ReadOnnx(const std::string& path,
                                       const std::vector<std::string>& dims) {
  ASSIGN_OR_RETURN(OnnxImportOptions options, OnnxOptionsFromDims(dims));
  return ReadOnnxModel(path, options);
}

// A model job's tasks from --workloads-file, --model or --onnx, read here so that a bad line is
// reported by its number (an ONNX model's problem by its node) before anything is submitted.
absl::Status AddModelTasks(SubmitFlags& f) {
  std::vector<WeightedWorkload> list;
  std::string name;
  if (!f.onnx.empty()) {
    ASSIGN_OR_RETURN(OnnxWorkloads model, ReadOnnx(f.onnx, f.dims));
    for (const OnnxSkippedNode& s : model.skipped) {
      fmt::print(stderr, "tune-client: {}: skipped {}\n", f.onnx, Describe(s));
    }
    list = std::move(model.workloads);
    name = f.onnx;
  } else if (!f.workloads_file.empty()) {
    ASSIGN_OR_RETURN(list, ReadWorkloadList(f.workloads_file));
    name = f.workloads_file;
  } else if (!f.model.empty()) {
    ASSIGN_OR_RETURN(list, BuiltinModel(f.model));
    name = f.model;
  } else {
    return absl::OkStatus();
  }
  for (const WeightedWorkload& w : list) {
    v1::WorkloadTask* task = f.spec.add_tasks();
    task->set_workload(w.workload.ToString());
    task->set_weight(w.weight);
  }
  if (f.spec.name().empty()) {
    f.spec.set_name(name);
  }
  return absl::OkStatus();
}

}  // namespace

int PrintOnnx(const Globals& g, const std::string& path, const std::vector<std::string>& dims) {
  absl::StatusOr<OnnxWorkloads> model = ReadOnnx(path, dims);
  if (!model.ok()) {
    fmt::print(stderr, "tune-client: {}\n", model.status().message());
    return kExitUsage;
  }
  if (!g.json) {
    fmt::print("{}", FormatOnnxWorkloads(*model, path));
    return kExitOk;
  }
  nlohmann::json out = {{"graph", model->graph_name}, {"opset", model->opset}};
  out["workloads"] = nlohmann::json::array();
  for (const WeightedWorkload& w : model->workloads) {
    out["workloads"].push_back({{"workload", w.workload.ToString()}, {"weight", w.weight}});
  }
  out["skipped"] = nlohmann::json::array();
  for (const OnnxSkippedNode& s : model->skipped) {
    out["skipped"].push_back({{"node", s.node}, {"op_type", s.op_type}, {"reason", s.reason}});
  }
  PrintJson(out);
  return kExitOk;
}

int Submit(TunerClient& client, const Globals& g, SubmitFlags& f) {
  if (f.spec.workload().empty() && f.workloads_file.empty() && f.model.empty() && f.onnx.empty()) {
    fmt::print(stderr,
               "tune-client: submit needs --workload, --workloads-file, --model or --onnx\n");
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
  return WaitForEnd(client, g, *job, f.wait_timeout_s);
}

absl::StatusOr<v1::Job> FollowToEnd(TunerClient& client, const Globals& g, uint64_t job_id,
                                    int wait_timeout_s) {
  milliseconds deadline = wait_timeout_s > 0 ? milliseconds(wait_timeout_s * 1000LL)
                                             : milliseconds(std::chrono::hours(24 * 30));
  {
    ProgressDisplay display(client, g.json);
    RETURN_IF_ERROR(
        Follow(client, job_id, deadline, [&](const v1::JobEvent& e) { display.Show(e); }).status());
  }
  return client.GetJob(job_id);
}

int WaitForEnd(TunerClient& client, const Globals& g, const v1::Job& job, int wait_timeout_s) {
  absl::StatusOr<v1::Job> done = FollowToEnd(client, g, job.job_id(), wait_timeout_s);
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
    if (best->match() == v1::BEST_MATCH_SAME_DEVICE || best->events_fallback() ||
        best->unverified()) {
      fmt::print(stderr, "tune-client: {}\n", best->note());
    }
    if (best->range_sizes_size() > 0) {
      fmt::print("{}", RangeBestText(*best));
    } else {
      fmt::print("{}", BestText({best->records().begin(), best->records().end()}));
    }
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

int Quarantine(TunerClient& client, const Globals& g, const v1::ListQuarantineRequest& request,
               uint64_t lift_id) {
  if (lift_id != 0) {
    absl::StatusOr<v1::QuarantineEntry> lifted = client.LiftQuarantine(lift_id);
    if (!lifted.ok()) {
      return Report(lifted.status(), g);
    }
    if (g.json) {
      PrintJson(QuarantineJson(*lifted));
    } else {
      fmt::print(
          "lifted quarantine entry {}: workers of {} with fingerprint '{}' measure "
          "artifact {} again\n",
          lifted->id(), lifted->device_key(), lifted->fingerprint(), lifted->artifact_hash());
    }
    return kExitOk;
  }
  absl::StatusOr<std::vector<v1::QuarantineEntry>> entries = client.ListQuarantine(request);
  if (!entries.ok()) {
    return Report(entries.status(), g);
  }
  if (g.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const v1::QuarantineEntry& e : *entries) {
      out.push_back(QuarantineJson(e));
    }
    PrintJson(out);
  } else {
    fmt::print("{}", QuarantineText(*entries));
  }
  return kExitOk;
}

}  // namespace tune::tuner
