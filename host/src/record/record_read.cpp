// Result records read back from JSON (the worker's replies, results files), with the checks a
// file from anywhere needs, and their configuration keys. Fuzzed (tests/fuzz/fuzz_results.cpp).
#include "record/record_json.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace kl {
namespace {

using nlohmann::json;

// The whole number of type T at `key` of `j`. json's own conversion of a fraction or of a value
// out of T's range is undefined behaviour: a file is refused for it instead, naming the key.
template <typename T>
T whole(const json& v, const char* key) {
  if (v.is_number_unsigned()) {
    const auto x = v.get<std::uint64_t>();
    if (x <= static_cast<std::uint64_t>(std::numeric_limits<T>::max())) return static_cast<T>(x);
  } else if (v.is_number_integer()) {
    const auto x = v.get<std::int64_t>();
    if (x >= static_cast<std::int64_t>(std::numeric_limits<T>::min()) &&
        (x < 0 || static_cast<std::uint64_t>(x) <=
                      static_cast<std::uint64_t>(std::numeric_limits<T>::max())))
      return static_cast<T>(x);
  }
  throw std::runtime_error(std::string("\"") + key + "\": " + v.dump() +
                           " is not a whole number in range");
}
template <typename T>
T whole_at(const json& j, const char* key) {
  return whole<T>(j.at(key), key);
}
template <typename T>
std::vector<T> wholes_at(const json& j, const char* key) {
  std::vector<T> out;
  const json& list = j.at(key);
  if (!list.is_array()) throw std::runtime_error(std::string("\"") + key + "\": not a list");
  for (const auto& v : list) out.push_back(whole<T>(v, key));
  return out;
}

variant_descriptor descriptor_from_json(const json& j) {
  variant_descriptor d;
  d.family = j.at("family").get<std::string>();
  d.name = j.at("name").get<std::string>();
  d.origin = j.at("origin") == "plugin"    ? origin_kind::plugin
             : j.at("origin") == "builtin" ? origin_kind::builtin
                                           : origin_kind::source;
  d.origin_path = j.at("origin_path").get<std::string>();
  d.entry = j.at("entry").get<std::string>();
  d.blocks = wholes_at<unsigned>(j, "blocks");
  d.tile = j.at("tile").get<std::string>();
  d.grid = j.at("grid") == "resident" ? grid_kind::resident : grid_kind::tiles;
  d.bounds = j.at("bounds") == "checked" ? bounds_kind::checked : bounds_kind::padded;
  d.output = j.at("output") == "single" ? output_kind::single : output_kind::per_block;
  d.shared_bytes = j.at("shared_bytes").get<std::string>();
  d.target = j.at("target").get<std::string>();
  d.workspace = j.at("workspace").get<std::string>();
  d.dtypes = j.at("dtypes").get<std::vector<std::string>>();
  d.ops = j.at("ops").get<std::vector<std::string>>();
  d.summary = j.at("summary").get<std::string>();
  d.order = whole_at<int>(j, "order");
  d.is_baseline = j.at("is_baseline").get<bool>();
  d.params = j.at("params").get<std::vector<std::pair<std::string, std::string>>>();
  d.block_dims = j.at("block_dims").get<std::vector<std::string>>();
  d.grid_dims = j.at("grid_dims").get<std::vector<std::string>>();
  d.tunable_file = j.at("tunable_file").get<std::string>();
  const json& point = j.at("point");
  if (!point.is_array()) throw std::runtime_error("\"point\": not a list");
  for (const auto& item : point) {
    if (!item.is_array() || item.size() != 2 || !item[0].is_string())
      throw std::runtime_error("\"point\": " + item.dump() + " is not [name, value]");
    d.point.emplace_back(item[0].get<std::string>(), whole<std::int64_t>(item[1], "point"));
  }
  d.named_point = j.at("named_point").get<bool>();
  // Only a variant whose header has them.
  if (j.contains("tensor_maps"))
    for (const auto& t : j.at("tensor_maps"))
      d.tensor_maps.push_back(
          {t.at("buffer").get<std::string>(), t.at("dims").get<std::vector<std::string>>(),
           t.at("box").get<std::vector<std::string>>(), t.at("swizzle").get<unsigned>()});
  if (j.contains("scratch"))
    for (const auto& t : j.at("scratch"))
      d.scratch.push_back({t.at("type").get<std::string>(), t.at("name").get<std::string>(),
                           t.at("count").get<std::string>()});
  if (j.contains("defines"))
    for (const auto& m : j.at("defines"))
      d.defines.push_back(
          {m.at("name").get<std::string>(),
           m.at("value").is_null()
               ? std::nullopt
               : std::optional<std::int64_t>(whole<std::int64_t>(m.at("value"), "defines"))});
  return d;
}

// A number of a profile that may be null (ncu gave no value).
std::optional<double> optional_number(const json& j, const char* key) {
  const json& v = j.at(key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number()) throw std::runtime_error(std::string("\"") + key + "\": not a number");
  return v.get<double>();
}

profile_summary profile_from_json(const json& j) {
  profile_summary p;
  p.kernels = whole_at<int>(j, "kernels");
  p.duration_us = j.at("duration_us").get<double>();
  p.dram_pct = optional_number(j, "dram_pct");
  p.occupancy_pct = optional_number(j, "occupancy_pct");
  p.l2_hit_pct = optional_number(j, "l2_hit_pct");
  p.sm_pct = optional_number(j, "sm_pct");
  const json& stalls = j.at("stalls");
  if (!stalls.is_array()) throw std::runtime_error("\"stalls\": not a list");
  for (const auto& s : stalls)
    p.top_stalls.push_back({s.at("reason").get<std::string>(), s.at("cycles").get<double>()});
  p.range = j.at("range").get<std::string>();
  p.report = j.at("report").get<std::string>();
  p.note = j.at("note").get<std::string>();
  return p;
}

outcome outcome_from_string(const std::string& s) {
  for (outcome o : {outcome::passed, outcome::wrong_result, outcome::failed, outcome::skipped,
                    outcome::crashed, outcome::timeout, outcome::suspect})
    if (s == outcome_name(o)) return o;
  throw std::runtime_error("unknown outcome '" + s + "'");
}

}  // namespace

timing_stats timing_stats_from_json(const json& t) {
  timing_stats s;
  s.samples = whole_at<std::size_t>(t, "samples");
  s.median_ms = t.at("median_us").get<double>() / 1e3;
  s.min_ms = t.at("min_us").get<double>() / 1e3;
  s.max_ms = t.at("max_us").get<double>() / 1e3;
  s.mean_ms = t.at("mean_us").get<double>() / 1e3;
  s.noise = t.at("noise").get<double>();
  s.timed_out = t.at("timed_out").get<bool>();
  s.flush = parse_flush_mode(t.at("flush").get<std::string>());
  s.sm_clock_min_mhz = whole_at<int>(t, "sm_clock_min_mhz");
  s.sm_clock_max_mhz = whole_at<int>(t, "sm_clock_max_mhz");
  s.clock_dropped = t.at("clock_dropped").get<bool>();
  s.rule = parse_stop_rule(t.at("stop_rule").get<std::string>());
  s.ci_low_ms = t.at("ci_low_us").get<double>() / 1e3;
  s.ci_high_ms = t.at("ci_high_us").get<double>() / 1e3;
  s.launch = parse_launch_mode(t.at("launch").get<std::string>());
  s.placements = whole_at<int>(t, "placements");
  s.placement_spread = t.at("placement_spread").get<double>();
  s.note = t.at("note").get<std::string>();
  s.raced = t.value("raced", false);
  const json& medians = t.at("placement_medians_us");
  if (!medians.is_array()) throw std::runtime_error("placement_medians_us is not an array");
  for (const auto& us : medians) s.placement_medians_ms.push_back(us.get<double>() / 1e3);
  // Only with --samples.
  if (const auto all = t.find("samples_us"); all != t.end()) {
    if (!all->is_array()) throw std::runtime_error("samples_us is not an array");
    s.samples_ms.reserve(all->size());
    for (const auto& us : *all) s.samples_ms.push_back(us.get<double>() / 1e3);
  }
  return s;
}

timing_options timing_options_from_json(const json& j) {
  timing_options t;
  t.warmup_runs = whole_at<decltype(t.warmup_runs)>(j, "warmup_runs");
  t.min_samples = whole_at<decltype(t.min_samples)>(j, "min_samples");
  t.max_samples = whole_at<decltype(t.max_samples)>(j, "max_samples");
  t.min_time_s = j.at("min_time_s");
  t.max_noise = j.at("max_noise");
  t.timeout_s = j.at("timeout_s");
  t.flush = parse_flush_mode(j.at("flush"));
  t.rule = parse_stop_rule(j.at("stop_rule"));
  t.max_ci = j.at("max_ci");
  t.keep_samples = j.at("keep_samples");
  t.launch = parse_launch_mode(j.at("launch"));
  t.placements = whole_at<int>(j, "placements");
  t.max_placements = whole_at<int>(j, "max_placements");
  t.placement_workers = whole_at<int>(j, "placement_workers");
  t.min_interval = j.at("min_interval");
  t.energy.enabled = j.at("energy");
  t.energy.min_time_s = j.at("energy_time_s");
  t.race_ms = j.value("race_us", 0.0) / 1e3;
  return t;
}

energy_stats energy_stats_from_json(const json& j) {
  if (!j.is_object()) throw std::runtime_error("\"energy\": not an object");
  energy_stats e;
  e.operations = whole_at<std::uint64_t>(j, "operations");
  if (j.contains("error")) {
    e.error = j.at("error").get<std::string>();
    if (e.error.empty()) throw std::runtime_error("\"energy\": an empty \"error\"");
    return e;
  }
  e.method = j.at("method").get<std::string>();
  if (e.method != "counter" && e.method != "power samples")
    throw std::runtime_error("\"energy\": unknown method '" + e.method + "'");
  e.joules_per_op = j.at("joules_per_op").get<double>();
  e.watts = j.at("watts").get<double>();
  e.window_s = j.at("window_s").get<double>();
  e.us_per_op = j.at("us_per_op").get<double>();
  e.counter_updates = whole_at<std::size_t>(j, "counter_updates");
  e.power_samples = whole_at<std::size_t>(j, "power_samples");
  e.sampled_watts = j.at("sampled_watts").get<double>();
  e.note = j.at("note").get<std::string>();
  // A figure that is not a positive finite number is not a measurement.
  for (const auto& [key, v] :
       {std::pair<const char*, double>{"joules_per_op", e.joules_per_op}, {"watts", e.watts}})
    if (!(v > 0) || !std::isfinite(v))
      throw std::runtime_error(std::string("\"energy\": \"") + key + "\": " + std::to_string(v) +
                               " is not a positive number");
  return e;
}

result_record record_from_json(const json& j) {
  result_record r;
  r.variant = descriptor_from_json(j.at("variant"));
  r.config = config_from_json(j.at("config"));
  r.block = whole_at<unsigned>(j, "block");
  r.status = outcome_from_string(j.at("outcome").get<std::string>());
  r.message = j.at("message").get<std::string>();
  r.check.expected = j.at("expected").get<std::string>();
  r.check.got = j.at("got").get<std::string>();
  r.check.ok = r.status == outcome::passed;
  r.bytes = j.at("bytes").get<double>();
  r.flops = j.at("flops").get<double>();
  r.roofline = j.at("roofline").get<std::string>();
  r.compile_ms = j.at("compile_ms").get<double>();
  r.load_ms = j.at("load_ms").get<double>();
  r.validate_ms = j.at("validate_ms").get<double>();
  r.sanitizer = j.at("sanitizer").get<std::string>();
  r.sanitizer_findings = j.at("sanitizer_findings").get<bool>();
  r.resumed = j.at("resumed").get<bool>();
  if (!j.at("timing").is_null()) r.timing = timing_stats_from_json(j.at("timing"));
  if (j.contains("energy") && !j.at("energy").is_null())
    r.energy = energy_stats_from_json(j.at("energy"));
  if (!j.at("resources").is_null()) {
    const auto& x = j.at("resources");
    nvrtc::resource_usage u;
    u.registers = whole_at<int>(x, "registers");
    u.static_shared_bytes = whole_at<long>(x, "static_shared_bytes");
    u.stack_frame_bytes = whole_at<long>(x, "stack_frame_bytes");
    u.spill_store_bytes = whole_at<long>(x, "spill_store_bytes");
    u.spill_load_bytes = whole_at<long>(x, "spill_load_bytes");
    r.resources = u;
  }
  if (!j.at("occupancy").is_null())
    r.occupancy = occupancy_info{whole_at<int>(j.at("occupancy"), "blocks_per_sm"),
                                 j.at("occupancy").at("fraction").get<double>()};
  // Null for a row that was not profiled.
  if (!j.at("profile").is_null()) r.profile = profile_from_json(j.at("profile"));
  // Null for a row that ran on no GPU.
  if (!j.at("gpu").is_null()) {
    const auto& g = j.at("gpu");
    cuda::gpu_identity id;
    id.ordinal = whole_at<int>(g, "ordinal");
    id.uuid = g.at("uuid").get<std::string>();
    id.name = g.at("name").get<std::string>();
    id.sm_clock_khz = whole_at<int>(g, "max_sm_clock_mhz") * 1000;
    id.mem_clock_khz = whole_at<int>(g, "memory_clock_mhz") * 1000;
    r.gpu = id;
  }
  return r;
}

problem_config config_from_json(const json& c) {
  problem_config config;
  config.dtype = c.at("dtype").get<std::string>();
  config.op = c.at("op").get<std::string>();
  const auto size = whole_at<std::uint64_t>(c, "size");
  config.input_mode = c.at("input").get<std::string>();
  config.seed = whole_at<std::uint64_t>(c, "seed");
  // The whole axes by place (a file does not name them): the shape's, else the size.
  auto shape = wholes_at<std::uint64_t>(c, "shape");
  if (shape.empty()) shape = {size};
  for (auto w : shape) config.axes.push_back({"", w});
  if (const auto it = c.find("real_axes"); it != c.end()) {
    if (!it->is_array()) throw std::runtime_error("config.real_axes is not an array");
    for (const auto& a : *it) {
      if (!a.is_array() || a.size() != 2 || !a[0].is_string() || !a[1].is_number())
        throw std::runtime_error("config.real_axes: an entry is not [\"NAME\", value]");
      const double v = a[1].get<double>();
      if (!std::isfinite(v)) throw std::runtime_error("config.real_axes: a value is not finite");
      config.axes.push_back({a[0].get<std::string>(), v});
    }
  }
  return config;
}

std::string record_key(const json& r) {
  return configuration_key(r.at("variant").at("qualified_name").get<std::string>(),
                           whole_at<unsigned>(r, "block"), config_from_json(r.at("config")));
}

}  // namespace kl
