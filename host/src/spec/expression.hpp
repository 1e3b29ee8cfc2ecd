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

/// evaluate(), for an expression of a description (family.toml, a kernel header) at a
/// configuration: an error is std::invalid_argument "WHAT: in expression '...': why (WHERE)",
/// `what` saying which expression and at what configuration, `where` its file:line.
std::int64_t evaluate_as(const std::string& text, const std::map<std::string, std::int64_t>& vars,
                         const std::string& what, const std::string& where);

}  // namespace kl
