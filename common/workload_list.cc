#include "common/workload_list.h"

#include <charconv>
#include <cmath>
#include <map>

#include "common/files.h"
#include "common/shape_range.h"
#include "common/strings.h"

namespace tune {
namespace {

// The largest weight of a line, and of a workload listed on several lines (their sum).
constexpr double kMaxWeight = 1e9;

constexpr std::string_view kForm =
    "each line is a workload, optionally followed by a weight (how often the layer runs), e.g. "
    "\"gemm:M=128,N=768,K=768 4\"";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::optional<double> ParseWeight(std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
      value <= 0 || value > kMaxWeight) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

absl::StatusOr<std::vector<WeightedWorkload>> ParseWorkloadList(std::string_view text,
                                                                std::string_view source) {
  std::vector<WeightedWorkload> list;
  std::map<std::string, size_t> index;  // canonical text -> entry
  int line_number = 0;
  for (std::string_view raw : Split(text, '\n')) {
    ++line_number;
    std::string_view line = raw;
    if (auto hash = line.find('#'); hash != std::string_view::npos) {
      line = line.substr(0, hash);
    }
    line = Trim(line);
    if (line.empty()) {
      continue;
    }
    auto where = [&] { return StrCat(source, ":", line_number, ": "); };
    std::string_view workload_text = line;
    double weight = 1;
    if (size_t gap = line.find_first_of(" \t"); gap != std::string_view::npos) {
      workload_text = line.substr(0, gap);
      std::string_view rest = Trim(line.substr(gap));
      if (rest.find_first_of(" \t") != std::string_view::npos) {
        return absl::InvalidArgumentError(
            StrCat(where(), "more than a workload and a weight on the line; ", kForm));
      }
      std::optional<double> parsed = ParseWeight(rest);
      if (!parsed) {
        return absl::InvalidArgumentError(
            StrCat(where(), "weight \"", rest,
                   "\" is not a positive number (how many times the layer runs per inference, "
                   "e.g. 3 or 0.5, at most 1e9)"));
      }
      weight = *parsed;
    }
    if (ShapeRange::IsRange(workload_text)) {
      return absl::InvalidArgumentError(StrCat(
          where(), "'", workload_text,
          "' is a shape range: a workloads list holds exact shapes only; tune a range on its "
          "own (tune-client submit --workload '",
          workload_text, "'; tune-compile --workload, which may be given more than once)"));
    }
    absl::StatusOr<Workload> workload = Workload::Parse(workload_text);
    if (!workload.ok()) {
      return absl::InvalidArgumentError(StrCat(where(), workload.status().message(), "; ", kForm));
    }
    std::string key = workload->ToString();
    if (auto it = index.find(key); it != index.end()) {
      double& sum = list[it->second].weight;
      if (sum + weight > kMaxWeight) {
        return absl::InvalidArgumentError(
            StrCat(where(), key, " is listed before: its weights sum to more than 1e9"));
      }
      sum += weight;
      continue;
    }
    if (static_cast<int>(list.size()) == kMaxModelWorkloads) {
      return absl::InvalidArgumentError(StrCat(where(), "more than ", kMaxModelWorkloads,
                                               " distinct workloads; split the model"));
    }
    index.emplace(std::move(key), list.size());
    list.push_back(WeightedWorkload{*std::move(workload), weight});
  }
  if (list.empty()) {
    return absl::InvalidArgumentError(StrCat(source, ": no workload in it; ", kForm));
  }
  return list;
}

absl::StatusOr<std::vector<WeightedWorkload>> ReadWorkloadList(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) {
    return text.status();
  }
  return ParseWorkloadList(*text, path);
}

std::string FormatWorkloadList(const std::vector<WeightedWorkload>& list) {
  std::string out;
  for (const WeightedWorkload& entry : list) {
    StrAppend(&out, entry.workload.ToString());
    if (entry.weight != 1) {
      // The shortest text that parses back to the same double.
      StrAppend(&out, " ", fmt::format("{}", entry.weight));
    }
    StrAppend(&out, "\n");
  }
  return out;
}

absl::StatusOr<std::vector<WeightedWorkload>> BuiltinModel(std::string_view name) {
  std::string_view text = BuiltinModelText(name);
  if (text.empty()) {
    return absl::InvalidArgumentError(
        StrCat("unknown model \"", name, "\"; built-in models: ", Join(BuiltinModelNames(), ", ")));
  }
  return ParseWorkloadList(text, name);
}

}  // namespace tune
