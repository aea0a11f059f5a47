// Status helpers shared by every module: always-on invariant checks for bugs, and the
// RETURN_IF_ERROR / ASSIGN_OR_RETURN macros for absl::Status at module boundaries.
#pragma once

#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"

namespace tune::internal {

/// Collects a message with operator<< and aborts in its destructor. Used by TUNE_CHECK only.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  template <typename T>
  CheckFailure& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  std::ostringstream stream_;
};

}  // namespace tune::internal

/// Aborts with a message when `cond` is false. For broken invariants (bugs) only; user errors
/// are returned as absl::Status.
#define TUNE_CHECK(cond) \
  if (cond) {            \
  } else                 \
    ::tune::internal::CheckFailure(__FILE__, __LINE__, #cond)

#define TUNE_STATUS_CONCAT_INNER(a, b) a##b
#define TUNE_STATUS_CONCAT(a, b) TUNE_STATUS_CONCAT_INNER(a, b)

/// Returns from the enclosing function when `expr` (an absl::Status) is not OK.
#define RETURN_IF_ERROR(expr)                    \
  do {                                           \
    ::absl::Status tune_status_ = (expr);        \
    if (!tune_status_.ok()) return tune_status_; \
  } while (false)

/// `ASSIGN_OR_RETURN(auto x, F())` declares `x` from a StatusOr or returns its error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  TUNE_ASSIGN_OR_RETURN_IMPL(TUNE_STATUS_CONCAT(tune_statusor_, __LINE__), lhs, expr)
#define TUNE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                               \
  if (!tmp.ok()) return std::move(tmp).status();   \
  lhs = std::move(tmp).value()

/// Lets fmt (and so spdlog) print a Status as "CODE: message".
template <>
struct fmt::formatter<absl::Status> : fmt::formatter<std::string> {
  auto format(const absl::Status& s, fmt::format_context& ctx) const {
    return fmt::formatter<std::string>::format(s.ToString(), ctx);
  }
};
