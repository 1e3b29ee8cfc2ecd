#include "measure/clock_monitor.hpp"

#include <dlfcn.h>

namespace kl {
namespace {
// NVML's C ABI, the few entry points used here (nvml.h is not part of every toolkit install).
constexpr int nvml_success = 0;
constexpr int nvml_clock_sm = 1;
}  // namespace

clock_monitor::clock_monitor(const std::string& uuid) {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library_) {
    why_ = "libnvidia-ml.so.1 cannot be loaded";
    return;
  }
  auto init = reinterpret_cast<int (*)()>(dlsym(library_, "nvmlInit_v2"));
  auto by_uuid =
      reinterpret_cast<int (*)(const char*, void**)>(dlsym(library_, "nvmlDeviceGetHandleByUUID"));
  get_clock_ =
      reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(library_, "nvmlDeviceGetClockInfo"));
  shutdown_ = reinterpret_cast<int (*)()>(dlsym(library_, "nvmlShutdown"));
  if (!init || !by_uuid || !get_clock_ || !shutdown_) {
    why_ = "libnvidia-ml.so.1 lacks the entry points kernlab reads";
    return;
  }
  if (init() != nvml_success) {
    why_ = "nvmlInit failed";
    shutdown_ = nullptr;
    return;
  }
  void* device = nullptr;
  if (by_uuid(uuid.c_str(), &device) != nvml_success || device == nullptr) {
    why_ = "NVML does not know device " + uuid;
    return;
  }
  device_ = device;
}

clock_monitor::~clock_monitor() {
  if (shutdown_) shutdown_();
  if (library_) dlclose(library_);
}

int clock_monitor::sm_clock_mhz() const {
  if (!device_) return 0;
  unsigned mhz = 0;
  return get_clock_(device_, nvml_clock_sm, &mhz) == nvml_success ? static_cast<int>(mhz) : 0;
}

}  // namespace kl
