#include "report/results_json.hpp"

#include "core/errors.hpp"
#include "nvrtc/hash.hpp"
#include "report/table.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

namespace kl {

using nlohmann::json;

std::string content_hash(const std::string& text) {
  char out[17];
  std::snprintf(out, sizeof out, "%016llx",
                static_cast<unsigned long long>(nvrtc::checksum64(text)));
  return out;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json device_json(const cuda::device_info& d) {
  return {{"name", d.name},
          {"uuid", d.uuid},
          {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
          {"sm_count", d.sm_count},
          {"l2_bytes", d.l2_bytes},
          {"total_memory_bytes", d.total_mem},
          {"max_sm_clock_mhz", d.sm_clock_khz / 1000},
          {"memory_clock_mhz", d.mem_clock_khz / 1000},
          {"bus_width_bits", d.bus_width_bits},
          {"peak_bandwidth_gbs", d.peak_bandwidth() / 1e9},
          {"fp32_lanes_per_sm", d.fp32_lanes_per_sm()},
          {"peak_fp32_tflops", d.peak_fp32_flops() / 1e12},
          {"peak_tensor16_tflops", d.peak_tensor16_flops() / 1e12},
          {"peak_tf32_tflops", d.peak_tf32_flops() / 1e12},
          {"peak_fp64_tensor_tflops", d.peak_fp64_tensor_flops() / 1e12},
          {"driver_version", std::to_string(d.driver_version / 1000) + "." +
                                 std::to_string(d.driver_version % 1000 / 10)}};
}

json record_device_json(const cuda::device_info& d) {
  json all = device_json(d);
  return {{"name", all["name"]},
          {"uuid", all["uuid"]},
          {"compute_capability", all["compute_capability"]},
          {"driver_version", all["driver_version"]},
          {"peak_bandwidth_gbs", all["peak_bandwidth_gbs"]},
          {"peak_fp32_tflops", all["peak_fp32_tflops"]},
          {"peak_tensor16_tflops", all["peak_tensor16_tflops"]},
          {"peak_tf32_tflops", all["peak_tf32_tflops"]},
          {"peak_fp64_tensor_tflops", all["peak_fp64_tensor_tflops"]}};
}

json run_json(const run_context& ctx) {
  return {{"date", ctx.date},
          {"kernlab_version", ctx.kernlab_version},
          {"kernlab_commit", ctx.kernlab_commit},
          {"nvrtc_version", ctx.nvrtc_version},
          {"seed", ctx.seed},
          {"command", ctx.command}};
}

json record_in_context(const result_record& r, const cuda::device_info* device) {
  json j = to_json(r);
  j["percent_of_peak"] = nullptr;
  if (r.timed() && device) j["percent_of_peak"] = r.gbps() * 1e9 / device->peak_bandwidth() * 100.0;
  // Compute-bound families (matmul) are measured against the FP32 peak as well.
  if (r.timed() && r.flops > 0) {
    const double tflops = r.flops / (r.timing->median_ms * 1e-3) / 1e12;
    j["tflops"] = tflops;
    j["percent_of_fp32_peak"] = nullptr;
    if (device && device->peak_fp32_flops() > 0)
      j["percent_of_fp32_peak"] = tflops * 1e12 / device->peak_fp32_flops() * 100.0;
    // A tensor-core row is measured against its precision's tensor-core peak too.
    if (is_tensor_roofline(r.roofline)) {
      const char* key = r.roofline == "tensor" ? "percent_of_tensor16_peak"
                        : r.roofline == "tf32" ? "percent_of_tf32_peak"
                                               : "percent_of_fp64_tensor_peak";
      const double peak = device ? device->peak_flops_for(r.roofline) : 0.0;
      j[key] = nullptr;
      if (peak > 0) j[key] = tflops * 1e12 / peak * 100.0;
    }
  }
  j["device"] = device ? record_device_json(*device) : json(nullptr);
  return j;
}

const cuda::device_info* device_of(const result_record& r, const sweep_result& sweep) {
  if (r.gpu)
    for (const auto& d : sweep.devices)
      if (d.uuid == r.gpu->uuid) return &d;
  return sweep.device ? &*sweep.device : nullptr;
}

json results_to_json(const sweep_result& sweep, const run_context& ctx) {
  json out;
  out["format"] = "kernlab-results";
  out["version"] = results_format_version;
  json repro = {{"kernlab_version", ctx.kernlab_version},
                {"kernlab_commit", ctx.kernlab_commit},
                {"nvrtc_version", ctx.nvrtc_version},
                {"command", ctx.command},
                {"date", ctx.date},
                {"seed", ctx.seed},
                {"arch", sweep.arch},
                {"baseline", ctx.baseline},
                {"timing", to_json(ctx.timing)}};
  repro["device"] = nullptr;
  if (sweep.device) {
    repro["device"] = device_json(*sweep.device);
  } else {
    repro["no_device_reason"] = sweep.no_device_reason;
  }
  // --energy: why no row has energy figures, or null when NVML measured them.
  if (ctx.timing.energy.enabled && sweep.device)
    repro["energy_unavailable"] =
        sweep.energy_status.empty() ? json(nullptr) : json(sweep.energy_status);
  repro["launch_floor_us"] = nullptr;
  if (sweep.launch_floor) repro["launch_floor_us"] = sweep.launch_floor->median_ms * 1e3;
  json sources = json::array();
  for (const auto& c : sweep.compiles) {
    const auto& d = c.entry->descriptor;
    sources.push_back({{"variant", d.qualified_name()},
                       {"path", d.origin_path},
                       {"source_hash", content_hash(c.entry->source)},
                       {"compile_options", c.result.options},
                       {"compile_ms", c.result.milliseconds},
                       {"cache", c.cache == cache_use::off ? "off" : to_string(c.cache)},
                       {"cache_key", c.key},
                       {"error", c.error}});
  }
  repro["sources"] = sources;
  out["reproducibility"] = repro;

  // --devices: every GPU rows ran on (the first is `device`, above).
  if (sweep.devices.size() > 1) {
    json all = json::array();
    for (const auto& d : sweep.devices) {
      json one = device_json(d);
      one["ordinal"] = d.ordinal;
      all.push_back(std::move(one));
    }
    out["reproducibility"]["devices"] = all;
  }

  // Each record in the context of the GPU that measured it: its peaks are that GPU's.
  json records = json::array();
  for (const auto& r : sweep.results) records.push_back(record_in_context(r, device_of(r, sweep)));
  // The baseline ratio of each record, within its group (dtype, op, size).
  std::map<std::string, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < sweep.results.size(); ++i) {
    const auto& c = sweep.results[i].config;
    groups[c.dtype + "|" + c.op + "|" +
           std::to_string(c.shape().size() == 1 ? c.shape().front() : 0) + "|" + c.shape_text()]
        .push_back(i);
  }
  for (const auto& [key, idx] : groups) {
    std::vector<result_record> group;
    for (auto i : idx) group.push_back(sweep.results[i]);
    std::set<std::string> gpus;
    for (const auto& r : group)
      if (r.gpu) gpus.insert(r.gpu->uuid);
    for (auto i : idx) {
      // Measured on several GPUs: each row against the baseline measured on its own.
      const result_record& row = sweep.results[i];
      const result_record* base = gpus.size() < 2 ? find_baseline(group, ctx.baseline)
                                  : row.gpu ? find_baseline_on(group, ctx.baseline, row.gpu->uuid)
                                            : nullptr;
      records[i]["baseline"] = base ? json(base->variant.qualified_name()) : json(nullptr);
      records[i]["x_baseline"] = nullptr;
      if (base && sweep.results[i].timed())
        records[i]["x_baseline"] = base->timing->median_ms / sweep.results[i].timing->median_ms;
    }
  }
  out["records"] = records;
  // A file written while the run goes on (results_writer) says so until its last write.
  out["complete"] = true;
  if (sweep.interrupted) out["interrupted"] = true;
  // --profile: the pass as a whole; each profiled record has its own figures.
  if (sweep.profile.requested)
    out["profile"] = {{"tool", sweep.profile.tool},
                      {"report", sweep.profile.report},
                      {"log", sweep.profile.log},
                      {"rows", sweep.profile.rows},
                      {"error", sweep.profile.error}};
  return out;
}

}  // namespace kl
