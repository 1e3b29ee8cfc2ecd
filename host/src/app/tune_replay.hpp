// `kernlab tune --replay FILE`: a recorded tune answers the rows instead of the GPU.
#pragma once

#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "record/record_json.hpp"
#include "report/results_json.hpp"
#include "runner/row_session.hpp"

#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

namespace kl::app {

// A recorded tune (kernlab tune --json, or a sweep's --json) that answers rows by their
// configuration key, as Kernel Tuner's simulation mode does: strategies compared on a measured
// space at no GPU time. A row the file does not hold fails with that reason.
class replay_file {
 public:
  explicit replay_file(const std::string& path) : path_(path) {
    const nlohmann::json j = read_results_file(path);
    try {
      for (auto& r : records_from_results(j)) {
        const std::string key = configuration_key(r.variant.qualified_name(), r.block, r.config);
        // A time that is not a positive number was never measured: it would be the best.
        if (r.timed() && !(r.timing->median_ms > 0 && std::isfinite(r.timing->median_ms)))
          throw std::runtime_error(key + ": median_us " + json_text(r.timing->median_ms * 1e3) +
                                   " is not a time (a positive number)");
        records_.emplace(key, std::move(r));
      }
      const auto& dev = j.at("reproducibility").at("device");
      if (dev.is_null()) throw std::runtime_error("it has no device: nothing was measured");
      device.name = dev.at("name").get<std::string>();
      device.uuid = dev.value("uuid", "");
      device.sm_count = dev.value("sm_count", 0);
      device.mem_clock_khz = dev.value("memory_clock_mhz", 0) * 1000;
      device.sm_clock_khz = dev.value("max_sm_clock_mhz", 0) * 1000;
      device.bus_width_bits = dev.value("bus_width_bits", 0);
      const std::string cc = dev.value("compute_capability", "0.0");
      device.cc_major = std::stoi(cc.substr(0, cc.find('.')));
      device.cc_minor = std::stoi(cc.substr(cc.find('.') + 1));
      device.max_threads_per_block = 1024;
    } catch (const std::exception& e) {
      throw io_error("--replay " + path + ": " + e.what());
    }
  }
  cuda::device_info device;
  std::size_t size() const { return records_.size(); }
  /// Whether any record has energy figures (the file was recorded with --energy).
  bool has_energy() const {
    for (const auto& [key, r] : records_)
      if (r.has_energy()) return true;
    return false;
  }
  result_record row(const row_request& r) const {
    const std::string key =
        configuration_key(r.entry->descriptor.qualified_name(), r.block, r.config);
    if (auto it = records_.find(key); it != records_.end()) return it->second;
    result_record missing;
    missing.variant = r.entry->descriptor;
    missing.config = r.config;
    missing.block = r.block;
    missing.status = outcome::skipped;
    missing.message = "not in " + path_;
    return missing;
  }

 private:
  std::string path_;
  std::map<std::string, result_record> records_;
};

}  // namespace kl::app
