#include "record/result.hpp"

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
  return qualified_name + " block " + std::to_string(block) + " " + c.describe();
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
