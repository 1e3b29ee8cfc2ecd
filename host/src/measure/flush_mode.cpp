// The flush mode as text. Kept apart from l2_flush.cpp (NVRTC, the driver) so that the option
// parser links without them: tests/fuzz builds it alone.
#include "measure/l2_flush.hpp"

#include <stdexcept>

namespace kl {

flush_mode parse_flush_mode(const std::string& text) {
  if (text == "none") return flush_mode::none;
  if (text == "read") return flush_mode::read;
  if (text == "write") return flush_mode::write;
  throw std::invalid_argument("flush mode must be read, write or none, not '" + text + "'");
}

const char* to_string(flush_mode m) {
  switch (m) {
    case flush_mode::none: return "none";
    case flush_mode::read: return "read";
    case flush_mode::write: return "write";
  }
  return "?";
}

}  // namespace kl
