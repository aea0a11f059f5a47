#include "workload_text.h"

#include <charconv>
#include <set>
#include <vector>

namespace c_codegen_plugin {
namespace {

constexpr std::string_view kForm = "gemm:M=<int>,N=<int>,K=<int>[,epilogue=bias|relu|bias_relu]";
constexpr int64_t kMaxSize = int64_t{1} << 31;

template <typename T>
Parsed<T> Malformed(std::string_view text, std::string_view why) {
  return {.value = std::nullopt,
          .refused = false,
          .why = "'" + std::string(text) + "': " + std::string(why)};
}

template <typename T>
Parsed<T> Refused(std::string why) {
  return {.value = std::nullopt, .refused = true, .why = std::move(why)};
}

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) {
    return std::nullopt;
  }
  return value;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = s.find(sep, start);
    parts.push_back(s.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) {
      return parts;
    }
    start = end + 1;
  }
}

std::optional<Epilogue> ParseEpilogue(std::string_view s) {
  if (s == "none") {
    return Epilogue::kNone;
  }
  if (s == "bias") {
    return Epilogue::kBias;
  }
  if (s == "relu") {
    return Epilogue::kRelu;
  }
  if (s == "bias_relu") {
    return Epilogue::kBiasRelu;
  }
  return std::nullopt;
}

}  // namespace

bool HasBias(Epilogue e) { return e == Epilogue::kBias || e == Epilogue::kBiasRelu; }
bool HasRelu(Epilogue e) { return e == Epilogue::kRelu || e == Epilogue::kBiasRelu; }

Parsed<GemmWorkload> ParseWorkload(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    return Malformed<GemmWorkload>(text, "expected OP:FIELDS, e.g. " + std::string(kForm));
  }
  std::string_view op = text.substr(0, colon);
  if (op != "gemm") {
    return Refused<GemmWorkload>("gemm.cpu.c_codegen builds gemm only, not " + std::string(op));
  }
  GemmWorkload gemm;
  std::set<std::string_view> seen;
  for (std::string_view field : Split(text.substr(colon + 1), ',')) {
    size_t eq = field.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == field.size()) {
      return Malformed<GemmWorkload>(
          text, "field '" + std::string(field) + "' is not key=value; expected " + kForm.data());
    }
    std::string_view key = field.substr(0, eq);
    std::string_view value = field.substr(eq + 1);
    if (!seen.insert(key).second) {
      return Malformed<GemmWorkload>(text, "field '" + std::string(key) + "' is given twice");
    }
    if (key == "M" || key == "N" || key == "K") {
      std::optional<int64_t> size = ParseInt(value);
      if (!size || *size < 1 || *size > kMaxSize) {
        return Malformed<GemmWorkload>(text, "field '" + std::string(key) + "' = '" +
                                                 std::string(value) +
                                                 "' is not an integer in [1, 2^31]");
      }
      (key == "M" ? gemm.m : key == "N" ? gemm.n : gemm.k) = *size;
    } else if (key == "epilogue") {
      std::optional<Epilogue> epilogue = ParseEpilogue(value);
      if (!epilogue) {
        return Malformed<GemmWorkload>(
            text, "epilogue '" + std::string(value) + "' is unknown (bias, relu, bias_relu)");
      }
      gemm.epilogue = *epilogue;
    } else if (key == "dtype") {
      if (value != "f32") {
        return Refused<GemmWorkload>("gemm.cpu.c_codegen builds f32 only, not " +
                                     std::string(value));
      }
    } else {
      return Malformed<GemmWorkload>(text, "field '" + std::string(key) + "' is unknown");
    }
  }
  for (std::string_view key : {"M", "N", "K"}) {
    if (!seen.contains(key)) {
      return Malformed<GemmWorkload>(text, "field '" + std::string(key) + "' is missing");
    }
  }
  return {.value = gemm, .refused = false, .why = ""};
}

Parsed<int64_t> ParseTarget(std::string_view text) {
  std::vector<std::string_view> words;
  for (std::string_view word : Split(text, ' ')) {
    if (!word.empty()) {
      words.push_back(word);
    }
  }
  if (words.empty()) {
    return Malformed<int64_t>(text, "empty target; expected e.g. 'llvm -mcpu=native -threads=1'");
  }
  if (words[0] != "llvm") {
    return Refused<int64_t>("gemm.cpu.c_codegen targets CPUs (llvm), not " + std::string(words[0]));
  }
  int64_t threads = 1;
  for (size_t i = 1; i < words.size(); ++i) {
    constexpr std::string_view kThreads = "-threads=";
    if (words[i].starts_with(kThreads)) {
      std::optional<int64_t> n = ParseInt(words[i].substr(kThreads.size()));
      if (!n || *n < 1) {
        return Malformed<int64_t>(text, "-threads wants an integer >= 1");
      }
      threads = *n;
    }
    // -mcpu and -libs are ignored: the C compiler builds for the host (-march=native).
  }
  if (threads > 1) {
    return Refused<int64_t>("this example emits single-threaded C");
  }
  return {.value = threads, .refused = false, .why = ""};
}

}  // namespace c_codegen_plugin
