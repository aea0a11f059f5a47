#include "search/config_space.h"

#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "common/status.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "search/raw_cursor.h"

namespace tune {
namespace {

constexpr std::string_view kAcceptedConfigForm = R"({"knob":<int>,...})";
// Longer config texts are shortened in error messages.
constexpr size_t kMaxQuotedText = 200;

// Appends `text` as a JSON string literal (quotes included).
void AppendJsonString(std::string* out, std::string_view text) {
  *out += '"';
  for (char c : text) {
    switch (c) {
      case '"':
        *out += "\\\"";
        break;
      case '\\':
        *out += "\\\\";
        break;
      case '\n':
        *out += "\\n";
        break;
      case '\t':
        *out += "\\t";
        break;
      case '\r':
        *out += "\\r";
        break;
      case '\b':
        *out += "\\b";
        break;
      case '\f':
        *out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          *out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
        } else {
          *out += c;
        }
    }
  }
  *out += '"';
}

std::string Quoted(std::string_view text) {
  if (text.size() <= kMaxQuotedText) {
    return StrCat("'", text, "'");
  }
  return StrCat("'", text.substr(0, kMaxQuotedText), "...' (", text.size(), " characters)");
}

std::string ValueList(const std::vector<int64_t>& values) {
  return fmt::format("{}", fmt::join(values, ", "));
}

// SAX handler that accepts exactly one flat JSON object of int64 values and records the first
// problem it meets.
class FlatIntObjectParser {
 public:
  using json = nlohmann::json;

  Config& config() { return config_; }
  const std::string& problem() const { return problem_; }

  bool null() { return Reject("null"); }
  bool boolean(bool /*value*/) { return Reject("a boolean"); }
  bool number_integer(json::number_integer_t value) { return Store(value); }
  bool number_unsigned(json::number_unsigned_t value) {
    if (depth_ == 0) {
      return Reject("a number");
    }
    if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Fail(StrCat("value of '", key_, "' is out of the 64-bit integer range"));
    }
    return Store(static_cast<int64_t>(value));
  }
  bool number_float(json::number_float_t /*value*/, const std::string& text) {
    if (depth_ == 0) {
      return Reject("a number");
    }
    bool digits_only = !text.empty();
    for (size_t i = 0; i < text.size(); ++i) {
      char c = text[i];
      if (!((c >= '0' && c <= '9') || (i == 0 && c == '-'))) {
        digits_only = false;
      }
    }
    if (digits_only) {
      return Fail(StrCat("value of '", key_, "' is out of the 64-bit integer range"));
    }
    return Fail(StrCat("value of '", key_, "' is not an integer"));
  }
  bool string(std::string& /*value*/) { return Reject("a string"); }
  bool binary(json::binary_t& /*value*/) { return Reject("binary data"); }
  bool start_object(size_t /*elements*/) {
    if (depth_ > 0) {
      return Reject("an object");
    }
    ++depth_;
    return true;
  }
  bool key(std::string& name) {
    if (config_.count(name)) {
      return Fail(StrCat("key '", name, "' appears twice"));
    }
    key_ = name;
    return true;
  }
  bool end_object() {
    --depth_;
    return true;
  }
  bool start_array(size_t /*elements*/) {
    if (depth_ == 0) {
      return Fail("it is an array, not an object");
    }
    return Reject("an array");
  }
  bool end_array() { return true; }
  bool parse_error(size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& error) {
    std::string what = error.what();
    // Drop the "[json.exception.parse_error.101] " prefix.
    if (size_t end = what.find("] "); !what.empty() && what[0] == '[' && end != std::string::npos) {
      what = what.substr(end + 2);
    }
    return Fail(StrCat("not valid JSON (", what, ")"));
  }

 private:
  bool Store(int64_t value) {
    if (depth_ == 0) {
      return Reject("a number");
    }
    config_[key_] = value;
    return true;
  }
  bool Reject(std::string_view what) {
    if (depth_ == 0) {
      return Fail(StrCat("it is ", what, ", not an object"));
    }
    return Fail(StrCat("value of '", key_, "' is ", what, ", not an integer"));
  }
  bool Fail(std::string problem) {
    if (problem_.empty()) {
      problem_ = std::move(problem);
    }
    return false;
  }

  Config config_;
  std::string key_;
  std::string problem_;
  int depth_ = 0;
};

}  // namespace

std::string ConfigToString(const Config& config) {
  std::string out = "{";
  bool first = true;
  for (const auto& [name, value] : config) {
    if (!first) {
      out += ',';
    }
    first = false;
    AppendJsonString(&out, name);
    StrAppend(&out, ":", value);
  }
  out += '}';
  return out;
}

absl::StatusOr<Config> ParseConfig(std::string_view text) {
  FlatIntObjectParser parser;
  bool ok = nlohmann::json::sax_parse(text, &parser);
  if (!ok || !parser.problem().empty()) {
    std::string problem = parser.problem().empty() ? "not valid JSON" : parser.problem();
    return absl::InvalidArgumentError(
        StrCat("config ", Quoted(text), ": ", problem, "; accepted form: ", kAcceptedConfigForm));
  }
  return std::move(parser.config());
}

uint64_t UniformIndex(std::mt19937_64& rng, uint64_t n) {
  TUNE_CHECK(n > 0) << "UniformIndex needs a non-empty range";
  static_assert(std::mt19937_64::min() == 0 &&
                std::mt19937_64::max() == std::numeric_limits<uint64_t>::max());
  // Values below `threshold` would make the low residues more likely; redraw them.
  const uint64_t threshold = (0 - n) % n;
  while (true) {
    uint64_t r = rng();
    if (r >= threshold) {
      return r % n;
    }
  }
}

void ConfigSpace::AddKnob(std::string name, std::vector<int64_t> values, std::string doc) {
  TUNE_CHECK(!name.empty()) << "knob names must be non-empty";
  TUNE_CHECK(FindKnob(name) == nullptr) << "knob '" << name << "' is added twice";
  TUNE_CHECK(!values.empty()) << "knob '" << name << "' has no candidate values";
  std::set<int64_t> distinct(values.begin(), values.end());
  TUNE_CHECK(distinct.size() == values.size())
      << "knob '" << name << "' lists a candidate value twice";
  knobs_.push_back(Knob{std::move(name), std::move(values), std::move(doc)});
}

void ConfigSpace::AddConstraint(std::string description, std::function<bool(const Config&)> holds) {
  TUNE_CHECK(holds != nullptr) << "constraint '" << description << "' has no predicate";
  constraints_.push_back(Constraint{std::move(description), std::move(holds)});
}

const Knob* ConfigSpace::FindKnob(std::string_view name) const {
  for (const Knob& knob : knobs_) {
    if (knob.name == name) {
      return &knob;
    }
  }
  return nullptr;
}

uint64_t ConfigSpace::RawSize() const {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t size = 1;
  for (const Knob& knob : knobs_) {
    uint64_t radix = knob.values.size();
    if (size > kMax / radix) {
      return kMax;
    }
    size *= radix;
  }
  return size;
}

std::optional<Config> ConfigSpace::Nearest(const Config& config) const {
  Config out;
  for (const Knob& knob : knobs_) {
    auto it = config.find(knob.name);
    if (it == config.end()) {
      return std::nullopt;
    }
    const int64_t want = it->second;
    auto distance = [want](int64_t v) {
      return v > 0 && want > 0 ? std::abs(std::log(static_cast<double>(v) / want))
                               : std::abs(static_cast<double>(v - want)) + 1e6;
    };
    int64_t best = knob.values.front();
    for (int64_t v : knob.values) {
      if (v == want) {
        best = v;
        break;
      }
      if (distance(v) < distance(best)) {
        best = v;
      }
    }
    out[knob.name] = best;
  }
  if (!ConstraintsHold(out)) {
    return std::nullopt;
  }
  return out;
}

absl::Status ConfigSpace::Validate(const Config& config) const {
  auto error = [&](std::string problem) {
    return absl::InvalidArgumentError(
        StrCat("config ", Quoted(ConfigToString(config)), ": ", problem));
  };
  for (const Knob& knob : knobs_) {
    auto it = config.find(knob.name);
    if (it == config.end()) {
      return error(
          StrCat("knob '", knob.name, "' is missing; accepted values: ", ValueList(knob.values)));
    }
    bool candidate = false;
    for (int64_t v : knob.values) {
      candidate = candidate || v == it->second;
    }
    if (!candidate) {
      return error(StrCat("value ", it->second, " of knob '", knob.name,
                          "' is not a candidate; accepted values: ", ValueList(knob.values)));
    }
  }
  if (config.size() != knobs_.size()) {
    for (const auto& [name, value] : config) {
      if (FindKnob(name) == nullptr) {
        std::vector<std::string> names;
        for (const Knob& knob : knobs_) {
          names.push_back(knob.name);
        }
        return error(StrCat("unknown knob '", name, "'; knobs of this space: ",
                            names.empty() ? "(none)" : Join(names, ", ")));
      }
    }
  }
  for (const Constraint& constraint : constraints_) {
    if (!constraint.holds(config)) {
      return error(StrCat("constraint '", constraint.description, "' does not hold"));
    }
  }
  return absl::OkStatus();
}

bool ConfigSpace::ConstraintsHold(const Config& config) const {
  for (const Constraint& constraint : constraints_) {
    if (!constraint.holds(config)) {
      return false;
    }
  }
  return true;
}

Config ConfigSpace::ConfigAt(uint64_t index) const {
  TUNE_CHECK(index < RawSize()) << "index " << index << " is outside the space of " << RawSize()
                                << " points";
  // Least significant digit first: the last knob varies fastest. Works even when RawSize()
  // saturates, because every index below it is below the true size.
  Config config;
  for (size_t k = knobs_.size(); k-- > 0;) {
    const Knob& knob = knobs_[k];
    uint64_t radix = knob.values.size();
    config.emplace(knob.name, knob.values[index % radix]);
    index /= radix;
  }
  return config;
}

std::optional<uint64_t> ConfigSpace::IndexOf(const Config& config) const {
  if (config.size() != knobs_.size()) {
    return std::nullopt;
  }
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t index = 0;
  for (const Knob& knob : knobs_) {
    auto it = config.find(knob.name);
    if (it == config.end()) {
      return std::nullopt;
    }
    std::optional<uint64_t> digit;
    for (size_t i = 0; i < knob.values.size(); ++i) {
      if (knob.values[i] == it->second) {
        digit = i;
      }
    }
    if (!digit) {
      return std::nullopt;
    }
    uint64_t radix = knob.values.size();
    if (index > (kMax - *digit) / radix) {
      return std::nullopt;  // beyond 64 bits
    }
    index = index * radix + *digit;
  }
  return index;
}

std::vector<Config> ConfigSpace::EnumerateValid(size_t limit) const {
  std::vector<Config> out;
  for (RawCursor cursor(*this, 0); !cursor.done() && out.size() < limit; cursor.Next()) {
    if (ConstraintsHold(cursor.config())) {
      out.push_back(cursor.config());
    }
  }
  return out;
}

Config ConfigSpace::SampleRaw(std::mt19937_64& rng) const {
  Config config;
  for (const Knob& knob : knobs_) {
    config.emplace(knob.name, knob.values[UniformIndex(rng, knob.values.size())]);
  }
  return config;
}

std::optional<Config> ConfigSpace::Sample(std::mt19937_64& rng, int max_tries) const {
  for (int i = 0; i < max_tries; ++i) {
    Config config = SampleRaw(rng);
    if (ConstraintsHold(config)) {
      return config;
    }
  }
  return std::nullopt;
}

std::string ConfigSpace::Describe() const {
  std::vector<std::string> knobs;
  for (const Knob& knob : knobs_) {
    knobs.push_back(fmt::format("{}={{{}}}", knob.name, fmt::join(knob.values, ",")));
  }
  std::string out = StrCat(knobs_.size(), " knobs (", RawSize(), " points): ", Join(knobs, " "));
  if (!constraints_.empty()) {
    std::vector<std::string> descriptions;
    for (const Constraint& c : constraints_) {
      descriptions.push_back(StrCat("[", c.description, "]"));
    }
    StrAppend(&out, "; constraints: ", Join(descriptions, " "));
  }
  return out;
}

std::string ConfigSpace::Fingerprint() const {
  // FNV-1a over Describe(), which holds exactly what identifies the space.
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : Describe()) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", hash);
}

}  // namespace tune
