#include "common/cpu_set.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <optional>

#include "common/strings.h"

namespace tune {

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    return cpus;
  }
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) {
      cpus.push_back(cpu);
    }
  }
  return cpus;
}

std::string FormatCpuList(const std::vector<int>& cpus) {
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) {
      ++j;
    }
    out += StrCat(out.empty() ? "" : ",", cpus[i]);
    if (j > i) {
      out += StrCat("-", cpus[j]);
    }
    i = j + 1;
  }
  return out;
}

absl::StatusOr<std::vector<int>> ParseCpuList(std::string_view text) {
  const std::vector<int> allowed = AllowedCpus();
  auto bad = [&](std::string_view what) {
    return absl::InvalidArgumentError(StrCat("CPU list '", text, "': ", what,
                                             "; accepted: CPUs and ranges, e.g. 0-3,6 (this "
                                             "process may use ",
                                             FormatCpuList(allowed), ")"));
  };
  // A whole non-negative number, or nullopt.
  auto number = [](std::string_view s) -> std::optional<int> {
    int value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || value < 0) {
      return std::nullopt;
    }
    return value;
  };
  std::vector<int> cpus;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view part = text.substr(start, comma - start);
    start = comma + 1;
    const size_t dash = part.find('-');
    std::optional<int> first = number(part.substr(0, dash));
    std::optional<int> last =
        dash == std::string_view::npos ? first : number(part.substr(dash + 1));
    if (!first || !last || *last < *first || *last >= CPU_SETSIZE) {
      return bad(StrCat("'", part, "' is not a CPU or a range of CPUs"));
    }
    for (int cpu = *first; cpu <= *last; ++cpu) {
      if (!std::binary_search(allowed.begin(), allowed.end(), cpu)) {
        return bad(StrCat("CPU ", cpu, " is not one this process may run on"));
      }
      cpus.push_back(cpu);
    }
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

absl::Status PinToCpus(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
      return absl::InvalidArgumentError(StrCat("CPU ", cpu, " is out of range"));
    }
    CPU_SET(cpu, &set);
  }
  if (cpus.empty() || sched_setaffinity(0, sizeof(set), &set) != 0) {
    return absl::InvalidArgumentError(StrCat("pinning to CPUs ", FormatCpuList(cpus), ": ",
                                             cpus.empty() ? "no CPU given" : std::strerror(errno)));
  }
  return absl::OkStatus();
}

}  // namespace tune
