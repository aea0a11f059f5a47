// ConfigSpace: the knobs of a schedule template, their candidate values and the constraints
// between them; a Config is one point of it. Configs print to a canonical JSON object (sorted
// keys) that is their identity in the tuning log.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tune {

/// One point of a config space: knob name -> chosen value. Ordered, so iteration and printing
/// are deterministic.
using Config = std::map<std::string, int64_t, std::less<>>;

/// Canonical text of a config: a JSON object with sorted keys and no spaces,
/// e.g. {"kc":256,"mc":64,"nr":16}.
std::string ConfigToString(const Config& config);

/// Parses the text form of ConfigToString (any key order, whitespace allowed). Anything that is
/// not a flat JSON object of integers is InvalidArgument naming the problem.
absl::StatusOr<Config> ParseConfig(std::string_view text);

struct Knob {
  std::string name;
  std::vector<int64_t> values;  // candidate values, in the order grid search visits them
  std::string doc;              // one line for people: what the knob controls
};

struct Constraint {
  std::string description;                   // e.g. "mc % mr == 0"
  std::function<bool(const Config&)> holds;  // true when the config satisfies it
};

/// A uniform integer in [0, n) (n > 0, checked) drawn from `rng` by rejection. Unlike
/// std::uniform_int_distribution, the result is the same on every standard library, so seeded
/// searches repeat exactly wherever they run.
uint64_t UniformIndex(std::mt19937_64& rng, uint64_t n);

class ConfigSpace {
 public:
  /// Adds a knob; names must be unique and `values` non-empty (checked: a bug otherwise).
  /// Names must also be non-empty and values distinct (checked too), so that ConfigAt/IndexOf
  /// stay a bijection.
  void AddKnob(std::string name, std::vector<int64_t> values, std::string doc = "");
  void AddConstraint(std::string description, std::function<bool(const Config&)> holds);

  const std::vector<Knob>& knobs() const { return knobs_; }
  const std::vector<Constraint>& constraints() const { return constraints_; }
  const Knob* FindKnob(std::string_view name) const;

  /// Number of points before constraints (the product of the knobs' value counts).
  uint64_t RawSize() const;

  /// OK when every knob has a value from its candidates, there are no unknown keys, and every
  /// constraint holds; otherwise InvalidArgument naming the knob or the constraint.
  absl::Status Validate(const Config& config) const;
  /// `config` moved onto this space: each knob keeps its value where it is a candidate, else
  /// takes the candidate nearest it by ratio (a tile of 32 rows becomes 28 where 28 is the
  /// largest); nullopt when `config` lacks a knob or the result breaks a constraint. How a config
  /// measured for one size carries over to another (shape ranges).
  std::optional<Config> Nearest(const Config& config) const;
  bool IsValid(const Config& config) const { return Validate(config).ok(); }

  /// The point at a mixed-radix index in [0, RawSize()) (first knob varies slowest); it may
  /// violate constraints.
  Config ConfigAt(uint64_t index) const;
  /// The mixed-radix index of a config whose values are all candidates.
  std::optional<uint64_t> IndexOf(const Config& config) const;

  /// Valid configs in index order, at most `limit`.
  std::vector<Config> EnumerateValid(size_t limit) const;

  /// A uniformly drawn valid config (rejection sampling, at most `max_tries` draws); nullopt
  /// when none was found.
  std::optional<Config> Sample(std::mt19937_64& rng, int max_tries = 10000) const;

  /// A one-line description of the knobs, for logs and headers.
  std::string Describe() const;

  /// True when every constraint holds. `config` must be complete (every knob set, as ConfigAt
  /// returns); cheaper than Validate because it builds no message.
  bool ConstraintsHold(const Config& config) const;

  /// A uniformly drawn point of the raw space (it may violate constraints). One draw per knob,
  /// in knob order, with UniformIndex, so a given rng state gives the same point everywhere.
  Config SampleRaw(std::mt19937_64& rng) const;

  /// 16 hex digits identifying the knobs (names and values, in order) and the constraint
  /// descriptions; docs are left out. Saved search states carry it to detect a changed space.
  std::string Fingerprint() const;

 private:
  std::vector<Knob> knobs_;
  std::vector<Constraint> constraints_;
};

}  // namespace tune
