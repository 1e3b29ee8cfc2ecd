#include "measure/clock_monitor.hpp"

namespace kl {

clock_monitor::clock_monitor(const nvml_library& nvml, const std::string& uuid) : nvml_(nvml) {
  device_ = nvml.device_by_uuid(uuid, why_);
}

int clock_monitor::sm_clock_mhz() const {
  if (!device_) return 0;
  const auto mhz = nvml_.sm_clock_mhz(device_);
  return mhz ? static_cast<int>(*mhz) : 0;
}

}  // namespace kl
