// The flush mode and the stopping rule as text. Kept apart from l2_flush.cpp and timing.cpp
// (NVRTC, the driver) so that the option parser links without them: tests/fuzz builds it alone.
#include "measure/l2_flush.hpp"
#include "measure/timing.hpp"

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

const char* to_string(stop_rule r) { return r == stop_rule::ci ? "ci" : "stdrel"; }

stop_rule parse_stop_rule(const std::string& s) {
  if (s == "ci") return stop_rule::ci;
  if (s == "stdrel") return stop_rule::stdrel;
  throw std::invalid_argument("'" + s + "' is not a stopping rule (ci or stdrel)");
}

const char* to_string(launch_mode m) { return m == launch_mode::graph ? "graph" : "stream"; }

launch_mode parse_launch_mode(const std::string& s) {
  if (s == "graph") return launch_mode::graph;
  if (s == "stream") return launch_mode::stream;
  throw std::invalid_argument("launch mode must be graph or stream, not '" + s + "'");
}

}  // namespace kl
