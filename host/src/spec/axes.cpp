// The kinds of an axis' value: their text in keys, their conversion, their order.
#include "spec/axes.hpp"

#include <cmath>
#include <cstdio>

namespace kl {

// %.17g would print 0.1 as 0.10000000000000001; %g keeps what was typed for any value a command
// line gives, and values that differ in their seventh digit are not two configurations anyone
// asks for.
std::string axis_text(const axis_number& v) {
  if (const auto* w = std::get_if<std::uint64_t>(&v)) return std::to_string(*w);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%g", std::get<double>(v));
  return buf;
}

std::optional<axis_number> as_kind_of(const axis_number& v, const axis_number& kind) {
  if (v.index() == kind.index()) return v;
  if (std::holds_alternative<double>(kind)) return static_cast<double>(std::get<std::uint64_t>(v));
  const double d = std::get<double>(v);
  // 2^64 and beyond, or a fraction, is no size.
  if (!(d >= 0 && d < 18446744073709551616.0) || std::floor(d) != d) return std::nullopt;
  return static_cast<std::uint64_t>(d);
}

bool axis_less(const axis_number& a, const axis_number& b) {
  const auto bb = as_kind_of(b, a);
  return bb && a < *bb;
}

axis_choice axis_choice::sizes(const std::vector<std::uint64_t>& values) {
  axis_choice c{"--size", "", {}, false};
  for (auto w : values) c.points.push_back({w});
  return c;
}

axis_choice axis_choice::shapes(const std::vector<std::vector<std::uint64_t>>& values) {
  axis_choice c{"--shape", "", {}, false};
  for (const auto& s : values) c.points.emplace_back(s.begin(), s.end());
  return c;
}

axis_choice axis_choice::named(const std::string& name, const std::vector<axis_number>& values) {
  axis_choice c{"--axis", name, {}, false};
  for (const auto& v : values) c.points.push_back({v});
  return c;
}

}  // namespace kl
