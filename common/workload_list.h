// A whole model as a list of workloads, each with a weight: how many times one inference runs
// that layer. Model jobs (tune-client submit --workloads-file / --model) and tune-compile
// --workloads-file read this form:
//
//   # ResNet-50, stage 1
//   conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,stride=1,pad=1   3
//   conv2d:N=1,C=64,H=56,W=56,K=256,R=1,S=1,stride=1,pad=0  4
//   gemm:M=1,N=1000,K=2048
//
// One workload per line, optionally followed by whitespace and a weight (a positive number up
// to 1e9; default 1). `#` starts a comment; blank lines are skipped. A workload listed twice is
// one entry whose weight is the sum (up to 1e9 too). The built-in models (BuiltinModelNames) are
// such lists.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/workload.h"

namespace tune {

/// A model holds at most this many distinct workloads.
inline constexpr int kMaxModelWorkloads = 256;

struct WeightedWorkload {
  Workload workload;
  double weight = 1;
};

/// Parses the text form. `source` names the text in errors ("resnet50.txt"): a bad line is
/// InvalidArgument "SOURCE:LINE: ..." naming what was wrong and the accepted form. An empty
/// list is an error too. Entries keep the order of their first line.
absl::StatusOr<std::vector<WeightedWorkload>> ParseWorkloadList(std::string_view text,
                                                                std::string_view source);

/// Reads and parses a file; NotFound / InvalidArgument naming the path.
absl::StatusOr<std::vector<WeightedWorkload>> ReadWorkloadList(const std::string& path);

/// The text form of a list: one "workload weight" line per entry (weight omitted when 1).
std::string FormatWorkloadList(const std::vector<WeightedWorkload>& list);

/// Names of the built-in models: "bert", "mobilenetv2", "resnet50".
std::vector<std::string> BuiltinModelNames();

/// The layers of a built-in model at batch 1; InvalidArgument naming the known models for any
/// other name.
absl::StatusOr<std::vector<WeightedWorkload>> BuiltinModel(std::string_view name);

/// The text of a built-in model's list, comments included (what `tune-client models NAME`
/// prints); empty for an unknown name.
std::string_view BuiltinModelText(std::string_view name);

}  // namespace tune
