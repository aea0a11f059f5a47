#include "common/fingerprint.h"

#include <algorithm>

#include "common/strings.h"

namespace tune {
namespace {

bool NeedsQuotes(std::string_view value) {
  return value.find_first_of(" '\\\t") != std::string_view::npos;
}

void AppendValue(std::string* out, std::string_view value) {
  if (!NeedsQuotes(value)) {
    out->append(value);
    return;
  }
  out->push_back('\'');
  for (char c : value) {
    if (c == '\'' || c == '\\') {
      out->push_back('\\');
    }
    out->push_back(c);
  }
  out->push_back('\'');
}

// Splits `text` at spaces outside single quotes; quotes are removed and escapes resolved.
std::vector<std::string> Tokens(std::string_view text) {
  std::vector<std::string> tokens;
  std::string current;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted && c == '\\' && i + 1 < text.size()) {
      current.push_back(text[++i]);
    } else if (c == '\'') {
      quoted = !quoted;
      any = true;
    } else if (c == ' ' && !quoted) {
      if (any || !current.empty()) {
        tokens.push_back(std::move(current));
        current.clear();
      }
      any = false;
    } else {
      current.push_back(c);
      any = true;
    }
  }
  if (any || !current.empty()) {
    tokens.push_back(std::move(current));
  }
  return tokens;
}

}  // namespace

Fingerprint::Fingerprint(std::string device_key) : device_key_(std::move(device_key)) {
  fields_.emplace_back("fp", std::string(kVersion));
}

Fingerprint Fingerprint::Parse(std::string_view text) {
  std::vector<std::string> tokens = Tokens(text);
  Fingerprint out(tokens.empty() ? "" : tokens.front());
  out.fields_.clear();
  std::string loose;  // tokens that are not name=value
  for (size_t i = 1; i < tokens.size(); ++i) {
    const size_t eq = tokens[i].find('=');
    if (eq == std::string::npos || eq == 0) {
      StrAppend(&loose, loose.empty() ? "" : " ", tokens[i]);
      continue;
    }
    out.Set(std::string_view(tokens[i]).substr(0, eq), std::string_view(tokens[i]).substr(eq + 1));
  }
  if (!loose.empty()) {
    out.Set("text", loose);
  }
  return out;
}

void Fingerprint::Set(std::string_view name, std::string_view value) {
  auto it = std::find_if(fields_.begin(), fields_.end(),
                         [&](const auto& field) { return field.first == name; });
  if (value.empty()) {
    if (it != fields_.end()) {
      fields_.erase(it);
    }
    return;
  }
  if (it != fields_.end()) {
    it->second = value;
  } else {
    fields_.emplace_back(name, value);
  }
}

std::optional<std::string> Fingerprint::Get(std::string_view name) const {
  for (const auto& [field, value] : fields_) {
    if (field == name) {
      return value;
    }
  }
  return std::nullopt;
}

bool Fingerprint::structured() const { return Get("fp") == kVersion; }

std::string Fingerprint::ToString() const {
  std::string out = device_key_;
  for (const auto& [name, value] : fields_) {
    StrAppend(&out, out.empty() ? "" : " ", name, "=");
    AppendValue(&out, value);
  }
  return out;
}

std::string Fingerprint::DescribeChangeFrom(const Fingerprint& older) const {
  std::vector<std::string> changes;
  if (structured() && !older.structured()) {
    changes.emplace_back("structured (was free text)");
  }
  if (device_key_ != older.device_key_) {
    changes.push_back(StrCat("device ", older.device_key_, " -> ", device_key_));
  }
  for (const auto& [name, value] : fields_) {
    if (name == "fp") {
      continue;
    }
    std::optional<std::string> before = older.Get(name);
    if (!before) {
      changes.push_back(StrCat(name, " new (", value, ")"));
    } else if (*before != value) {
      changes.push_back(StrCat(name, " ", *before, " -> ", value));
    }
  }
  for (const auto& [name, value] : older.fields_) {
    if (name != "fp" && !Get(name)) {
      changes.push_back(StrCat("no longer ", name, " (was ", value, ")"));
    }
  }
  return Join(changes, ", ");
}

std::string UnverifiedNote(const std::string& device_key, const std::string& newest,
                           const std::string& measured) {
  return StrCat("; UNVERIFIED: measured under an older fingerprint of ", device_key, " (since: ",
                Fingerprint::Parse(newest).DescribeChangeFrom(Fingerprint::Parse(measured)),
                "); `tune-client reverify` re-measures it on workers of the newest");
}

}  // namespace tune
