#include "spec/expression.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

namespace kl {
namespace {

// A recursive-descent parser over the grammar
//   expr := term (('+'|'-') term)* ; term := unary (('*'|'/'|'%') unary)*
//   unary := '-' unary | '(' expr ')' | number | identifier | 'sqrt' '(' expr ')'
//          | ('min' | 'max' | 'ceil_div') '(' expr ',' expr ')'
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
  [[noreturn]] void overflow() const { fail("the value does not fit in 64 bits"); }
  std::int64_t add(std::int64_t a, std::int64_t b) const {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) overflow();
    return r;
  }
  std::int64_t sub(std::int64_t a, std::int64_t b) const {
    std::int64_t r = 0;
    if (__builtin_sub_overflow(a, b, &r)) overflow();
    return r;
  }
  std::int64_t mul(std::int64_t a, std::int64_t b) const {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) overflow();
    return r;
  }
  std::int64_t expr() {
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
        if (d == 0) fail("division by zero");
        if (d == -1)
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
        if (x < 0) fail("sqrt of a negative value");
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
        if (b == 0) fail("ceil_div by zero");
        if (a == INT64_MIN && b == -1)
          fail("ceil_div(" + std::to_string(a) + ", -1) does not fit in 64 bits");
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
};

}  // namespace

std::int64_t evaluate(const std::string& text, const std::map<std::string, std::int64_t>& vars) {
  return parser(text, vars).parse();
}

}  // namespace kl
