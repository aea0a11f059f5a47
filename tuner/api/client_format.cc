#include "tuner/api/client_format.h"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "common/host_cpu.h"
#include "common/measurement.h"
#include "common/stats.h"
#include "common/strings.h"
#include "common/workload.h"
#include "proto/convert.h"

namespace tune::tuner {
namespace {

// The element types of a workload ("f32" for a text that does not parse) and the unit of its
// rate: billions of integer operations for i8 and u8i8, of floating-point ones otherwise (2 per
// multiply-add either way).
std::string_view DtypeOf(const absl::StatusOr<Workload>& w) {
  return DtypeName(w.ok() ? w->dtype() : Dtype::kF32);
}

std::string_view RateUnitOf(const absl::StatusOr<Workload>& w) {
  return w.ok() && w->CountsIntegerOps() ? "GOPS" : "GFLOPS";
}

std::string TimeText(int64_t ms) {
  if (ms <= 0) {
    return "-";
  }
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string WorkerStateText(v1::WorkerState state) {
  switch (state) {
    case v1::WORKER_STATE_IDLE:
      return "IDLE";
    case v1::WORKER_STATE_BUSY:
      return "BUSY";
    case v1::WORKER_STATE_LOST:
      return "LOST";
    default:
      return "UNKNOWN";
  }
}

double Median(const v1::Measurement& m) {
  return tune::Median(std::vector<double>(m.round_secs().begin(), m.round_secs().end()));
}

std::vector<double> HostRounds(const v1::Measurement& m) {
  return std::vector<double>(m.host_round_secs().begin(), m.host_round_secs().end());
}

// "graph", "events", or "" (CPU records).
std::string_view GpuClockText(const v1::Measurement& m) {
  return GpuClockName(GpuClockFromProto(m.gpu_clock()));
}

// For a graph-timed record whose call-by-call reading disagrees beyond both readings' noise:
// "    call by call (events): 1.6e-05 s, 1.62x the device time\n"; else "".
std::string HostReadingText(const v1::Measurement& m) {
  const std::vector<double> device(m.round_secs().begin(), m.round_secs().end());
  const std::vector<double> host = HostRounds(m);
  if (m.gpu_clock() != v1::GPU_CLOCK_GRAPH || !MediansDiffer(device, host)) {
    return "";
  }
  const double host_secs = tune::Median(host);
  return fmt::format(
      "    call by call (events): {:.4g} s, {:.2f}x the device time (graph replay)\n", host_secs,
      host_secs / tune::Median(device));
}

std::string ErrorKindText(v1::ErrorKind kind) {
  std::string name = v1::ErrorKind_Name(kind);
  constexpr std::string_view kPrefix = "ERROR_KIND_";
  return name.starts_with(kPrefix) ? name.substr(kPrefix.size()) : name;
}

}  // namespace

std::string JobStateText(v1::JobState state) {
  switch (state) {
    case v1::JOB_STATE_QUEUED:
      return "QUEUED";
    case v1::JOB_STATE_RUNNING:
      return "RUNNING";
    case v1::JOB_STATE_SUCCEEDED:
      return "SUCCEEDED";
    case v1::JOB_STATE_FAILED:
      return "FAILED";
    case v1::JOB_STATE_CANCELLED:
      return "CANCELLED";
    default:
      return "UNKNOWN";
  }
}

bool IsFinalState(v1::JobState state) {
  return state == v1::JOB_STATE_SUCCEEDED || state == v1::JOB_STATE_FAILED ||
         state == v1::JOB_STATE_CANCELLED;
}

namespace {

// A model job's tasks and totals (seconds per inference; null until known).
void AddModelJson(nlohmann::json& j,
                  const google::protobuf::RepeatedPtrField<v1::TaskProgress>& tasks,
                  double estimated_total_secs, double default_total_secs) {
  nlohmann::json list = nlohmann::json::array();
  for (const v1::TaskProgress& t : tasks) {
    nlohmann::json task = {
        {"job_id", t.job_id()},
        {"workload", t.workload()},
        {"weight", t.weight()},
        {"state", JobStateText(t.state())},
        {"trials_allocated", t.trials_allocated()},
        {"trials_done", t.trials_done()},
        {"best", nullptr},
        {"default_secs", t.default_secs() > 0 ? nlohmann::json(t.default_secs()) : nullptr},
    };
    if (t.has_best()) {
      task["best"] = {{"gflops", t.best().gflops()},
                      {"secs", t.best().secs()},
                      {"template", t.best().template_name()},
                      {"config", t.best().config()}};
    }
    list.push_back(std::move(task));
  }
  j["tasks"] = std::move(list);
  j["estimated_total_secs"] =
      estimated_total_secs > 0 ? nlohmann::json(estimated_total_secs) : nullptr;
  j["default_total_secs"] = default_total_secs > 0 ? nlohmann::json(default_total_secs) : nullptr;
}

std::string Millis(double secs) { return secs > 0 ? fmt::format("{:.4g}", secs * 1e3) : "-"; }

}  // namespace

std::string ModelTotalText(double estimated_total_secs, double default_total_secs) {
  if (estimated_total_secs <= 0) {
    return "not every workload has a measured config yet";
  }
  std::string out = fmt::format("{:.4g} ms per inference", estimated_total_secs * 1e3);
  if (default_total_secs > 0) {
    StrAppend(&out,
              fmt::format(" (untuned defaults: {:.4g} ms, {:.2f}x faster)",
                          default_total_secs * 1e3, default_total_secs / estimated_total_secs));
  }
  return out;
}

std::string TaskLine(const v1::TaskProgress& t) {
  return fmt::format(
      "{:>5}  {:<9}  {:>9}  {:>6}  {:>9}  {:>10}  {:>10}  {}", t.job_id(), JobStateText(t.state()),
      StrCat(t.trials_done(), "/", t.trials_allocated()), fmt::format("{:g}", t.weight()),
      t.has_best() ? fmt::format("{:.2f}", t.best().gflops()) : "-",
      t.has_best() ? Millis(t.best().secs()) : "-", Millis(t.default_secs()), t.workload());
}

std::string TasksTable(const google::protobuf::RepeatedPtrField<v1::TaskProgress>& tasks) {
  std::string out =
      fmt::format("{:>5}  {:<9}  {:>9}  {:>6}  {:>9}  {:>10}  {:>10}  {}\n", "JOB", "STATE",
                  "TRIALS", "WEIGHT", "GFLOPS", "BEST ms", "DEFAULT ms", "WORKLOAD");
  for (const v1::TaskProgress& t : tasks) {
    StrAppend(&out, TaskLine(t), "\n");
  }
  return out;
}

nlohmann::json JobJson(const v1::Job& job) {
  const v1::JobSpec& spec = job.spec();
  nlohmann::json j = {
      {"job_id", job.job_id()},
      {"state", JobStateText(job.state())},
      {"workload", spec.workload()},
      {"target", spec.target()},
      {"device_key", job.device_key()},
      {"trials", spec.trials()},
      {"strategy", spec.strategy()},
      {"priority", spec.priority()},
      {"seed", spec.seed()},
      {"templates", std::vector<std::string>(spec.templates().begin(), spec.templates().end())},
      {"name", spec.name()},
      {"trials_done", job.trials_done()},
      {"trials_failed", job.trials_failed()},
      {"trials_in_flight", job.trials_in_flight()},
      {"created_at_ms", job.created_at_ms()},
      {"started_at_ms", job.started_at_ms()},
      {"finished_at_ms", job.finished_at_ms()},
      {"message", job.message()},
      {"best", nullptr},
  };
  if (!job.spec().workload().empty()) {
    const absl::StatusOr<Workload> workload = Workload::Parse(job.spec().workload());
    j["dtype"] = DtypeOf(workload);
    j["rate_unit"] = RateUnitOf(workload);
  }
  if (job.has_best()) {
    j["best"] = {{"gflops", job.best().gflops()},
                 {"secs", job.best().secs()},
                 {"template", job.best().template_name()},
                 {"config", job.best().config()},
                 {"record_uid", job.best().record_uid()}};
  }
  if (job.model_job_id() != 0) {
    j["model_job_id"] = job.model_job_id();
  }
  if (!spec.range().empty()) {
    j["range"] = spec.range();  // a range job: its tasks are the range's sizes
  }
  if (job.tasks_size() > 0) {
    AddModelJson(j, job.tasks(), job.estimated_total_secs(), job.default_total_secs());
  }
  return j;
}

nlohmann::json EventJson(const v1::JobEvent& event) {
  nlohmann::json j = {
      {"job_id", event.job_id()},
      {"state", JobStateText(event.state())},
      {"trials_done", event.trials_done()},
      {"trials_failed", event.trials_failed()},
      {"trials_total", event.trials_total()},
      {"best_gflops", event.best_gflops()},
      {"best_secs", event.best_secs()},
      {"best_template", event.best_template()},
      {"best_config", event.best_config()},
      {"eta_seconds", event.eta_seconds()},
      {"last_error", event.last_error()},
      {"event_time_ms", event.event_time_ms()},
  };
  if (event.tasks_size() > 0) {
    AddModelJson(j, event.tasks(), event.estimated_total_secs(), event.default_total_secs());
  }
  return j;
}

namespace {

// The dtypes a worker measures (f32 alone for a worker from before dtypes).
std::vector<std::string> WorkerDtypes(const v1::Capabilities& caps) {
  if (caps.dtypes().empty()) {
    return {std::string(DtypeName(Dtype::kF32))};
  }
  return {caps.dtypes().begin(), caps.dtypes().end()};
}

// The matrix features among a worker's CPU features ("amx-bf16", "avx512vnni", ...).
std::vector<std::string> WorkerMatrixFeatures(const v1::Capabilities& caps) {
  std::vector<std::string> out;
  for (const std::string& feature : caps.features()) {
    if (std::find(kMatrixFeatures.begin(), kMatrixFeatures.end(), feature) !=
        kMatrixFeatures.end()) {
      out.push_back(feature);
    }
  }
  return out;
}

}  // namespace

nlohmann::json WorkerJson(const v1::WorkerInfo& worker) {
  const v1::Capabilities& caps = worker.capabilities();
  std::vector<std::string> preloaded;
  for (const v1::PreloadedLibrary& lib : caps.preloaded_libraries()) {
    preloaded.push_back(lib.path());
  }
  return {
      {"dtypes", WorkerDtypes(caps)},
      {"matrix_features", WorkerMatrixFeatures(caps)},
      {"worker_id", worker.worker_id()},
      {"name", worker.name()},
      {"device_key", worker.device_key()},
      {"state", WorkerStateText(worker.state())},
      {"in_flight", worker.in_flight()},
      {"trials_done", worker.trials_done()},
      {"capacity", caps.capacity()},
      {"threads", caps.threads()},
      {"cores", caps.cores()},
      {"hostname", caps.hostname()},
      {"pid", caps.pid()},
      {"tune_version", caps.tune_version()},
      {"preloaded_libraries", preloaded},
      {"last_heartbeat_ms", worker.last_heartbeat_ms()},
      {"connected_at_ms", worker.connected_at_ms()},
      {"peer", worker.peer()},
  };
}

nlohmann::json RelativeCiOf(const v1::Measurement& m) {
  const double ci =
      MedianRelativeCi(std::vector<double>(m.round_secs().begin(), m.round_secs().end()));
  return std::isfinite(ci) ? nlohmann::json(ci) : nlohmann::json(nullptr);
}

nlohmann::json RecordJson(const v1::Record& record) {
  const v1::Measurement& m = record.measurement();
  double secs = Median(m);
  double gflops = 0;
  const absl::StatusOr<Workload> workload = Workload::Parse(record.workload());
  if (workload.ok() && secs > 0) {
    gflops = workload->Flops() / secs / 1e9;
  }
  nlohmann::json config = nlohmann::json::parse(record.config(), nullptr, false);
  return {
      {"uid", record.uid()},
      {"workload", record.workload()},
      {"target", record.target()},
      {"device_key", record.device_key()},
      {"template", record.template_name()},
      {"template_version", record.template_version()},
      {"config", config.is_discarded() ? nlohmann::json(record.config()) : config},
      {"error", ErrorKindText(m.error_kind())},
      {"message", m.message()},
      {"median_secs", secs},
      // The relative half-width of the median's 95% confidence interval over the record's
      // rounds (what the finalists' rule compares); null with fewer than two rounds.
      {"relative_ci", RelativeCiOf(m)},
      {"gflops", gflops},
      {"dtype", DtypeOf(workload)},
      {"rate_unit", RateUnitOf(workload)},
      {"round_secs", std::vector<double>(m.round_secs().begin(), m.round_secs().end())},
      {"number", m.number()},
      {"gpu_clock", GpuClockText(m)},
      {"host_round_secs", HostRounds(m)},
      {"host_median_secs", tune::Median(HostRounds(m))},
      {"worker", record.worker()},
      {"tune_version", record.tune_version()},
      {"llvm_version", record.llvm_version()},
      {"job_id", record.job_id()},
      {"created_at_ms", record.created_at_ms()},
      {"artifact_hash", record.artifact_hash()},
  };
}

nlohmann::json BestJson(const v1::QueryBestResponse& best, const std::string& requested_target) {
  const bool fallback = best.match() == v1::BEST_MATCH_SAME_DEVICE;
  nlohmann::json out = nlohmann::json::array();
  for (const v1::Record& r : best.records()) {
    nlohmann::json j = RecordJson(r);
    if (const int i = static_cast<int>(out.size()); i < best.range_sizes_size()) {
      j["range_size"] = best.range_sizes(i);  // a range's size this record is the best of
    }
    j["fallback"] = fallback;
    j["unverified"] = best.unverified();
    if (fallback) {
      j["requested_target"] = requested_target;
    }
    out.push_back(std::move(j));
  }
  return out;
}

std::string JobText(const v1::Job& job) {
  const v1::JobSpec& spec = job.spec();
  std::string out = fmt::format("job {}{}: {}\n", job.job_id(),
                                spec.name().empty() ? "" : StrCat(" (", spec.name(), ")"),
                                JobStateText(job.state()));
  if (!spec.range().empty()) {
    StrAppend(&out, "  range:      ", spec.range(), " at ", spec.tasks_size(),
              " sizes, each tuned by a job of its own (midpoints only where the best config "
              "changes)\n");
  } else if (spec.tasks_size() > 0) {
    StrAppend(&out, "  model:      ", spec.tasks_size(),
              " workloads, each tuned by a job of its own\n");
  } else {
    StrAppend(&out, "  workload:   ", spec.workload(), "\n");
  }
  if (job.model_job_id() != 0) {
    StrAppend(&out, "  model job:  ", job.model_job_id(), "\n");
  }
  StrAppend(&out, "  target:     ", spec.target(), "  [", job.device_key(), "]\n");
  StrAppend(&out, "  search:     ", spec.strategy(), ", seed ", spec.seed(), ", priority ",
            spec.priority());
  if (spec.templates_size() > 0) {
    StrAppend(
        &out, ", templates ",
        Join(std::vector<std::string>(spec.templates().begin(), spec.templates().end()), ","));
  }
  StrAppend(&out, "\n");
  StrAppend(&out, "  trials:     ", job.trials_done(), "/", spec.trials(), " done, ",
            job.trials_failed(), " failed, ", job.trials_in_flight(), " in flight\n");
  if (spec.tasks_size() > 0) {
    StrAppend(&out, "  total:      ",
              ModelTotalText(job.estimated_total_secs(), job.default_total_secs()), "\n");
  } else if (job.has_best()) {
    StrAppend(&out, fmt::format("  best:       {:.3f} {} ({:.4g} s) {} {}\n", job.best().gflops(),
                                RateUnitOf(Workload::Parse(spec.workload())), job.best().secs(),
                                job.best().template_name(), job.best().config()));
  } else {
    StrAppend(&out, "  best:       none yet\n");
  }
  StrAppend(&out, "  created:    ", TimeText(job.created_at_ms()),
            "  started: ", TimeText(job.started_at_ms()),
            "  finished: ", TimeText(job.finished_at_ms()), "\n");
  if (!job.message().empty()) {
    StrAppend(&out, "  message:    ", job.message(), "\n");
  }
  if (job.tasks_size() > 0) {
    StrAppend(&out, "\n", TasksTable(job.tasks()));
  }
  return out;
}

namespace {

std::string WorkloadColumn(const v1::Job& job) {
  if (job.spec().tasks_size() > 0) {
    return StrCat("model of ", job.spec().tasks_size(), " workloads",
                  job.spec().name().empty() ? "" : StrCat(" (", job.spec().name(), ")"));
  }
  if (job.model_job_id() != 0) {
    return StrCat(job.spec().workload(), " (of model job ", job.model_job_id(), ")");
  }
  return job.spec().workload();
}

}  // namespace

std::string JobsTable(const std::vector<v1::Job>& jobs) {
  std::string out = fmt::format("{:>5}  {:<9}  {:>4}  {:>11}  {:>6}  {:>9}  {}\n", "ID", "STATE",
                                "PRI", "DONE/TOTAL", "FAILED", "GFLOPS", "WORKLOAD / TARGET");
  for (const v1::Job& job : jobs) {
    out += fmt::format("{:>5}  {:<9}  {:>4}  {:>11}  {:>6}  {:>9}  {} / {}\n", job.job_id(),
                       JobStateText(job.state()), job.spec().priority(),
                       StrCat(job.trials_done(), "/", job.spec().trials()), job.trials_failed(),
                       job.has_best() ? fmt::format("{:.2f}", job.best().gflops()) : "-",
                       WorkloadColumn(job), job.spec().target());
  }
  return out;
}

std::string WorkersTable(const std::vector<v1::WorkerInfo>& workers) {
  constexpr std::string_view kRow =
      "{:<24}  {:<5}  {:<5}  {:<28}  {:>9}  {:>6}  {:<24}  {:<24}  {}\n";
  std::string out = fmt::format(kRow, "NAME", "ID", "STATE", "DEVICE KEY", "IN FLIGHT", "DONE",
                                "DTYPES", "MATRIX FEATURES", "PEER");
  for (const v1::WorkerInfo& w : workers) {
    const std::vector<std::string> dtypes = WorkerDtypes(w.capabilities());
    const std::vector<std::string> matrix = WorkerMatrixFeatures(w.capabilities());
    out += fmt::format(kRow, w.name(), w.worker_id(), WorkerStateText(w.state()), w.device_key(),
                       StrCat(w.in_flight(), "/", w.capabilities().capacity()), w.trials_done(),
                       dtypes.size() == AllDtypes().size() ? "all" : Join(dtypes, ","),
                       matrix.empty() ? "-" : Join(matrix, ","), w.peer());
  }
  return out;
}

std::string QuarantineText(const std::vector<v1::QuarantineEntry>& entries) {
  if (entries.empty()) {
    return "no quarantined code\n";
  }
  std::string out;
  for (const v1::QuarantineEntry& e : entries) {
    StrAppend(&out, "entry ", e.id(), ": artifact ", e.artifact_hash(), "\n");
    StrAppend(&out, "  device:   ", e.device_key(), " (fingerprint: ", e.fingerprint(), ")\n");
    StrAppend(&out, "  code:     ", e.template_name(), " v", e.template_version(), " ", e.config(),
              " of ", e.workload(), "\n");
    StrAppend(&out, "  why:      ", ErrorKindText(e.error_kind()), " on ",
              Join(std::vector<std::string>(e.workers().begin(), e.workers().end()), ", "), " (",
              e.record_uids_size(), " records): ", e.message(), "\n");
    StrAppend(&out, "  since:    ", TimeText(e.created_at_ms()));
    if (e.lifted_at_ms() != 0) {
      StrAppend(&out, "  lifted: ", TimeText(e.lifted_at_ms()), " by ", e.lifted_by());
    }
    out += "\n";
  }
  return out;
}

nlohmann::json QuarantineJson(const v1::QuarantineEntry& e) {
  return {{"id", e.id()},
          {"artifact_hash", e.artifact_hash()},
          {"device_key", e.device_key()},
          {"fingerprint", e.fingerprint()},
          {"workload", e.workload()},
          {"template", e.template_name()},
          {"template_version", e.template_version()},
          {"config", e.config()},
          {"error", ErrorKindText(e.error_kind())},
          {"message", e.message()},
          {"workers", std::vector<std::string>(e.workers().begin(), e.workers().end())},
          {"record_uids", std::vector<std::string>(e.record_uids().begin(), e.record_uids().end())},
          {"created_at_ms", e.created_at_ms()},
          {"lifted_at_ms", e.lifted_at_ms()},
          {"lifted_by", e.lifted_by()}};
}

std::string TokensTable(const std::vector<v1::TokenInfo>& tokens) {
  std::string out = fmt::format("{:<16}  {:<24}  {:<6}  {:<20}  {}\n", "ID", "NAME", "ROLE",
                                "CREATED", "REVOKED");
  for (const v1::TokenInfo& t : tokens) {
    out += fmt::format("{:<16}  {:<24}  {:<6}  {:<20}  {}\n", t.id(), t.name(), t.role(),
                       TimeText(t.created_at_ms()),
                       t.revoked_at_ms() == 0 ? "-" : TimeText(t.revoked_at_ms()));
  }
  return out;
}

nlohmann::json TokenJson(const v1::TokenInfo& token) {
  return {{"id", token.id()},
          {"name", token.name()},
          {"role", token.role()},
          {"created_at_ms", token.created_at_ms()},
          {"revoked_at_ms", token.revoked_at_ms()}};
}

std::string BestText(const std::vector<v1::Record>& records) {
  std::string out;
  for (const v1::Record& r : records) {
    nlohmann::json j = RecordJson(r);
    const std::string ci = j["relative_ci"].is_number()
                               ? fmt::format(" ±{:.1f}%", j["relative_ci"].get<double>() * 100)
                               : "";
    out += fmt::format("{:.3f} {}  {:.4g} s{}  {} {}  (record {}, worker {}, {}, {})\n",
                       j["gflops"].get<double>(), j["rate_unit"].get<std::string>(),
                       j["median_secs"].get<double>(), ci, r.template_name(), r.config(), r.uid(),
                       r.worker(), r.device_key(), TimeText(r.created_at_ms()));
    if (r.measurement().gpu_clock() == v1::GPU_CLOCK_EVENTS) {
      out += "    timed call by call (events), not by graph replay\n";
    }
    out += HostReadingText(r.measurement());
    if (!r.measurement().library_info().empty()) {
      // How the library ran: held back by its environment (e.g. OPENBLAS_CORETYPE) shows here.
      out += fmt::format("    library: {}\n", r.measurement().library_info());
    }
  }
  return out;
}

std::string RangeBestText(const v1::QueryBestResponse& best) {
  std::string out = StrCat(best.note(), "\n");
  for (int i = 0; i < best.records_size() && i < best.range_sizes_size(); ++i) {
    const std::string& workload = best.records(i).workload();
    StrAppend(&out, "  ", workload, ": ", BestText({best.records(i)}));
  }
  return out;
}

std::string Duration(double seconds) {
  if (seconds < 0 || !std::isfinite(seconds)) {
    return "?";
  }
  long s = std::lround(seconds);
  if (s < 60) {
    return StrCat(s, "s");
  }
  if (s < 3600) {
    return fmt::format("{}m{:02}s", s / 60, s % 60);
  }
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::string ProgressText(const v1::JobEvent& event) {
  std::string out = StrCat(event.trials_done(), "/", event.trials_total(), " trials");
  if (event.trials_failed() > 0) {
    StrAppend(&out, " (", event.trials_failed(), " failed)");
  }
  if (event.tasks_size() > 0) {
    StrAppend(&out, ", ",
              event.estimated_total_secs() > 0
                  ? ModelTotalText(event.estimated_total_secs(), event.default_total_secs())
                  : "total not known yet");
  } else if (event.best_gflops() > 0) {
    StrAppend(&out, fmt::format(", best {:.2f} GFLOPS", event.best_gflops()));
  }
  if (!IsFinalState(event.state())) {
    StrAppend(&out, ", ETA ", event.eta_seconds() < 0 ? "?" : Duration(event.eta_seconds()));
  }
  if (event.state() != v1::JOB_STATE_RUNNING) {
    StrAppend(&out, " [", JobStateText(event.state()), "]");
  }
  return out;
}

std::string ProgressBar(const v1::JobEvent& event, int width) {
  const int bar = std::clamp(width - 60, 10, 40);
  const int total = std::max(1, event.trials_total());
  const int filled = std::clamp(event.trials_done() * bar / total, 0, bar);
  return StrCat("[", std::string(filled, '#'), std::string(bar - filled, '.'), "] ",
                ProgressText(event));
}

}  // namespace tune::tuner
