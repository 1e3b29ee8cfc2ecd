// Two text rules of a kernel file's header, shared by its parser (spec/metadata.cpp), its keys'
// readers (spec/header_keys.cpp) and the tunables' expansion (spec/tunables.cpp): trimming a
// value, and reading an integer of a header.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

namespace kl::header_text {

inline std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// An integer of a header: all of `t`, within +-2^40 (as tunable values are).
inline bool header_integer(const std::string& t, std::int64_t& out) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(t, &used);
  } catch (const std::exception&) {
    return false;
  }
  if (t.empty() || used != t.size() || v < -(1LL << 40) || v > (1LL << 40)) return false;
  out = static_cast<std::int64_t>(v);
  return true;
}

}  // namespace kl::header_text
