#include "common/shape_range.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <set>

#include "common/status.h"
#include "common/strings.h"

namespace tune {
namespace {

constexpr std::string_view kRangeForms =
    "gemm:M=LO..HI,N=<int>,K=<int>[,...] (GEMM: one of M, N or K ranges) or "
    "conv2d:N=LO..HI,C=<int>,... (conv2d: the batch N ranges), with 1 <= LO < HI";

absl::Status Invalid(std::string_view text, std::string_view what) {
  return absl::InvalidArgumentError(
      StrCat("shape range '", text, "': ", what, "; accepted form: ", kRangeForms));
}

bool ParseInt(std::string_view s, int64_t* out) {
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, *out);
  return !s.empty() && ec == std::errc() && ptr == end;
}

// `text` with the value of field `name` (in op:body form) replaced by `value`.
std::string WithField(std::string_view op, const std::vector<std::string>& fields, size_t index,
                      std::string_view name, int64_t value) {
  std::vector<std::string> out = fields;
  out[index] = StrCat(name, "=", value);
  return StrCat(op, ":", Join(out, ","));
}

}  // namespace

bool ShapeRange::IsRange(std::string_view text) {
  return text.find("..") != std::string_view::npos;
}

absl::StatusOr<ShapeRange> ShapeRange::Parse(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    return Invalid(text, "expected '<op>:<fields>'");
  }
  const std::string_view op = text.substr(0, colon);
  if (op != "gemm" && op != "conv2d") {
    return Invalid(text, StrCat("op '", op, "' is unknown (gemm, conv2d)"));
  }
  std::vector<std::string> fields;
  for (std::string_view f : Split(text.substr(colon + 1), ',')) {
    fields.emplace_back(f);
  }
  std::optional<size_t> ranged;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].find("..") == std::string::npos) {
      continue;
    }
    if (ranged) {
      return Invalid(text, StrCat("fields '", fields[*ranged], "' and '", fields[i],
                                  "' are both ranges; one dimension may range"));
    }
    ranged = i;
  }
  if (!ranged) {
    return Invalid(text, "no field is a range LO..HI");
  }
  const std::string& field = fields[*ranged];
  const size_t eq = field.find('=');
  const std::string name = field.substr(0, eq);
  const bool allowed = op == "gemm" ? (name == "M" || name == "N" || name == "K") : name == "N";
  if (eq == std::string::npos || !allowed) {
    return Invalid(text,
                   StrCat("field '", name, "' may not be a range (GEMM: M, N or K; conv2d: N)"));
  }
  const std::string_view value = std::string_view(field).substr(eq + 1);
  const size_t dots = value.find("..");
  ShapeRange range;
  if (!ParseInt(value.substr(0, dots), &range.lo_) ||
      !ParseInt(value.substr(dots + 2), &range.hi_)) {
    return Invalid(text, StrCat("'", field, "' is not LO..HI with integer bounds"));
  }
  if (range.lo_ < 1) {
    return Invalid(text, StrCat("the range's least size ", range.lo_, " is below 1"));
  }
  if (range.lo_ > range.hi_) {
    return Invalid(text, StrCat("its min ", range.lo_, " is above its max ", range.hi_));
  }
  if (range.lo_ == range.hi_) {
    return Invalid(text, StrCat("its min and max are both ", range.lo_,
                                ": give the size itself for one size"));
  }
  for (int64_t size : {range.lo_, range.hi_}) {
    absl::StatusOr<Workload> at = Workload::Parse(WithField(op, fields, *ranged, name, size));
    if (!at.ok()) {
      return Invalid(text, StrCat("at ", name, "=", size, ": ", at.status().message()));
    }
    if (size == range.lo_) {
      range.at_lo_ = *std::move(at);
    }
  }
  range.dim_ = name;
  if (range.at_lo_.prepared_weights()) {
    return Invalid(text,
                   "weights=prepared is not accepted: each size's kernel would want the weights "
                   "prepared its own way; a range takes canonical weights");
  }
  // The canonical text around the ranged field's value.
  const std::string canonical = range.at_lo_.ToString();
  const std::string key = StrCat(name, "=", range.lo_);
  size_t at = canonical.find(':') + 1;
  for (;;) {
    const size_t end = std::min(canonical.find(',', at), canonical.size());
    if (canonical.compare(at, end - at, key) == 0) {
      range.before_ = canonical.substr(0, at + name.size() + 1);
      range.after_ = canonical.substr(end);
      break;
    }
    if (end == canonical.size()) {
      return absl::InternalError(StrCat("canonical form '", canonical, "' lacks '", key, "'"));
    }
    at = end + 1;
  }
  return range;
}

Workload ShapeRange::At(int64_t size) const {
  TUNE_CHECK(Contains(size)) << "size " << size << " outside " << ToString();
  absl::StatusOr<Workload> w = Workload::Parse(StrCat(before_, size, after_));
  TUNE_CHECK(w.ok()) << w.status();  // valid at lo and hi, so at every size between
  return *std::move(w);
}

int64_t ShapeRange::SizeOf(const Workload& workload) const {
  const std::string text = workload.ToString();
  if (text.size() <= before_.size() + after_.size() || !text.starts_with(before_) ||
      !text.ends_with(after_)) {
    return 0;
  }
  int64_t size = 0;
  const std::string_view middle =
      std::string_view(text).substr(before_.size(), text.size() - before_.size() - after_.size());
  return ParseInt(middle, &size) && Contains(size) ? size : 0;
}

std::string ShapeRange::ToString() const { return StrCat(before_, lo_, "..", hi_, after_); }

bool ShapeRange::Splittable() const { return op() == OpKind::kConv2d || dim_ == "M"; }

std::vector<int64_t> ShapeRange::TunedSizes() const {
  std::vector<int64_t> sizes = {lo_};
  for (int64_t p = 1; p < hi_; p *= 2) {
    if (p > lo_) {
      sizes.push_back(p);
    }
  }
  sizes.push_back(hi_);
  return sizes;
}

int64_t ShapeRange::MidpointBetween(int64_t a, int64_t b) {
  const int64_t mid = std::llround(std::sqrt(static_cast<double>(a) * static_cast<double>(b)));
  return mid > a && mid < b ? mid : 0;
}

std::vector<int64_t> ShapeRange::Midpoints() const {
  const std::vector<int64_t> tuned = TunedSizes();
  std::vector<int64_t> mids;
  for (size_t i = 1; i < tuned.size(); ++i) {
    if (const int64_t mid = MidpointBetween(tuned[i - 1], tuned[i]); mid > 0) {
      mids.push_back(mid);
    }
  }
  return mids;
}

std::vector<int64_t> ShapeRange::KernelSizes() const {
  std::set<int64_t> sizes = {lo_, hi_};
  for (int64_t s = lo_; s < std::min<int64_t>(hi_, 8); ++s) {
    sizes.insert(s);
  }
  for (int64_t p = 8; p < hi_; p *= 2) {
    for (int64_t quarters : {4, 5, 6, 7}) {
      const int64_t s = p / 4 * quarters;
      if (s > lo_ && s < hi_) {
        sizes.insert(s);
      }
    }
  }
  return {sizes.begin(), sizes.end()};
}

}  // namespace tune
