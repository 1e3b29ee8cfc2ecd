// Small text helpers of kernlab's terminal tables (report/table.cpp, compile_tables.cpp,
// list.cpp): the first line of a message, a name column's width, a register range, a local time,
// milliseconds and bytes for people.
#pragma once

#include "nvrtc/compiler.hpp"
#include "report/text_table.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>

namespace kl::text {

// A row's block size, "-" for a variant without one.
inline std::string block_text(unsigned b) { return b == 0 ? "-" : std::to_string(b); }

inline std::string first_line(const std::string& s) {
  const auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

// The width of the name column: the longest name, at least `floor`.
template <typename Range, typename Name>
std::size_t name_width(const Range& rows, Name name, std::size_t floor = 24) {
  std::size_t w = floor;
  for (const auto& r : rows) w = std::max(w, name(r).size() + 2);
  return w;
}

// "12", or "24-26" when the instantiations differ; "-" without a resource report.
inline std::string register_range(const nvrtc::compile_result& r) {
  int rmin = 1 << 30, rmax = 0;
  for (const auto& kv : r.resources) {
    rmin = std::min(rmin, kv.second.registers);
    rmax = std::max(rmax, kv.second.registers);
  }
  if (rmax == 0) return "-";
  return rmin == rmax ? std::to_string(rmax) : std::to_string(rmin) + "-" + std::to_string(rmax);
}

inline std::string local_time(std::time_t t) {
  char buf[32];
  std::tm tm{};
  localtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

// Milliseconds with a decimal where it matters: a cache hit takes a fraction of one.
inline std::string milliseconds(double ms) { return fmt(ms < 10 ? "%.1f" : "%.0f", ms); }

inline std::string human_bytes(double b) {
  if (b >= 1073741824.0) return fmt("%.2f GiB", b / 1073741824.0);
  if (b >= 1048576.0) return fmt("%.2f MiB", b / 1048576.0);
  if (b >= 1024.0) return fmt("%.1f KiB", b / 1024.0);
  return fmt("%.0f B", b);
}

}  // namespace kl::text
