// problem_config's texts, apart from family.cpp (the families' registry), so that the results
// readers link without the families themselves (tests/fuzz/fuzz_results.cpp).
#include "families/problem_config.hpp"

#include <cstdio>

namespace kl {

std::string problem_config::describe() const {
  const std::string what = shape.empty() ? op + " n=" + std::to_string(size) : shape_text();
  return dtype + (what.empty() || what[0] == ' ' ? "" : " ") + what +
         (input_mode == "exact" ? "" : " (" + input_mode + " inputs)") + reals_text();
}

// Part of the key under which a worker keeps its last problem, so two values of a real axis never
// share inputs. %.17g would print 0.1 as 0.10000000000000001; %g keeps what was typed for any
// value a command line gives, and values that differ in their seventh digit are not two
// configurations anyone asks for.
std::string problem_config::reals_text() const {
  std::string out;
  for (const auto& [name, value] : reals) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%g", value);
    out += " " + name + "=" + buf;
  }
  return out;
}

std::string problem_config::shape_text() const {
  std::string out;
  for (auto d : shape) out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

}  // namespace kl
