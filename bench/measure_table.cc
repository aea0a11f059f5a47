#include "bench/measure_table.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <sstream>

#include "common/strings.h"
#include "rpc_server/artifact_cache.h"
#include "rpc_server/supervisor.h"

namespace tune::bench {

Table::Table(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::istringstream stream(line);
    std::string field;
    while (std::getline(stream, field, '\t')) {
      fields.push_back(field);
    }
    if (fields.size() != 3 && fields.size() != 4) {
      continue;
    }
    const std::string& secs = fields.back();
    std::optional<double> time =
        secs == "fail" ? std::nullopt : std::optional<double>(std::stod(secs));
    if (fields.size() == 3) {
      times_[{fields[0], "", fields[1]}] = time;
    } else {
      times_[{fields[0], fields[1], fields[2]}] = time;
    }
  }
  out_.open(path_, std::ios::app);
}

const std::optional<double>* Table::Find(const std::string& workload, const std::string& tpl,
                                         const std::string& config) const {
  auto it = times_.find({workload, tpl, config});
  return it == times_.end() ? nullptr : &it->second;
}

void Table::Add(const std::string& workload, const std::string& tpl, const std::string& config,
                std::optional<double> secs) {
  times_[{workload, tpl, config}] = secs;
  out_ << workload << '\t';
  if (!tpl.empty()) {
    out_ << tpl << '\t';
  }
  out_ << config << '\t' << (secs ? StrCat(*secs) : std::string("fail")) << '\n';
  out_.flush();
}

std::vector<Table::Entry> Table::Of(const std::string& workload) const {
  std::vector<Entry> out;
  for (auto it = times_.lower_bound({workload, "", ""});
       it != times_.end() && std::get<0>(it->first) == workload; ++it) {
    out.push_back({std::get<1>(it->first), std::get<2>(it->first), it->second});
  }
  return out;
}

double Table::Best(const std::string& workload) const {
  double best = std::numeric_limits<double>::infinity();
  for (const Entry& e : Of(workload)) {
    best = std::min(best, e.secs.value_or(best));
  }
  return best;
}

std::optional<double> MeasuredTimes::Measure(const Workload& w, const KernelTemplate& tpl,
                                             const Config& config) {
  const std::string workload = w.ToString();
  const std::string tpl_key = keep_template_ ? std::string(tpl.name) : std::string();
  const std::string key = ConfigToString(config);
  if (const std::optional<double>* known = table_.Find(workload, tpl_key, key)) {
    return *known;
  }
  absl::StatusOr<double> secs = timer_.MedianSecs(w, tpl, config);
  std::optional<double> result = secs.ok() ? std::optional<double>(*secs) : std::nullopt;
  table_.Add(workload, tpl_key, key, result);
  ++measured_;
  return result;
}

int MeasuredTimes::Remeasure(const Workload& w, const KernelTemplate& tpl, size_t top, int passes) {
  const std::string workload = w.ToString();
  const std::string tpl_key = keep_template_ ? std::string(tpl.name) : std::string();
  std::vector<std::pair<double, Config>> fastest;
  for (const Table::Entry& entry : table_.Of(workload)) {
    absl::StatusOr<Config> config = ParseConfig(entry.config);
    if (entry.tpl == tpl_key && entry.secs.has_value() && config.ok()) {
      fastest.emplace_back(*entry.secs, *std::move(config));
    }
  }
  std::sort(fastest.begin(), fastest.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  fastest.resize(std::min(fastest.size(), top));
  std::vector<std::vector<double>> samples(fastest.size());
  for (int pass = 0; pass < passes; ++pass) {
    for (size_t i = 0; i < fastest.size(); ++i) {
      absl::StatusOr<double> secs = timer_.MedianSecs(w, tpl, fastest[i].second);
      if (secs.ok()) {
        samples[i].push_back(*secs);
      }
    }
  }
  for (size_t i = 0; i < fastest.size(); ++i) {
    if (!samples[i].empty()) {
      table_.Add(workload, tpl_key, ConfigToString(fastest[i].second), MedianOf(samples[i]));
    }
  }
  return static_cast<int>(fastest.size());
}

absl::StatusOr<std::unique_ptr<KernelTimer>> OpenKernelTimer(const Target& target,
                                                             const std::string& worker_binary) {
  rpc::SupervisorOptions sup_options;
  sup_options.child_executable = worker_binary;
  sup_options.child_env = {StrCat("OMP_NUM_THREADS=", target.threads)};
  absl::StatusOr<std::unique_ptr<rpc::MeasureSupervisor>> sup =
      rpc::MeasureSupervisor::Create(sup_options);
  absl::StatusOr<std::unique_ptr<rpc::ArtifactCache>> cache =
      rpc::ArtifactCache::Open(rpc::DefaultArtifactCacheDir());
  if (!sup.ok() || !cache.ok()) {
    return sup.ok() ? cache.status() : sup.status();
  }
  return std::make_unique<KernelTimer>(target,
                                       TimingOptions{.number = 1, .repeat = 5, .min_repeat_ms = 20},
                                       std::move(*sup), std::move(*cache));
}

void CreateParentDirectories(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) {
      std::filesystem::create_directories(parent);
    }
  }
}

double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace tune::bench
