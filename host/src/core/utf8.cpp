#include "core/utf8.hpp"

#include <streambuf>

namespace kl {
namespace {

// How many bytes at the end of `s` start a UTF-8 sequence that the next write may complete.
std::size_t unfinished_tail(std::string_view s) {
  for (std::size_t k = 1; k <= 3 && k <= s.size(); ++k) {
    const auto c = static_cast<unsigned char>(s[s.size() - k]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: its lead byte is further back
    const std::size_t len = c >= 0xF5 ? 0 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    return len > k ? k : 0;
  }
  return 0;
}

}  // namespace

class utf8_output::filter : public std::streambuf {
 public:
  explicit filter(std::streambuf* to) : to_(to) {}
  ~filter() override {
    const std::string rest = utf8_valid(held_);
    to_->sputn(rest.data(), static_cast<std::streamsize>(rest.size()));
  }

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    held_.append(s, static_cast<std::size_t>(n));
    const std::size_t ready = held_.size() - unfinished_tail(held_);
    const std::string out = utf8_valid(std::string_view(held_).substr(0, ready));
    held_.erase(0, ready);
    const auto size = static_cast<std::streamsize>(out.size());
    return to_->sputn(out.data(), size) == size ? n : 0;
  }
  int sync() override { return to_->pubsync(); }

 private:
  std::streambuf* to_;
  std::string held_;  ///< the start of a sequence cut by the end of a write
};

utf8_output::utf8_output(std::ostream& os)
    : os_(os), filter_(std::make_unique<filter>(os.rdbuf())), original_(os.rdbuf(filter_.get())) {}

utf8_output::~utf8_output() {
  os_.flush();
  os_.rdbuf(original_);
}

std::size_t utf8_length_at(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = byte(0);
  if (c < 0x80) return 1;
  const std::size_t len = c >= 0xF5 ? 0 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
  if (len == 0 || i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k)
    if ((byte(k) & 0xC0) != 0x80) return 0;
  // The second byte's range rules out overlong forms, surrogates and code points past U+10FFFF.
  const unsigned char c1 = byte(1);
  if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0) || (c == 0xF0 && c1 < 0x90) ||
      (c == 0xF4 && c1 >= 0x90))
    return 0;
  return len;
}

bool is_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_length_at(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

std::string utf8_valid(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t len = utf8_length_at(s, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
      continue;
    }
    out.append(s, i, len);
    i += len;
  }
  return out;
}

}  // namespace kl
