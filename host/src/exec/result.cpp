#include "exec/result.hpp"

namespace kl {

const char* to_string(outcome o) {
  switch (o) {
    case outcome::passed: return "passed";
    case outcome::wrong_result: return "WRONG";
    case outcome::failed: return "FAILED";
    case outcome::skipped: return "skipped";
    case outcome::crashed: return "CRASHED";
    case outcome::timeout: return "TIMEOUT";
    case outcome::suspect: return "SUSPECT";
  }
  return "?";
}

const char* outcome_name(outcome o) {
  switch (o) {
    case outcome::passed: return "passed";
    case outcome::wrong_result: return "wrong_result";
    case outcome::failed: return "failed";
    case outcome::skipped: return "skipped";
    case outcome::crashed: return "crashed";
    case outcome::timeout: return "timeout";
    case outcome::suspect: return "suspect";
  }
  return "?";
}

std::string configuration_key(const std::string& qualified_name, unsigned block,
                              const problem_config& c) {
  // A family with a shape (matmul) has no size of its own (0): the shape says it.
  const bool sized = c.shape.empty() || c.size != 0;
  return qualified_name + " block " + std::to_string(block) + " " + c.dtype + " " + c.op +
         (sized ? " n=" + std::to_string(c.size) : "") +
         (c.shape.empty() ? "" : " " + c.shape_text()) +
         (c.input_mode == "exact" ? "" : " " + c.input_mode) + c.snr_text();
}

const char* to_string(cache_use c) {
  switch (c) {
    case cache_use::off: return "-";
    case cache_use::hit: return "hit";
    case cache_use::miss: return "miss";
  }
  return "?";
}

}  // namespace kl
