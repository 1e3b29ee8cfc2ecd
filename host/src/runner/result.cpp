#include "runner/result.hpp"

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

}  // namespace kl
