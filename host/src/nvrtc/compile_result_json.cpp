#include "nvrtc/compile_result_json.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kl::nvrtc {

using nlohmann::json;

json to_json(const compile_result& r) {
  json resources = json::object();
  for (const auto& [expr, u] : r.resources)
    resources[expr] = {u.registers, u.static_shared_bytes, u.stack_frame_bytes, u.spill_store_bytes,
                       u.spill_load_bytes};
  json diagnostics = json::array();
  for (const auto& d : r.diagnostics)
    diagnostics.push_back({d.file, d.line, d.severity, d.message, d.context});
  return {{"path", r.path},
          {"cubin", json::binary(std::vector<std::uint8_t>(r.cubin.begin(), r.cubin.end()))},
          {"lowered_names", r.lowered_names},
          {"resources", resources},
          {"log", r.log},
          {"options", r.options},
          {"diagnostics", diagnostics},
          {"compile_ms", r.milliseconds}};
}

compile_result compile_result_from_json(const json& j) {
  compile_result r;
  r.path = j.at("path").get<std::string>();
  const auto& cubin = j.at("cubin").get_binary();
  r.cubin.assign(cubin.begin(), cubin.end());
  r.lowered_names = j.at("lowered_names").get<std::map<std::string, std::string>>();
  for (const auto& [expr, u] : j.at("resources").items())
    r.resources[expr] = {u.at(0).get<int>(), u.at(1).get<long>(), u.at(2).get<long>(),
                         u.at(3).get<long>(), u.at(4).get<long>()};
  r.log = j.at("log").get<std::string>();
  r.options = j.at("options").get<std::vector<std::string>>();
  for (const auto& d : j.at("diagnostics"))
    // The source line and caret came later: an entry stored before has none.
    r.diagnostics.push_back({d.at(0).get<std::string>(), d.at(1).get<int>(),
                             d.at(2).get<std::string>(), d.at(3).get<std::string>(),
                             d.size() > 4 ? d.at(4).get<std::string>() : std::string()});
  r.milliseconds = j.at("compile_ms").get<double>();
  return r;
}

}  // namespace kl::nvrtc
