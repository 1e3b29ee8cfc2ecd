#pragma once
// The one rule for the text kernlab writes (results files, JSON lines, CSV, tables, pictures,
// generated headers): it is valid UTF-8. Text comes from anywhere (a compiler's message in
// Latin-1, a folder's name, a file name on the command line): a well-formed UTF-8 sequence is
// kept, each byte that is not part of one becomes U+FFFD. The lowest layer: nothing of kernlab.
#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace kl {

/// The length of the well-formed UTF-8 sequence that starts at s[i] (1 for ASCII), or 0 when the
/// byte there starts none: a stray continuation byte, an overlong form, a surrogate, a code point
/// above U+10FFFF, or a sequence cut short.
std::size_t utf8_length_at(std::string_view s, std::size_t i);

/// Whether `s` is valid UTF-8 throughout.
bool is_utf8(std::string_view s);

/// `s` with each byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD.
std::string utf8_valid(std::string_view s);

/// While it lives, what is written to `os` reaches the stream's buffer as valid UTF-8: the rule
/// for what kernlab prints (its tables, --markdown, its messages), whatever the strings in it.
/// Bytes pass as they come; a sequence cut between two writes is held until the next write
/// completes it, and when the guard goes, each byte still held becomes U+FFFD.
class utf8_output {
 public:
  explicit utf8_output(std::ostream& os);
  ~utf8_output();
  utf8_output(const utf8_output&) = delete;
  utf8_output& operator=(const utf8_output&) = delete;

 private:
  class filter;
  std::ostream& os_;
  std::unique_ptr<filter> filter_;
  std::streambuf* original_;
};

}  // namespace kl
