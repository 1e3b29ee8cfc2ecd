#include "registry/expression.hpp"

#include <cctype>

namespace kl {
namespace {

// A recursive-descent parser over the grammar
//   expr := term (('+'|'-') term)* ; term := unary (('*'|'/'|'%') unary)*
//   unary := '-' unary | '(' expr ')' | number | identifier
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
  std::int64_t expr() {
    std::int64_t v = term();
    for (;;) {
      if (accept('+')) v += term();
      else if (accept('-')) v -= term();
      else return v;
    }
  }
  std::int64_t term() {
    std::int64_t v = unary();
    for (;;) {
      if (accept('*')) {
        v *= unary();
      } else if (accept('/') || accept('%')) {
        const char op = s_[pos_ - 1];
        const std::int64_t d = unary();
        if (d == 0) fail("division by zero");
        v = op == '/' ? v / d : v % d;
      } else {
        return v;
      }
    }
  }
  std::int64_t unary() {
    if (accept('-')) return -unary();
    if (accept('(')) {
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
};

}  // namespace

std::int64_t evaluate(const std::string& text, const std::map<std::string, std::int64_t>& vars) {
  return parser(text, vars).parse();
}

}  // namespace kl
