// NVML, the driver's management library, loaded at run time with dlopen like libcuda: kernlab
// neither links it nor needs nvml.h (which not every toolkit install has). The few entry points
// kernlab reads are declared here by their C signatures. The SM clock monitor and the energy
// meter share one loaded library.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kl {

/// The library, initialised, for as long as this object lives (nvmlInit_v2 in the constructor,
/// nvmlShutdown and dlclose in the destructor). Never throws: where the library or an entry point
/// is missing, or nvmlInit fails, available() is false and why_unavailable() says why.
class nvml_library {
 public:
  /// The names tried in order: the versioned name the driver installs, then the plain one.
  static std::vector<std::string> default_names();
  explicit nvml_library(const std::vector<std::string>& names = default_names());
  ~nvml_library();
  nvml_library(const nvml_library&) = delete;
  nvml_library& operator=(const nvml_library&) = delete;

  bool available() const { return initialised_; }
  /// Why NVML cannot be used ("libnvidia-ml.so.1: cannot open shared object file: No such file
  /// or directory"), "" when it can.
  const std::string& why_unavailable() const { return why_; }

  /// The device with this UUID ("GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", the form
  /// cuda::uuid_text gives), or null with `why` set.
  void* device_by_uuid(const std::string& uuid, std::string& why) const;

  /// The SM clock in MHz; nullopt when it cannot be read.
  std::optional<unsigned> sm_clock_mhz(void* device) const;
  /// The energy the device consumed since the driver was loaded, in millijoules (Volta and
  /// newer); nullopt with `why` set when the device or the driver does not count it.
  std::optional<std::uint64_t> total_energy_mj(void* device, std::string* why = nullptr) const;
  /// The power draw as NVML reports it, in milliwatts (on recent GPUs an average over a short
  /// window the driver chooses); nullopt when it cannot be read.
  std::optional<unsigned> power_mw(void* device) const;

 private:
  std::string error_text(int code) const;

  void* handle_ = nullptr;
  bool initialised_ = false;
  std::string why_;
  // nvmlReturn_t is an int-sized enum (NVML_SUCCESS = 0); nvmlDevice_t an opaque pointer.
  int (*init_)() = nullptr;
  int (*shutdown_)() = nullptr;
  const char* (*error_string_)(int) = nullptr;
  int (*by_uuid_)(const char*, void**) = nullptr;
  int (*clock_info_)(void*, int, unsigned*) = nullptr;
  int (*total_energy_)(void*, unsigned long long*) = nullptr;
  int (*power_usage_)(void*, unsigned*) = nullptr;
};

}  // namespace kl
