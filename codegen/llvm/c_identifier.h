// C identifiers: the names of the functions tune emits (kernels, host stubs, preparations).
#pragma once

#include <cctype>
#include <string_view>

namespace tune {

/// True for a C identifier ([A-Za-z_][A-Za-z0-9_]*).
inline bool IsCIdentifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) {
    return false;
  }
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
      return false;
    }
  }
  return true;
}

}  // namespace tune
