#include "measure/nvml.hpp"

#include <dlfcn.h>

namespace kl {
namespace {
// NVML's C ABI, from its documentation: nvmlReturn_t values and nvmlClockType_t's SM clock.
constexpr int nvml_success = 0;
constexpr int nvml_clock_sm = 1;

template <typename F>
void bind(void* handle, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
}
}  // namespace

std::vector<std::string> nvml_library::default_names() {
  return {"libnvidia-ml.so.1", "libnvidia-ml.so"};
}

nvml_library::nvml_library(const std::vector<std::string>& names) {
  // The first name's error is the one reported: it is the name the driver installs.
  std::string first_error;
  for (const auto& name : names) {
    handle_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_) break;
    const char* e = dlerror();
    if (first_error.empty()) first_error = e ? e : name + " cannot be loaded";
  }
  if (!handle_) {
    why_ = names.empty() ? "no library name to load" : first_error;
    return;
  }
  bind(handle_, "nvmlInit_v2", init_);
  bind(handle_, "nvmlShutdown", shutdown_);
  bind(handle_, "nvmlErrorString", error_string_);
  bind(handle_, "nvmlDeviceGetHandleByUUID", by_uuid_);
  bind(handle_, "nvmlDeviceGetClockInfo", clock_info_);
  bind(handle_, "nvmlDeviceGetTotalEnergyConsumption", total_energy_);
  bind(handle_, "nvmlDeviceGetPowerUsage", power_usage_);
  if (!init_ || !shutdown_ || !by_uuid_) {
    why_ = "the NVML library lacks nvmlInit_v2, nvmlShutdown or nvmlDeviceGetHandleByUUID";
    return;
  }
  if (const int rc = init_(); rc != nvml_success) {
    why_ = "nvmlInit_v2 failed: " + error_text(rc);
    return;
  }
  initialised_ = true;
}

nvml_library::~nvml_library() {
  if (initialised_) shutdown_();
  if (handle_) dlclose(handle_);
}

std::string nvml_library::error_text(int code) const {
  const char* s = error_string_ ? error_string_(code) : nullptr;
  return s ? std::string(s) : "NVML error " + std::to_string(code);
}

void* nvml_library::device_by_uuid(const std::string& uuid, std::string& why) const {
  if (!initialised_) {
    why = why_;
    return nullptr;
  }
  void* device = nullptr;
  const int rc = by_uuid_(uuid.c_str(), &device);
  if (rc != nvml_success || !device) {
    why = "NVML does not know device " + uuid + " (" + error_text(rc) + ")";
    return nullptr;
  }
  return device;
}

std::optional<unsigned> nvml_library::sm_clock_mhz(void* device) const {
  unsigned mhz = 0;
  if (!device || !clock_info_ || clock_info_(device, nvml_clock_sm, &mhz) != nvml_success)
    return std::nullopt;
  return mhz;
}

std::optional<std::uint64_t> nvml_library::total_energy_mj(void* device, std::string* why) const {
  if (!device || !total_energy_) {
    if (why) *why = "this NVML has no nvmlDeviceGetTotalEnergyConsumption";
    return std::nullopt;
  }
  unsigned long long mj = 0;
  if (const int rc = total_energy_(device, &mj); rc != nvml_success) {
    if (why) *why = "nvmlDeviceGetTotalEnergyConsumption: " + error_text(rc);
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(mj);
}

std::optional<unsigned> nvml_library::power_mw(void* device) const {
  unsigned mw = 0;
  if (!device || !power_usage_ || power_usage_(device, &mw) != nvml_success) return std::nullopt;
  return mw;
}

}  // namespace kl
