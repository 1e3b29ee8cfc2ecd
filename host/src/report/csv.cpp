#include "report/exports.hpp"

#include "core/utf8.hpp"
#include "record/record_json.hpp"

#include <sstream>

namespace kl {
namespace {

// A text field: valid UTF-8 (core/utf8.hpp), quoted when it holds a separator, a quote or a line
// break (RFC 4180).
std::string field(const std::string& text) {
  const std::string s = utf8_valid(text);
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string number(const nlohmann::json& j) {
  if (j.is_null()) return "";
  std::ostringstream os;
  os.precision(10);
  if (j.is_number_float())
    os << j.get<double>();
  else
    os << j.dump();
  return os.str();
}

// "4095x4097x1023"; "" for a 1-D configuration.
// "SNR_DB=20" for a configuration with real-valued axes, "" otherwise.
std::string real_axes_text(const nlohmann::json& config) {
  const std::string text = config_from_json(config).named_axes_text();
  return text.empty() ? text : text.substr(1);
}

std::string shape_text(const nlohmann::json& shape) {
  std::string out;
  for (const auto& d : shape)
    out += (out.empty() ? "" : "x") + std::to_string(d.get<std::uint64_t>());
  return out;
}

// The profile's columns (empty for a record without one): kernels, the four figures, then the
// two largest stalls as name and cycles.
std::string profile_fields(const nlohmann::json& r) {
  const nlohmann::json p = r.value("profile", nlohmann::json());
  if (p.is_null()) return ",,,,,,,,";
  std::string out = number(p.at("kernels"));
  for (const char* key : {"dram_pct", "occupancy_pct", "l2_hit_pct", "sm_pct"})
    out += "," + number(p.at(key));
  const auto& stalls = p.at("stalls");
  for (std::size_t i = 0; i < 2; ++i)
    out += i < stalls.size() ? "," + field(stalls[i].at("reason").get<std::string>()) + "," +
                                   number(stalls[i].at("cycles"))
                             : std::string(",,");
  return out;
}

}  // namespace

void write_csv(const nlohmann::json& results, std::ostream& os) {
  os << "family,variant,origin,block,dtype,op,size,input,seed,outcome,median_us,min_us,max_us,"
        "mean_us,noise,samples,timed_out,flush,gbps,percent_of_peak,baseline,x_baseline,"
        "registers,occupancy,compile_ms,load_ms,validate_ms,expected,got,message,real_axes,"
        "blocks_per_sm,shape,tflops,percent_of_fp32_peak,ci_low_us,ci_high_us,ci_half_width,"
        "stop_rule,uj_per_op,watts,energy_method,energy_error,profile_kernels,profile_dram_pct,"
        "profile_occupancy_pct,profile_l2_hit_pct,profile_sm_pct,profile_stall1,"
        "profile_stall1_cycles,profile_stall2,profile_stall2_cycles,gpu_ordinal,gpu_uuid,gpu_"
        "name,placements,placement_spread,launch\n";
  for (const auto& r : results.at("records")) {
    const auto& v = r.at("variant");
    const auto& c = r.at("config");
    const auto& t = r.at("timing");
    auto timing = [&](const char* key) { return t.is_null() ? std::string() : number(t.at(key)); };
    os << field(v.at("family").get<std::string>()) << ',' << field(v.at("name").get<std::string>())
       << ',' << field(v.at("origin").get<std::string>()) << ',' << r.at("block").get<unsigned>()
       << ',' << field(c.at("dtype").get<std::string>()) << ','
       << field(c.at("op").get<std::string>()) << ',' << c.at("size").get<std::uint64_t>() << ','
       << field(c.at("input").get<std::string>()) << ',' << c.at("seed").get<std::uint64_t>() << ','
       << r.at("outcome").get<std::string>() << ',' << timing("median_us") << ','
       << timing("min_us") << ',' << timing("max_us") << ',' << timing("mean_us") << ','
       << timing("noise") << ',' << timing("samples") << ',' << timing("timed_out") << ','
       << (t.is_null() ? "" : t.at("flush").get<std::string>()) << ','
       << number(r.value("gbps", nlohmann::json())) << ','
       << number(r.value("percent_of_peak", nlohmann::json())) << ','
       << field(r.value("baseline", nlohmann::json()).is_null()
                    ? ""
                    : r.at("baseline").get<std::string>())
       << ',' << number(r.value("x_baseline", nlohmann::json())) << ','
       << (r.at("resources").is_null() ? "" : number(r.at("resources").at("registers"))) << ','
       << (r.at("occupancy").is_null() ? "" : number(r.at("occupancy").at("fraction"))) << ','
       << number(r.at("compile_ms")) << ',' << number(r.at("load_ms")) << ','
       << number(r.at("validate_ms")) << ',' << field(r.at("expected").get<std::string>()) << ','
       << field(r.at("got").get<std::string>()) << ',' << field(r.at("message").get<std::string>())
       << ',' << field(real_axes_text(c)) << ','
       << (r.at("occupancy").is_null() ? "" : number(r.at("occupancy").at("blocks_per_sm"))) << ','
       << shape_text(c.at("shape")) << ',' << number(r.value("tflops", nlohmann::json())) << ','
       << number(r.value("percent_of_fp32_peak", nlohmann::json())) << ',' << timing("ci_low_us")
       << ',' << timing("ci_high_us") << ',' << timing("ci_half_width") << ','
       << (t.is_null() ? "" : t.at("stop_rule").get<std::string>()) << ',';
    // --energy's figures; empty for a row without them, the reason in energy_error.
    const nlohmann::json e = r.value("energy", nlohmann::json());
    const bool figures = e.is_object() && e.contains("joules_per_op");
    os << (figures ? number(e.at("joules_per_op").get<double>() * 1e6) : "") << ','
       << (figures ? number(e.at("watts")) : "") << ','
       << field(figures ? e.at("method").get<std::string>() : "") << ','
       << field(e.is_object() && e.contains("error") ? e.at("error").get<std::string>() : "") << ','
       << profile_fields(r) << ',';
    // The GPU that ran the row (--devices); empty for a row that reached none.
    const nlohmann::json& g = r.at("gpu");
    os << (g.is_object() ? number(g.at("ordinal")) : "") << ','
       << field(g.is_object() ? g.at("uuid").get<std::string>() : "") << ','
       << field(g.is_object() ? g.at("name").get<std::string>() : "") << ',' << timing("placements")
       << ',' << timing("placement_spread") << ','
       << (t.is_null() ? "" : field(t.at("launch").get<std::string>())) << '\n';
  }
}

}  // namespace kl
