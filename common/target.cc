#include "common/target.h"

#include <algorithm>

#include "common/host_cpu.h"
#include "common/strings.h"

namespace tune {
namespace {

// std::isalnum of a plain char is undefined for negative values (non-ASCII bytes): go through
// unsigned char.
bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

constexpr std::string_view kForms =
    "'llvm [-mcpu=<cpu>|native] [-threads=<n>] [-bind=close|spread] "
    "[-libs=openblas,dnnl,<extern kernel>]', "
    "'cuda -arch=sm_<nn> [-libs=cublas,cudnn]' or "
    "'rocm -mcpu=gfx<nnn> [-code-object-version=4|5] [-libs=rocblas,hipblaslt,miopen]'";

}  // namespace

absl::Status InvalidTarget(std::string_view text, std::string_view what) {
  return absl::InvalidArgumentError(
      StrCat("target '", text, "': ", what, "; accepted forms: ", kForms));
}

namespace {

absl::Status Invalid(std::string_view text, std::string_view what) {
  return InvalidTarget(text, what);
}

}  // namespace

std::string_view TargetKindName(TargetKind kind) {
  switch (kind) {
    case TargetKind::kLlvm:
      return "llvm";
    case TargetKind::kCuda:
      return "cuda";
    case TargetKind::kRocm:
      return "rocm";
  }
  return "?";
}

absl::StatusOr<Target> Target::Parse(std::string_view text) {
  std::vector<std::string_view> words = Split(text, ' ', /*skip_empty=*/true);
  if (words.empty()) {
    return Invalid(text, "empty target");
  }
  Target t;
  if (words[0] == "llvm") {
    t.kind = TargetKind::kLlvm;
    t.cpu = "native";
  } else if (words[0] == "cuda") {
    t.kind = TargetKind::kCuda;
  } else if (words[0] == "rocm") {
    t.kind = TargetKind::kRocm;
  } else {
    return Invalid(text, StrCat("target kind '", words[0], "' is unknown (llvm, cuda, rocm)"));
  }
  bool seen_cpu = false, seen_threads = false, seen_libs = false, seen_cov = false,
       seen_bind = false;
  for (size_t i = 1; i < words.size(); ++i) {
    std::string_view word = words[i];
    auto kv = SplitOnce(word, '=');
    if (!kv || kv->first.size() < 2 || kv->first[0] != '-' || kv->second.empty()) {
      return Invalid(text, StrCat("option '", word, "' is not of the form -key=value"));
    }
    std::string_view key = kv->first.substr(1), value = kv->second;
    bool cpu_key = (t.kind == TargetKind::kCuda) ? key == "arch" : key == "mcpu";
    if (cpu_key) {
      if (seen_cpu) {
        return Invalid(text, StrCat("option -", key, " is given twice"));
      }
      seen_cpu = true;
      if (t.kind == TargetKind::kCuda && !(value.substr(0, 3) == "sm_" && value.size() > 3 &&
                                           std::all_of(value.begin() + 3, value.end(), IsAlnum))) {
        return Invalid(text, StrCat("-arch=", value, " is not of the form sm_<nn>"));
      }
      if (t.kind == TargetKind::kRocm && value.substr(0, 3) != "gfx") {
        return Invalid(text, StrCat("-mcpu=", value, " is not of the form gfx<nnn>"));
      }
      t.cpu = std::string(value);
    } else if (key == "threads" && t.kind == TargetKind::kLlvm) {
      if (seen_threads) {
        return Invalid(text, "option -threads is given twice");
      }
      seen_threads = true;
      std::optional<int64_t> threads = ParseInt(value);
      if (!threads || *threads < 1 || *threads > 4096) {
        return Invalid(text, StrCat("-threads=", value, " is not an integer in [1, 4096]"));
      }
      t.threads = static_cast<int>(*threads);
    } else if (key == "bind" && t.kind == TargetKind::kLlvm) {
      if (seen_bind) {
        return Invalid(text, "option -bind is given twice");
      }
      seen_bind = true;
      if (value == "none") {
        t.bind = ThreadBinding::kNone;
      } else if (value == "close") {
        t.bind = ThreadBinding::kClose;
      } else if (value == "spread") {
        t.bind = ThreadBinding::kSpread;
      } else {
        return Invalid(text,
                       StrCat("-bind=", value, " is not a thread binding (none, close, spread)"));
      }
    } else if (key == "code-object-version" && t.kind == TargetKind::kRocm) {
      if (seen_cov) {
        return Invalid(text, "option -code-object-version is given twice");
      }
      seen_cov = true;
      std::optional<int64_t> version = ParseInt(value);
      if (!version || (*version != 4 && *version != 5)) {
        return Invalid(text, StrCat("-code-object-version=", value,
                                    " is not a supported HSA code object version (4, 5)"));
      }
      t.code_object_version = static_cast<int>(*version);
    } else if (key == "libs") {
      if (seen_libs) {
        return Invalid(text, "option -libs is given twice");
      }
      seen_libs = true;
      for (std::string_view lib : Split(value, ',')) {
        // Syntax only: which names exist is the catalog's to say (Catalog::CheckTarget).
        if (lib.empty() ||
            !std::all_of(lib.begin(), lib.end(), [](char c) { return IsAlnum(c) || c == '_'; })) {
          return Invalid(text, StrCat("library name '", lib,
                                      "' is not a name (letters, digits and '_', e.g. dnnl)"));
        }
        t.libs.emplace_back(lib);
      }
      std::sort(t.libs.begin(), t.libs.end());
      t.libs.erase(std::unique(t.libs.begin(), t.libs.end()), t.libs.end());
    } else {
      return Invalid(text, StrCat("option -", key, " is unknown for ", TargetKindName(t.kind)));
    }
  }
  if (t.kind != TargetKind::kLlvm && !seen_cpu) {
    return Invalid(text, t.kind == TargetKind::kCuda ? "option -arch is required"
                                                     : "option -mcpu is required");
  }
  return t;
}

std::string_view ThreadBindingName(ThreadBinding binding) {
  switch (binding) {
    case ThreadBinding::kNone:
      return "none";
    case ThreadBinding::kClose:
      return "close";
    case ThreadBinding::kSpread:
      return "spread";
  }
  return "none";
}

std::string Target::ToString() const {
  std::string out(TargetKindName(kind));
  switch (kind) {
    case TargetKind::kLlvm:
      StrAppend(&out, " -mcpu=", cpu, " -threads=", threads);
      if (bind != ThreadBinding::kNone) {
        StrAppend(&out, " -bind=", ThreadBindingName(bind));
      }
      break;
    case TargetKind::kCuda:
      StrAppend(&out, " -arch=", cpu);
      break;
    case TargetKind::kRocm:
      StrAppend(&out, " -mcpu=", cpu);
      if (code_object_version != kDefaultCodeObjectVersion) {
        StrAppend(&out, " -code-object-version=", code_object_version);
      }
      break;
  }
  if (!libs.empty()) {
    StrAppend(&out, " -libs=", Join(libs, ","));
  }
  return out;
}

Target Target::Resolved() const {
  Target t = *this;
  if (t.kind == TargetKind::kLlvm && t.cpu == "native") {
    t.cpu = GetHostCpu().name;
  }
  return t;
}

std::string Target::DeviceKey() const {
  Target t = Resolved();
  switch (t.kind) {
    case TargetKind::kLlvm:
      return StrCat("cpu/x86_64/", t.cpu);
    case TargetKind::kCuda:
      // Arch-specific targets (sm_90a) run on the devices of their base arch, and only there.
      if (t.cpu.size() > 3 && t.cpu.back() == 'a') {
        return StrCat("cuda/", std::string_view(t.cpu).substr(0, t.cpu.size() - 1));
      }
      return StrCat("cuda/", t.cpu);
    case TargetKind::kRocm:
      return StrCat("rocm/", t.cpu);
  }
  return "";
}

bool Target::HasLib(std::string_view lib) const {
  return std::find(libs.begin(), libs.end(), lib) != libs.end();
}

}  // namespace tune
