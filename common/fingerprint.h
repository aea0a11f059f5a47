// A device fingerprint: what decides a worker's speed, stamped on every measurement it makes.
// Its text is the device key followed by name=value fields, a value in single quotes where it
// holds a space ('\' escapes a quote or a backslash inside them):
//
//   cuda/sm_90 fp=2 gpu='NVIDIA H200' sms=132 mem=139.8GiB sm_clock=1980MHz mem_clock=3201MHz
//       l2=60.0MiB driver=580.159.04 cuda=13.0 lib.cublas=13.1.0 lib.cudnn=9.14.0
//   sapphirerapids fp=2 cpu='INTEL(R) XEON(R) PLATINUM 8581C' microcode=0x21000290 cores=16
//       threads=1 isa=avx2,fma,avx512f,... features=5e1c2a07 lib.dnnl=2.6.0 lib.openblas=0.3.21
//
// `fp=2` marks the structured form; a fingerprint written before it (free text, tune before
// schema 11) parses as fields where it can and counts as an older fingerprint. Library versions
// are those the runtime shims report (tune_<name>_version, runtime/tune_runtime.h), one field
// `lib.<name>` per library the worker offers; `microcode` only where Linux shows it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tune {

class Fingerprint {
 public:
  /// The version that `fp=` names in the structured form.
  static constexpr std::string_view kVersion = "2";

  /// A structured fingerprint of `device_key` with no fields but `fp`.
  explicit Fingerprint(std::string device_key);

  /// Reads a fingerprint's text, structured or not; never fails (text that is not name=value
  /// becomes a field `text` of its own).
  static Fingerprint Parse(std::string_view text);

  /// Sets field `name` (kept in the order first set); an empty value removes it.
  void Set(std::string_view name, std::string_view value);
  /// The field's value, or nullopt.
  std::optional<std::string> Get(std::string_view name) const;

  const std::string& device_key() const { return device_key_; }
  const std::vector<std::pair<std::string, std::string>>& fields() const { return fields_; }
  /// True for the structured form (`fp=2`), false for a free-text fingerprint.
  bool structured() const;

  /// The canonical text (the header's form): Parse(ToString()) gives the same fields.
  std::string ToString() const;

  /// What changed from `older` to this one, field by field, for people: "driver 575.57.08 ->
  /// 580.159.04, lib.cublas 13.0.0 -> 13.1.0"; "lib.cudnn new (9.14.0)"; "no longer lib.x";
  /// "structured (was free text)" first when `older` is a free-text fingerprint. Empty when the
  /// two have the same fields.
  std::string DescribeChangeFrom(const Fingerprint& older) const;

 private:
  std::string device_key_;
  std::vector<std::pair<std::string, std::string>> fields_;
};

/// What tune-compile and `tune-client best` append to an answer measured under `measured`, an
/// older fingerprint of `device_key` than `newest`: "; UNVERIFIED: measured under an older
/// fingerprint of D (since: <what changed>); `tune-client reverify` re-measures it ...".
std::string UnverifiedNote(const std::string& device_key, const std::string& newest,
                           const std::string& measured);

}  // namespace tune
