#include "common/strings.h"

#include <charconv>

namespace tune {

std::vector<std::string_view> Split(std::string_view text, char sep, bool skip_empty) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t pos = text.find(sep, start);
    std::string_view piece = text.substr(start, pos == std::string_view::npos ? pos : pos - start);
    if (!(skip_empty && piece.empty())) {
      out.push_back(piece);
    }
    if (pos == std::string_view::npos) {
      break;
    }
    start = pos + 1;
  }
  return out;
}

std::optional<std::pair<std::string_view, std::string_view>> SplitOnce(std::string_view text,
                                                                       char sep) {
  size_t pos = text.find(sep);
  if (pos == std::string_view::npos) {
    return std::nullopt;
  }
  return std::make_pair(text.substr(0, pos), text.substr(pos + 1));
}

std::optional<int64_t> ParseInt(std::string_view text) {
  if (!text.empty() && text.front() == '+') {
    text.remove_prefix(1);
  }
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) {
      out += sep;
    }
    out += parts[i];
  }
  return out;
}

}  // namespace tune
