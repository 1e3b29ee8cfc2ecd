// Integer expressions in kernel headers ("2 * BLOCK", "BLOCK * TSIZE + 16").
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

namespace kl {

class expression_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Evaluates `text` with + - * / % and parentheses over integer literals and the given variables.
/// Throws expression_error naming the problem (unknown variable, division by zero, syntax).
std::int64_t evaluate(const std::string& text, const std::map<std::string, std::int64_t>& vars);

}  // namespace kl
