#include "core/json_text.hpp"

#include <stdexcept>

namespace kl {

using nlohmann::json;

json parse_json(std::string_view text) {
  // `depth` is the number of arrays and objects around the one that starts.
  return json::parse(text.begin(), text.end(), [](int depth, json::parse_event_t event, json&) {
    if (depth >= json_max_depth &&
        (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start))
      throw std::runtime_error("arrays and objects nested deeper than " +
                               std::to_string(json_max_depth) + " levels");
    return true;
  });
}

std::string json_text(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace kl
