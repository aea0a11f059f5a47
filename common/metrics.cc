#include "common/metrics.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <variant>

#include "common/clock.h"
#include "common/files.h"
#include "common/status.h"
#include "fmt/format.h"

namespace tune::metrics {
namespace {

bool ValidName(std::string_view name, bool colons) {
  if (name.empty()) {
    return false;
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colons && c == ':');
    const bool digit = c >= '0' && c <= '9';
    if (!letter && !(digit && i > 0)) {
      return false;
    }
  }
  return true;
}

// A sample value: integers as integers, special floats as the format spells them.
std::string Number(double value) {
  if (std::isnan(value)) {
    return "NaN";
  }
  if (std::isinf(value)) {
    return value > 0 ? "+Inf" : "-Inf";
  }
  return fmt::format("{}", value);
}

// HELP text escapes backslash and newline; label values also the double quote.
std::string Escape(std::string_view text, bool quote) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

std::string Labels(std::string_view name, std::string_view value) {
  return fmt::format("{{{}=\"{}\"}}", name, Escape(value, true));
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      buckets_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    TUNE_CHECK(std::isfinite(bounds_[i]) && (i == 0 || bounds_[i - 1] < bounds_[i]))
        << "histogram bounds must be finite and strictly increasing";
  }
}

void Histogram::Observe(double value) {
  // The first bucket whose upper bound holds the value (bounds are inclusive: le).
  const size_t bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Take() const {
  Snapshot snapshot;
  uint64_t total = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
    snapshot.cumulative.push_back(total);
  }
  snapshot.count = total;
  snapshot.sum = sum_.load(std::memory_order_relaxed);
  return snapshot;
}

struct Registry::Entry {
  std::string name;
  std::string help;
  std::variant<std::monostate, Counter, Gauge, std::unique_ptr<Histogram>, Family<Counter>,
               Family<Gauge>>
      metric;
};

Registry::Registry() = default;
Registry::~Registry() = default;

Registry::Entry& Registry::Add(std::string name, std::string help) {
  TUNE_CHECK(ValidName(name, true)) << "metric name '" << name << "' is not valid";
  std::lock_guard lock(mu_);
  for (const auto& entry : entries_) {
    TUNE_CHECK(entry->name != name) << "metric '" << name << "' is registered twice";
  }
  entries_.push_back(std::make_unique<Entry>());
  entries_.back()->name = std::move(name);
  entries_.back()->help = std::move(help);
  return *entries_.back();
}

Counter& Registry::AddCounter(std::string name, std::string help) {
  return Add(std::move(name), std::move(help)).metric.emplace<Counter>();
}

Gauge& Registry::AddGauge(std::string name, std::string help) {
  return Add(std::move(name), std::move(help)).metric.emplace<Gauge>();
}

Histogram& Registry::AddHistogram(std::string name, std::string help, std::vector<double> bounds) {
  return *Add(std::move(name), std::move(help))
              .metric.emplace<std::unique_ptr<Histogram>>(
                  std::make_unique<Histogram>(std::move(bounds)));
}

Family<Counter>& Registry::AddCounterFamily(std::string name, std::string help, std::string label) {
  TUNE_CHECK(ValidName(label, false) && label != "le") << "label name '" << label << "'";
  return Add(std::move(name), std::move(help)).metric.emplace<Family<Counter>>(std::move(label));
}

Family<Gauge>& Registry::AddGaugeFamily(std::string name, std::string help, std::string label) {
  TUNE_CHECK(ValidName(label, false) && label != "le") << "label name '" << label << "'";
  return Add(std::move(name), std::move(help)).metric.emplace<Family<Gauge>>(std::move(label));
}

std::string Registry::Exposition() const {
  std::string out;
  auto header = [&out](const Entry& e, std::string_view type) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", e.name, Escape(e.help, false), e.name, type);
  };
  std::lock_guard lock(mu_);
  for (const auto& entry : entries_) {
    const Entry& e = *entry;
    if (const auto* counter = std::get_if<Counter>(&e.metric)) {
      header(e, "counter");
      out += fmt::format("{} {}\n", e.name, counter->Value());
    } else if (const auto* gauge = std::get_if<Gauge>(&e.metric)) {
      header(e, "gauge");
      out += fmt::format("{} {}\n", e.name, Number(gauge->Value()));
    } else if (const auto* counters = std::get_if<Family<Counter>>(&e.metric)) {
      header(e, "counter");
      counters->ForEach([&](const std::string& value, const Counter& c) {
        out += fmt::format("{}{} {}\n", e.name, Labels(counters->label(), value), c.Value());
      });
    } else if (const auto* gauges = std::get_if<Family<Gauge>>(&e.metric)) {
      header(e, "gauge");
      gauges->ForEach([&](const std::string& value, const Gauge& g) {
        out += fmt::format("{}{} {}\n", e.name, Labels(gauges->label(), value), Number(g.Value()));
      });
    } else if (const auto* histogram = std::get_if<std::unique_ptr<Histogram>>(&e.metric)) {
      header(e, "histogram");
      const Histogram::Snapshot s = (*histogram)->Take();
      const std::vector<double>& bounds = (*histogram)->bounds();
      for (size_t i = 0; i <= bounds.size(); ++i) {
        const std::string le = i < bounds.size() ? Number(bounds[i]) : "+Inf";
        out += fmt::format("{}_bucket{} {}\n", e.name, Labels("le", le), s.cumulative[i]);
      }
      out += fmt::format("{}_sum {}\n{}_count {}\n", e.name, Number(s.sum), e.name, s.count);
    }
  }
  return out;
}

double ProcessStartTimeSeconds() {
  const double now = static_cast<double>(UnixNowMs()) / 1e3;
  // Field 22 of /proc/self/stat: start time in clock ticks since boot; `btime` of /proc/stat:
  // the boot time in Unix seconds.
  absl::StatusOr<std::string> stat = ReadFile("/proc/self/stat");
  std::ifstream proc_stat("/proc/stat");
  if (!stat.ok() || !proc_stat) {
    return now;
  }
  const size_t paren = stat->rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos) {
    return now;
  }
  std::istringstream fields(stat->substr(paren + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  double boot = -1;
  for (std::string key; proc_stat >> key;) {
    if (key == "btime") {
      proc_stat >> boot;
      break;
    }
  }
  const long ticks = sysconf(_SC_CLK_TCK);
  char* end = nullptr;
  const double start_ticks = std::strtod(field.c_str(), &end);
  if (boot < 0 || ticks <= 0 || end == field.c_str()) {
    return now;
  }
  return boot + start_ticks / static_cast<double>(ticks);
}

}  // namespace tune::metrics
