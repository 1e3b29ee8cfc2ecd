// A result record, and the timing figures in it, as JSON: the worker's replies and the results
// file's records (docs/results_format.md). Reading them back is record_read.cpp's, apart, so that
// the readers link without the rest of kernlab (the fuzz target tests/fuzz/fuzz_results.cpp).
#include "record/record_json.hpp"

namespace kl {
namespace {

using nlohmann::json;

json descriptor_json(const variant_descriptor& d) {
  json out = {{"family", d.family},
              {"name", d.name},
              {"qualified_name", d.qualified_name()},
              {"origin", to_string(d.origin)},
              {"origin_path", d.origin_path},
              {"entry", d.entry},
              {"blocks", d.blocks},
              {"tile", d.tile},
              {"grid", to_string(d.grid)},
              {"bounds", to_string(d.bounds)},
              {"output", to_string(d.output)},
              {"shared_bytes", d.shared_bytes},
              {"target", d.target},
              {"workspace", d.workspace},
              {"dtypes", d.dtypes},
              {"ops", d.ops},
              {"summary", d.summary},
              {"order", d.order},
              {"is_baseline", d.is_baseline},
              {"params", d.params},
              {"block_dims", d.block_dims},
              {"grid_dims", d.grid_dims},
              {"tunable_file", d.tunable_file},
              {"point", d.point},
              {"named_point", d.named_point}};
  // Only a variant that has them: a worker must launch it with them (the kernel takes them).
  if (!d.tensor_maps.empty()) {
    out["tensor_maps"] = json::array();
    for (const auto& t : d.tensor_maps)
      out["tensor_maps"].push_back(
          {{"buffer", t.buffer}, {"dims", t.dims}, {"box", t.box}, {"swizzle", t.swizzle}});
  }
  if (!d.scratch.empty()) {
    out["scratch"] = json::array();
    for (const auto& t : d.scratch)
      out["scratch"].push_back({{"type", t.type}, {"name", t.name}, {"count", t.count}});
  }
  if (!d.defines.empty()) {
    out["defines"] = json::array();
    for (const auto& m : d.defines)
      out["defines"].push_back({{"name", m.name}, {"value", m.value ? json(*m.value) : json()}});
  }
  return out;
}

// A figure ncu may not have given: null then.
json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

json profile_json(const profile_summary& p) {
  json stalls = json::array();
  for (const auto& s : p.top_stalls) stalls.push_back({{"reason", s.name}, {"cycles", s.cycles}});
  return {{"kernels", p.kernels},
          {"duration_us", p.duration_us},
          {"dram_pct", optional_number(p.dram_pct)},
          {"occupancy_pct", optional_number(p.occupancy_pct)},
          {"l2_hit_pct", optional_number(p.l2_hit_pct)},
          {"sm_pct", optional_number(p.sm_pct)},
          {"stalls", stalls},
          {"range", p.range},
          {"report", p.report},
          {"note", p.note}};
}

}  // namespace

json to_json(const timing_stats& t) {
  json j = {{"samples", t.samples},
            {"median_us", t.median_ms * 1e3},
            {"min_us", t.min_ms * 1e3},
            {"max_us", t.max_ms * 1e3},
            {"mean_us", t.mean_ms * 1e3},
            {"noise", t.noise},
            {"timed_out", t.timed_out},
            {"flush", to_string(t.flush)},
            {"sm_clock_min_mhz", t.sm_clock_min_mhz},
            {"sm_clock_max_mhz", t.sm_clock_max_mhz},
            {"clock_dropped", t.clock_dropped},
            {"stop_rule", to_string(t.rule)},
            {"ci_low_us", t.ci_low_ms * 1e3},
            {"ci_high_us", t.ci_high_ms * 1e3},
            {"ci_half_width", t.ci_half_width()},
            {"launch", to_string(t.launch)},
            {"placements", t.placements},
            {"placement_spread", t.placement_spread},
            {"note", t.note}};
  if (t.raced) j["raced"] = true;  // only a tune's rows race (--race); others keep their bytes
  json& medians = j["placement_medians_us"] = json::array();
  for (double ms : t.placement_medians_ms) medians.push_back(ms * 1e3);
  if (!t.samples_ms.empty()) {
    json& all = j["samples_us"] = json::array();
    for (double ms : t.samples_ms) all.push_back(ms * 1e3);
  }
  return j;
}

json to_json(const timing_options& t) {
  json j = {{"warmup_runs", t.warmup_runs},
            {"min_samples", t.min_samples},
            {"max_samples", t.max_samples},
            {"min_time_s", t.min_time_s},
            {"max_noise", t.max_noise},
            {"timeout_s", t.timeout_s},
            {"flush", to_string(t.flush)},
            {"stop_rule", to_string(t.rule)},
            {"max_ci", t.max_ci},
            {"energy", t.energy.enabled},
            {"energy_time_s", t.energy.min_time_s},
            {"keep_samples", t.keep_samples},
            {"launch", to_string(t.launch)},
            {"placements", t.placements},
            {"max_placements", t.max_placements},
            {"placement_workers", t.placement_workers},
            {"min_interval", t.min_interval}};
  if (t.race_ms > 0) j["race_us"] = t.race_ms * 1e3;  // a tune's row to a worker, not a run's
  return j;
}

json to_json(const energy_stats& e) {
  if (!e.error.empty()) return {{"error", e.error}, {"operations", e.operations}};
  return {{"method", e.method},
          {"joules_per_op", e.joules_per_op},
          {"watts", e.watts},
          {"window_s", e.window_s},
          {"us_per_op", e.us_per_op},
          {"operations", e.operations},
          {"counter_updates", e.counter_updates},
          {"power_samples", e.power_samples},
          {"sampled_watts", e.sampled_watts},
          {"note", e.note}};
}

json to_json(const problem_config& c) {
  // The whole axes as files have always had them: one is "size" (and "shape" is empty), several
  // are "shape" (and "size" is 0).
  const std::vector<std::uint64_t> shape = c.shape();
  const bool one = shape.size() == 1;
  json j = {{"dtype", c.dtype},
            {"op", c.op},
            {"size", one ? shape.front() : 0},
            {"input", c.input_mode},
            {"seed", c.seed},
            {"shape", one ? std::vector<std::uint64_t>{} : shape}};
  // The other axes, in the family's order: [["SNR_DB", 20]] (an object would sort them).
  json named = json::array();
  for (const auto& a : c.axes)
    if (!a.whole())
      named.push_back(json::array({a.name, std::visit([](auto v) { return json(v); }, a.value)}));
  if (!named.empty()) j["real_axes"] = named;
  return j;
}

json to_json(const result_record& r) {
  json j = {{"variant", descriptor_json(r.variant)},
            {"config", to_json(r.config)},
            {"block", r.block},
            {"outcome", outcome_name(r.status)},
            {"message", r.message},
            {"expected", r.check.expected},
            {"got", r.check.got},
            {"bytes", r.bytes},
            {"flops", r.flops},
            {"roofline", r.roofline},
            {"compile_ms", r.compile_ms},
            {"load_ms", r.load_ms},
            {"validate_ms", r.validate_ms},
            {"sanitizer", r.sanitizer},
            {"sanitizer_findings", r.sanitizer_findings},
            {"resumed", r.resumed}};
  j["timing"] = nullptr;
  if (r.timing) {
    j["timing"] = to_json(*r.timing);
    j["gbps"] = r.gbps();
  }
  // Only rows run with --energy have the key: a file from a run without it is as before.
  if (r.energy) {
    j["energy"] = to_json(*r.energy);
    // Work per joule, in the row's roofline unit, where there are figures.
    if (r.energy->measured() && r.compute_bound())
      j["energy"]["gflop_per_joule"] = r.flops / 1e9 / r.energy->joules_per_op;
    else if (r.energy->measured())
      j["energy"]["gb_per_joule"] = r.bytes / 1e9 / r.energy->joules_per_op;
  }
  j["resources"] = nullptr;
  if (r.resources)
    j["resources"] = {{"registers", r.resources->registers},
                      {"static_shared_bytes", r.resources->static_shared_bytes},
                      {"stack_frame_bytes", r.resources->stack_frame_bytes},
                      {"spill_store_bytes", r.resources->spill_store_bytes},
                      {"spill_load_bytes", r.resources->spill_load_bytes}};
  j["occupancy"] = nullptr;
  if (r.occupancy)
    j["occupancy"] = {{"blocks_per_sm", r.occupancy->blocks_per_sm},
                      {"fraction", r.occupancy->fraction}};
  j["profile"] = r.profile ? profile_json(*r.profile) : json(nullptr);
  // The GPU that ran the row; null for a row that never reached one.
  j["gpu"] = nullptr;
  if (r.gpu)
    j["gpu"] = {{"ordinal", r.gpu->ordinal},
                {"uuid", r.gpu->uuid},
                {"name", r.gpu->name},
                {"max_sm_clock_mhz", r.gpu->sm_clock_khz / 1000},
                {"memory_clock_mhz", r.gpu->mem_clock_khz / 1000}};
  return j;
}

}  // namespace kl
