// problem_config's texts, apart from family.cpp (the families' registry), so that the results
// readers link without the families themselves (tests/fuzz/fuzz_results.cpp).
#include "families/problem_config.hpp"

namespace kl {

// A configuration without axes (the row of a family that cannot be used) reads as size 0, as it
// did when every configuration had a size.
std::string problem_config::describe() const {
  const auto s = shape();
  const std::string what =
      s.size() > 1 ? shape_text() : op + " n=" + std::to_string(s.empty() ? 0 : s.front());
  return dtype + (what.empty() || what[0] == ' ' ? "" : " ") + what +
         (input_mode == "exact" ? "" : " (" + input_mode + " inputs)") + named_axes_text();
}

// Also part of the key under which a worker keeps its last problem, so two values of a real axis
// never share inputs.
std::string problem_config::named_axes_text() const {
  std::string out;
  for (const auto& a : axes)
    if (!a.whole()) out += " " + a.name + "=" + axis_text(a.value);
  return out;
}

std::vector<std::uint64_t> problem_config::shape() const {
  std::vector<std::uint64_t> out;
  for (const auto& a : axes)
    if (a.whole()) out.push_back(std::get<std::uint64_t>(a.value));
  return out;
}

std::string problem_config::shape_text() const {
  const auto s = shape();
  std::string out;
  if (s.size() > 1)
    for (auto d : s) out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

bool axis_info::admits(const axis_number& v) const {
  const auto x = as_kind_of(v, default_value);
  return x && !axis_less(*x, min) && !axis_less(max, *x);
}

}  // namespace kl
