// The SM clock while a row is sampled, read through NVML (loaded at run time, like the driver).
// A row whose clock fell while it was measured (thermal or power limits) is flagged, because its
// numbers are not comparable with the others. Where NVML is missing, nothing is read and no row
// is flagged: the monitor says it is unavailable.
#pragma once

#include "measure/nvml.hpp"

#include <string>

namespace kl {

class clock_monitor {
 public:
  /// Finds the device by its UUID ("GPU-..."); unavailable if NVML or the device is not found.
  /// `nvml` must outlive the monitor.
  clock_monitor(const nvml_library& nvml, const std::string& uuid);
  clock_monitor(const clock_monitor&) = delete;
  clock_monitor& operator=(const clock_monitor&) = delete;

  bool available() const { return device_ != nullptr; }
  /// Why the monitor is unavailable, "" when it is available.
  const std::string& why_unavailable() const { return why_; }
  /// The SM clock now, in MHz; 0 when unavailable.
  int sm_clock_mhz() const;

 private:
  const nvml_library& nvml_;
  void* device_ = nullptr;
  std::string why_;
};

/// Accumulates clock readings for one row.
struct clock_range {
  int min_mhz = 0, max_mhz = 0;
  void add(int mhz) {
    if (mhz <= 0) return;
    min_mhz = min_mhz == 0 ? mhz : (mhz < min_mhz ? mhz : min_mhz);
    max_mhz = mhz > max_mhz ? mhz : max_mhz;
  }
  /// More than a 5 % fall between the highest and the lowest reading.
  bool dropped() const { return max_mhz > 0 && min_mhz < 0.95 * max_mhz; }
};

}  // namespace kl
