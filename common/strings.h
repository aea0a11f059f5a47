// String helpers. Debian 12's abseil is built with its own absl::string_view (not
// std::string_view), so tune builds strings with fmt and splits them here; absl is used for
// Status / StatusOr only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "fmt/format.h"
#include "fmt/ranges.h"

namespace tune {

/// Splits `text` at every `sep`; empty pieces are kept unless `skip_empty`.
std::vector<std::string_view> Split(std::string_view text, char sep, bool skip_empty = false);

/// Splits at the first `sep` only; nullopt when `sep` does not occur.
std::optional<std::pair<std::string_view, std::string_view>> SplitOnce(std::string_view text,
                                                                       char sep);

/// Parses a whole decimal integer (optional sign); nullopt on anything else or overflow.
std::optional<int64_t> ParseInt(std::string_view text);

/// Concatenates the text form of every argument (strings, numbers, string_views).
template <typename... Args>
std::string StrCat(const Args&... args);

/// Appends the text form of every argument to `*out`.
template <typename... Args>
void StrAppend(std::string* out, const Args&... args);

/// Joins with a separator.
std::string Join(const std::vector<std::string>& parts, std::string_view sep);

}  // namespace tune

/// Lets fmt (and so spdlog and StrCat) print abseil's own string_view.
template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<std::string_view> {
  auto format(absl::string_view s, fmt::format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(std::string_view(s.data(), s.size()), ctx);
  }
};

namespace tune {
namespace strings_internal {
inline void Append(std::string* out, absl::string_view s) { out->append(s.data(), s.size()); }
inline void Append(std::string* out, std::string_view s) { out->append(s); }
inline void Append(std::string* out, const std::string& s) { out->append(s); }
inline void Append(std::string* out, const char* s) { out->append(s); }
inline void Append(std::string* out, char c) { out->push_back(c); }
template <typename T>
void Append(std::string* out, const T& value) {
  *out += fmt::to_string(value);
}
}  // namespace strings_internal

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  (strings_internal::Append(&out, args), ...);
  return out;
}

template <typename... Args>
void StrAppend(std::string* out, const Args&... args) {
  (strings_internal::Append(out, args), ...);
}
}  // namespace tune
