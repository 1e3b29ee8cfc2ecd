// problem_config's texts, apart from family.cpp (the families' registry), so that the results
// readers link without the families themselves (tests/fuzz/fuzz_results.cpp).
#include "families/family.hpp"

#include <cstdio>

namespace kl {

std::string problem_config::describe() const {
  const std::string what = shape.empty() ? op + " n=" + std::to_string(size) : shape_text();
  return dtype + (what.empty() || what[0] == ' ' ? "" : " ") + what +
         (input_mode == "exact" ? "" : " (" + input_mode + " inputs)") + snr_text();
}

// qam256 is the only family with an SNR; its op is "demap". The text is part of the key under
// which a worker keeps its last problem, so two SNRs never share inputs.
std::string problem_config::snr_text() const {
  if (op != "demap") return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, " snr=%g dB", snr_db);
  return buf;
}

std::string problem_config::shape_text() const {
  std::string out;
  for (auto d : shape) out += (out.empty() ? "" : "x") + std::to_string(d);
  return out;
}

}  // namespace kl
