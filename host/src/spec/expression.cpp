#include "spec/expression.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

namespace kl {
namespace {

// A recursive-descent parser over the grammar, C's precedence, evaluated as it parses:
//   expr := or ('?' expr ':' expr)?     or := and ('||' and)*     and := cmp ('&&' cmp)*
//   cmp := add (('<' | '<=' | '>' | '>=' | '==' | '!=') add)?
//   add := term (('+' | '-') term)*     term := unary (('*' | '/' | '%') unary)*
//   unary := '-' unary | '!' unary | '(' expr ')' | number | identifier
//          | 'sqrt' '(' expr ')' | ('min' | 'max' | 'ceil_div') '(' expr ',' expr ')'
// Comparisons and logic give 1 or 0; ?:, && and || do not evaluate (do not fail in) the side
// they do not take.
// sqrt is the integer square root (rounded down), so that a square tile can be named from the
// block's thread count: TILE = sqrt(BLOCK).
class parser {
 public:
  parser(const std::string& text, const std::map<std::string, std::int64_t>& vars)
      : s_(text), vars_(vars) {}

  std::int64_t parse() {
    std::int64_t v = expr();
    skip_space();
    if (pos_ != s_.size()) fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw expression_error("in expression '" + s_ + "': " + why);
  }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  // Every step is checked: a header's expression is user input, and a value that does not fit in
  // 64 bits is an error to report, not undefined behaviour (found by tests/fuzz).
  // In a branch that is not taken (the other side of ?:, the right of a decided && or ||) an
  // arithmetic error is no error: the branch is parsed, and its value ignored.
  [[noreturn]] void overflow() const { fail("the value does not fit in 64 bits"); }
  void arithmetic_error(const std::string& why) const {
    if (skipping_ == 0) fail(why);
  }
  std::int64_t add(std::int64_t a, std::int64_t b) const {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) arithmetic_error("the value does not fit in 64 bits");
    return r;
  }
  std::int64_t sub(std::int64_t a, std::int64_t b) const {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) arithmetic_error("the value does not fit in 64 bits");
    return r;
  }
  std::int64_t mul(std::int64_t a, std::int64_t b) const {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) arithmetic_error("the value does not fit in 64 bits");
    return r;
  }
  // A two-character operator ("<=", "&&"), never the first character of a longer one.
  bool accept2(const char* op) {
    skip_space();
    if (pos_ + 1 < s_.size() && s_[pos_] == op[0] && s_[pos_ + 1] == op[1]) {
      pos_ += 2;
      return true;
    }
    return false;
  }
  // The character after the next one is `c` ("!=" is not a '!').
  bool peek2(char c) {
    skip_space();
    return pos_ + 1 < s_.size() && s_[pos_ + 1] == c;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  // Parses `next` with arithmetic errors ignored when `taken` is false.
  template <typename Next>
  std::int64_t branch(bool taken, Next next) {
    if (!taken) ++skipping_;
    const std::int64_t v = next();
    if (!taken) --skipping_;
    return taken ? v : 0;
  }
  std::int64_t expr() {
    const std::int64_t c = logical_or();
    if (!accept('?')) return c;
    nesting guard(*this);  // "a ? b : c ? d : ..." recurses once per '?'
    const std::int64_t a = branch(c != 0, [&] { return expr(); });
    if (!accept(':')) fail("missing ':' of '?'");
    const std::int64_t b = branch(c == 0, [&] { return expr(); });
    return c != 0 ? a : b;
  }
  std::int64_t logical_or() {
    std::int64_t v = logical_and();
    while (accept2("||")) {
      const bool decided = v != 0;
      const std::int64_t r = branch(!decided, [&] { return logical_and(); });
      v = decided || r != 0 ? 1 : 0;
    }
    return v;
  }
  std::int64_t logical_and() {
    std::int64_t v = comparison();
    while (accept2("&&")) {
      const bool decided = v == 0;
      const std::int64_t r = branch(!decided, [&] { return comparison(); });
      v = !decided && r != 0 ? 1 : 0;
    }
    return v;
  }
  std::int64_t comparison() {
    const std::int64_t a = additive();
    if (accept2("<=")) return a <= additive() ? 1 : 0;
    if (accept2(">=")) return a >= additive() ? 1 : 0;
    if (accept2("==")) return a == additive() ? 1 : 0;
    if (accept2("!=")) return a != additive() ? 1 : 0;
    if (accept('<')) return a < additive() ? 1 : 0;
    if (accept('>')) return a > additive() ? 1 : 0;
    if (peek('=')) fail("'=' is not an operator (compare with '==')");
    return a;
  }
  std::int64_t additive() {
    std::int64_t v = term();
    for (;;) {
      if (accept('+'))
        v = add(v, term());
      else if (accept('-'))
        v = sub(v, term());
      else
        return v;
    }
  }
  std::int64_t term() {
    std::int64_t v = unary();
    for (;;) {
      if (accept('*')) {
        v = mul(v, unary());
      } else if (accept('/') || accept('%')) {
        const char op = s_[pos_ - 1];
        const std::int64_t d = unary();
        if (d == 0) {
          arithmetic_error("division by zero");
          v = 0;
        } else if (d == -1)
          v = op == '/' ? sub(0, v) : 0;  // INT64_MIN / -1 does not fit; % is 0
        else
          v = op == '/' ? v / d : v % d;
      } else {
        return v;
      }
    }
  }
  // '(' and unary '-' recurse: a limit keeps a long run of them from overflowing the stack.
  struct nesting {
    explicit nesting(parser& p) : p_(p) {
      if (++p_.depth_ > max_depth)
        p_.fail("nested more than " + std::to_string(max_depth) + " deep");
    }
    ~nesting() { --p_.depth_; }
    parser& p_;
  };
  static constexpr int max_depth = 100;
  std::int64_t unary() {
    if (accept('-')) {
      nesting guard(*this);
      return sub(0, unary());
    }
    if (!peek2('=') && accept('!')) {
      nesting guard(*this);
      return unary() == 0 ? 1 : 0;
    }
    if (accept('(')) {
      nesting guard(*this);
      std::int64_t v = expr();
      if (!accept(')')) fail("missing ')'");
      return v;
    }
    skip_space();
    if (pos_ >= s_.size()) fail("unexpected end");
    const char c = s_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::int64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        v = v * 10 + (s_[pos_++] - '0');
        if (v > (std::int64_t{1} << 40)) fail("number too large");
      }
      return v;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
        ++pos_;
      const std::string name = s_.substr(start, pos_ - start);
      if (name == "sqrt" && !vars_.count(name) && accept('(')) {
        nesting guard(*this);
        const std::int64_t x = expr();
        if (!accept(')')) fail("missing ')' after sqrt's argument");
        if (x < 0) {
          arithmetic_error("sqrt of a negative value");
          return 0;
        }
        // The double's estimate, corrected to the exact floor (comparisons by division: no
        // overflow).
        auto r = static_cast<std::int64_t>(std::sqrt(static_cast<double>(x)));
        while (r > 0 && r > x / r) --r;
        while ((r + 1) <= x / (r + 1)) ++r;
        return r;
      }
      if ((name == "min" || name == "max" || name == "ceil_div") && !vars_.count(name) &&
          accept('(')) {
        nesting guard(*this);
        const std::int64_t a = expr();
        if (!accept(',')) fail("missing ',' between " + name + "'s two arguments");
        const std::int64_t b = expr();
        if (!accept(')')) fail("missing ')' after " + name + "'s arguments");
        if (name == "min") return std::min(a, b);
        if (name == "max") return std::max(a, b);
        if (b == 0) {
          arithmetic_error("ceil_div by zero");
          return 0;
        }
        if (a == INT64_MIN && b == -1) {
          arithmetic_error("ceil_div(" + std::to_string(a) + ", -1) does not fit in 64 bits");
          return 0;
        }
        // Rounds towards plus infinity for either sign.
        const std::int64_t q = a / b;
        return q + ((a % b != 0) && ((a < 0) == (b < 0)) ? 1 : 0);
      }
      auto it = vars_.find(name);
      if (it == vars_.end()) {
        std::string known;
        for (const auto& kv : vars_) known += (known.empty() ? "" : ", ") + kv.first;
        fail("unknown variable '" + name + "' (known: " + known + ")");
      }
      return it->second;
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }

  const std::string& s_;
  const std::map<std::string, std::int64_t>& vars_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  int skipping_ = 0;  // > 0 inside a branch that is not taken
};

}  // namespace

std::int64_t evaluate(const std::string& text, const std::map<std::string, std::int64_t>& vars) {
  return parser(text, vars).parse();
}

std::int64_t evaluate_as(const std::string& text, const std::map<std::string, std::int64_t>& vars,
                         const std::string& what, const std::string& where) {
  try {
    return evaluate(text, vars);
  } catch (const expression_error& e) {
    throw std::invalid_argument(what + ": " + e.what() + " (" + where + ")");
  }
}

}  // namespace kl
