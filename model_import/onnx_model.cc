#include "model_import/onnx_model.h"

#include <charconv>
#include <optional>
#include <unordered_map>

#include "common/files.h"
#include "common/status.h"
#include "common/strings.h"
#include "model_import/onnx_graph.h"

namespace tune {
namespace {

// Why a node is skipped: the message of the status its mapping returns.
absl::Status Skip(std::string_view reason) { return absl::UnimplementedError(std::string(reason)); }

std::string Dims(const std::vector<int64_t>& dims) {
  std::vector<std::string> parts;
  for (int64_t d : dims) {
    parts.push_back(std::to_string(d));
  }
  return StrCat("[", Join(parts, ","), "]");
}

// Whether `dims` is a bias of `n` elements: [N] or [1][N].
bool IsBiasOf(const std::vector<int64_t>& dims, int64_t n) {
  return (dims.size() == 1 && dims[0] == n) || (dims.size() == 2 && dims[0] == 1 && dims[1] == n);
}

// The workload of `text` with its dtype (unless f32) and epilogue (unless none), or the reason
// Workload::Parse gives.
absl::StatusOr<Workload> ParsedWorkload(std::string text, const std::string& dtype,
                                        const std::string& epilogue) {
  if (dtype != "f32") {
    StrAppend(&text, ",dtype=", dtype);
  }
  if (!epilogue.empty()) {
    StrAppend(&text, ",epilogue=", epilogue);
  }
  absl::StatusOr<Workload> w = Workload::Parse(text);
  if (!w.ok()) {
    return Skip(StrCat("tune's workload ", text, " is not valid: ", w.status().message()));
  }
  return w;
}

// The epilogue after a node's result: its own bias (has_bias), an Add of an `n`-element tensor
// that is the result's only consumer (take_add, for MatMul), then a Relu that is the only
// consumer of what came before. Returns the epilogue's name ("" for none).
std::string FuseEpilogue(const OnnxGraph& graph, const onnx::NodeProto& node, bool has_bias,
                         bool take_add, int64_t n) {
  std::string value = node.output(0);
  if (take_add) {
    const onnx::NodeProto* add = graph.OnlyConsumer(value);
    if (add != nullptr && add->op_type() == "Add" && add->input_size() == 2) {
      const std::string& other = add->input(0) == value ? add->input(1) : add->input(0);
      std::optional<std::vector<int64_t>> dims = graph.KnownDims(other);
      if (dims.has_value() && IsBiasOf(*dims, n) && other != value) {
        has_bias = true;
        value = add->output(0);
      }
    }
  }
  const onnx::NodeProto* relu = graph.OnlyConsumer(value);
  bool has_relu = relu != nullptr && relu->op_type() == "Relu";
  if (has_bias) {
    return has_relu ? "bias_relu" : "bias";
  }
  return has_relu ? "relu" : "";
}

absl::StatusOr<Workload> MapConv(const OnnxGraph& graph, const onnx::NodeProto& node) {
  if (node.input_size() < 2) {
    return Skip("has no weight input");
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> x, graph.Dims(node.input(0), "input X"));
  ASSIGN_OR_RETURN(std::vector<int64_t> w, graph.Dims(node.input(1), "weight W"));
  if (x.size() != 4 || w.size() != 4) {
    return Skip(
        StrCat("a ", x.size() - 2, "-D convolution (input ", Dims(x), "); tune's conv2d is 2-D"));
  }
  ASSIGN_OR_RETURN(std::string dtype, graph.Dtype(node.input(0), "input X"));
  int64_t group = AttrInt(node, "group", 1);
  if (group != 1) {
    return Skip(StrCat(group == x[1] && w[1] == 1 ? "depthwise" : "grouped",
                       " convolution (group=", group, "); tune's conv2d has groups=1"));
  }
  std::vector<int64_t> strides = AttrInts(node, "strides", {1, 1});
  std::vector<int64_t> dilations = AttrInts(node, "dilations", {1, 1});
  if (strides.size() != 2 || strides[0] != strides[1]) {
    return Skip(StrCat("strides ", Dims(strides), " differ; tune's conv2d has one stride"));
  }
  if (dilations.size() != 2 || dilations[0] != dilations[1]) {
    return Skip(StrCat("dilations ", Dims(dilations), " differ; tune's conv2d has one dilation"));
  }
  std::vector<int64_t> pads;
  std::string auto_pad = AttrString(node, "auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    pads = AttrInts(node, "pads", {0, 0, 0, 0});
  } else if (auto_pad == "VALID") {
    pads = {0, 0, 0, 0};
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int i = 0; i < 2; ++i) {
      int64_t in = x[2 + i], out = (in + strides[i] - 1) / strides[i];
      int64_t total =
          std::max<int64_t>((out - 1) * strides[i] + (w[2 + i] - 1) * dilations[i] + 1 - in, 0);
      pads.push_back(total / 2);
      pads.push_back(total - total / 2);
    }
    pads = {pads[0], pads[2], pads[1], pads[3]};  // begins, then ends, as ONNX orders them
  } else {
    return Skip(StrCat("auto_pad=", auto_pad, " is not an ONNX padding mode"));
  }
  if (pads.size() != 4 || pads[0] != pads[1] || pads[0] != pads[2] || pads[0] != pads[3]) {
    return Skip(StrCat("padding ", Dims(pads),
                       " (begins, then ends) is not the same on all four "
                       "sides; tune's conv2d pads symmetrically"));
  }
  if (w[1] != x[1]) {
    return Skip(StrCat("weight ", Dims(w), " does not match the input's ", x[1], " channels"));
  }
  bool has_bias = node.input_size() >= 3 && !node.input(2).empty();
  std::string epilogue = FuseEpilogue(graph, node, has_bias, false, w[0]);
  std::string text = fmt::format("conv2d:N={},C={},H={},W={},K={},R={},S={},stride={},pad={}", x[0],
                                 x[1], x[2], x[3], w[0], w[2], w[3], strides[0], pads[0]);
  if (dilations[0] != 1) {
    StrAppend(&text, ",dilation=", dilations[0]);
  }
  return ParsedWorkload(std::move(text), dtype, epilogue);
}

absl::StatusOr<Workload> MapGemm(const OnnxGraph& graph, const onnx::NodeProto& node) {
  if (node.input_size() < 2) {
    return Skip("has fewer than two inputs");
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> a, graph.Dims(node.input(0), "input A"));
  ASSIGN_OR_RETURN(std::vector<int64_t> b, graph.Dims(node.input(1), "input B"));
  ASSIGN_OR_RETURN(std::string dtype, graph.Dtype(node.input(0), "input A"));
  if (a.size() != 2 || b.size() != 2) {
    return Skip(StrCat("inputs of shapes ", Dims(a), " and ", Dims(b), " are not matrices"));
  }
  if (AttrInt(node, "transA", 0) != 0) {
    return Skip("transA=1 (A stored transposed); tune's GEMM takes A as [M][K]");
  }
  if (float alpha = AttrFloat(node, "alpha", 1.0f); alpha != 1.0f) {
    return Skip(StrCat("alpha=", alpha, "; tune's GEMM computes A x B unscaled"));
  }
  bool nt = AttrInt(node, "transB", 0) != 0;
  int64_t m = a[0], k = a[1], n = nt ? b[0] : b[1];
  if ((nt ? b[1] : b[0]) != k) {
    return Skip(StrCat("B ", Dims(b), " does not match A ", Dims(a)));
  }
  bool has_bias = false;
  if (node.input_size() >= 3 && !node.input(2).empty()) {
    ASSIGN_OR_RETURN(std::vector<int64_t> c, graph.Dims(node.input(2), "input C"));
    if (!IsBiasOf(c, n)) {
      return Skip(StrCat("C of shape ", Dims(c), " is not a bias of N=", n,
                         " elements; tune's GEMM adds a bias only"));
    }
    if (float beta = AttrFloat(node, "beta", 1.0f); beta != 1.0f) {
      return Skip(StrCat("beta=", beta, "; tune's GEMM adds its bias unscaled"));
    }
    has_bias = true;
  }
  std::string epilogue = FuseEpilogue(graph, node, has_bias, false, n);
  std::string text = fmt::format("gemm:M={},N={},K={}", m, n, k);
  if (nt) {
    StrAppend(&text, ",layout=NT");
  }
  return ParsedWorkload(std::move(text), dtype, epilogue);
}

absl::StatusOr<Workload> MapMatMul(const OnnxGraph& graph, const onnx::NodeProto& node) {
  if (node.input_size() != 2) {
    return Skip("does not have two inputs");
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> a, graph.Dims(node.input(0), "input A"));
  ASSIGN_OR_RETURN(std::vector<int64_t> b, graph.Dims(node.input(1), "input B"));
  ASSIGN_OR_RETURN(std::string dtype, graph.Dtype(node.input(0), "input A"));
  if (a.size() < 2 || b.size() < 2) {
    return Skip(
        StrCat("a vector operand (A ", Dims(a), ", B ", Dims(b), "); tune's GEMM takes matrices"));
  }
  if (b.size() > 2) {
    return Skip(StrCat("batched MatMul (A ", Dims(a), ", B ", Dims(b),
                       "); tune's GEMM takes one B of rank 2"));
  }
  int64_t m = 1;
  for (size_t i = 0; i + 1 < a.size(); ++i) {
    m *= a[i];
  }
  int64_t k = a.back(), n = b[1];
  if (b[0] != k) {
    return Skip(StrCat("B ", Dims(b), " does not match A ", Dims(a)));
  }
  return ParsedWorkload(fmt::format("gemm:M={},N={},K={}", m, n, k), dtype,
                        FuseEpilogue(graph, node, false, true, n));
}

// Operators that compute convolutions or matrix products but that tune does not map, with why.
const std::unordered_map<std::string_view, std::string_view>& UnmappedOps() {
  static const std::unordered_map<std::string_view, std::string_view> kOps = {
      {"ConvTranspose", "a transposed convolution; tune's conv2d is a forward convolution"},
      {"ConvInteger", "a quantized convolution with zero points; not mapped"},
      {"QLinearConv", "a quantized convolution with scales and zero points; not mapped"},
      {"MatMulInteger", "a quantized matrix product with zero points; not mapped"},
      {"QLinearMatMul", "a quantized matrix product with scales and zero points; not mapped"},
  };
  return kOps;
}

absl::StatusOr<OnnxWorkloads> MapGraph(const onnx::ModelProto& model, std::string_view source) {
  OnnxGraph graph(model.graph());
  OnnxWorkloads out;
  out.graph_name = model.graph().name();
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") {
      out.opset = opset.version();
    }
  }
  std::unordered_map<std::string, size_t> index;
  const auto& nodes = model.graph().node();
  for (int i = 0; i < nodes.size(); ++i) {
    const onnx::NodeProto& node = nodes[i];
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      continue;
    }
    std::string name = node.name().empty() ? StrCat(node.op_type(), " #", i) : node.name();
    absl::StatusOr<Workload> verdict = Skip("");
    if (node.op_type() == "Conv") {
      verdict = MapConv(graph, node);
    } else if (node.op_type() == "Gemm") {
      verdict = MapGemm(graph, node);
    } else if (node.op_type() == "MatMul") {
      verdict = MapMatMul(graph, node);
    } else if (auto it = UnmappedOps().find(node.op_type()); it != UnmappedOps().end()) {
      verdict = Skip(it->second);
    } else {
      continue;
    }
    if (!verdict.ok()) {
      out.skipped.push_back({name, node.op_type(), std::string(verdict.status().message())});
      continue;
    }
    const Workload& w = *verdict;
    auto [it, added] = index.emplace(w.ToString(), out.workloads.size());
    if (added) {
      out.workloads.push_back({w, 1});
    } else {
      out.workloads[it->second].weight += 1;
    }
  }
  if (out.workloads.empty()) {
    // The first few reasons: a model whose every node is skipped usually has one cause (a
    // symbolic batch), repeated node after node.
    constexpr size_t kReasonsShown = 3;
    std::vector<std::string> reasons;
    for (size_t i = 0; i < out.skipped.size() && i < kReasonsShown; ++i) {
      reasons.push_back(Describe(out.skipped[i]));
    }
    if (out.skipped.size() > kReasonsShown) {
      reasons.push_back(StrCat("and ", out.skipped.size() - kReasonsShown, " more"));
    }
    return absl::InvalidArgumentError(
        StrCat(source, ": no Conv, Gemm or MatMul node that tune can run",
               reasons.empty() ? std::string() : StrCat("; skipped: ", Join(reasons, "; "))));
  }
  if (out.workloads.size() > static_cast<size_t>(kMaxModelWorkloads)) {
    return absl::InvalidArgumentError(StrCat(source, ": ", out.workloads.size(),
                                             " distinct workloads; a model job holds at most ",
                                             kMaxModelWorkloads));
  }
  return out;
}

}  // namespace

std::string Describe(const OnnxSkippedNode& node) {
  return StrCat(node.node, " (", node.op_type, "): ", node.reason);
}

absl::StatusOr<OnnxImportOptions> OnnxOptionsFromDims(const std::vector<std::string>& dims) {
  OnnxImportOptions options;
  for (const std::string& d : dims) {
    RETURN_IF_ERROR(AddOnnxDim(d, options.dims));
  }
  return options;
}

absl::Status AddOnnxDim(std::string_view text, std::map<std::string, int64_t>& dims) {
  size_t eq = text.find('=');
  int64_t value = 0;
  std::string_view digits = eq == std::string_view::npos ? "" : text.substr(eq + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (eq == 0 || eq == std::string_view::npos || ec != std::errc() ||
      end != digits.data() + digits.size() || value < 1) {
    return absl::InvalidArgumentError(
        StrCat("--dim '", text,
               "': expected NAME=VALUE, a symbolic dimension of the model's "
               "inputs and its size (>= 1), e.g. batch=1"));
  }
  dims[std::string(text.substr(0, eq))] = value;
  return absl::OkStatus();
}

absl::StatusOr<OnnxWorkloads> ParseOnnxModel(const std::string& bytes, std::string_view source,
                                             const OnnxImportOptions& options) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes) || !model.has_graph()) {
    return absl::InvalidArgumentError(
        StrCat(source, ": not an ONNX model (a serialized onnx.ModelProto with a graph)"));
  }
  RETURN_IF_ERROR(SetSymbolicDims(model, options.dims, source));
  RETURN_IF_ERROR(InferOnnxShapes(model, source));
  return MapGraph(model, source);
}

absl::StatusOr<OnnxWorkloads> ReadOnnxModel(const std::string& path,
                                            const OnnxImportOptions& options) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ParseOnnxModel(bytes, path, options);
}

std::string FormatOnnxWorkloads(const OnnxWorkloads& model, std::string_view source) {
  std::string out = StrCat("# ", source, ": graph '", model.graph_name, "', opset ", model.opset,
                           ", ", model.workloads.size(), " workloads\n");
  for (const OnnxSkippedNode& s : model.skipped) {
    StrAppend(&out, "# skipped ", Describe(s), "\n");
  }
  StrAppend(&out, FormatWorkloadList(model.workloads));
  return out;
}

}  // namespace tune
