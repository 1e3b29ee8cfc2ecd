#include "cuda/driver.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <sstream>

namespace kl::cuda {
namespace {

#define KL_STRINGIFY_EXPANDED(x) KL_STRINGIFY(x)
#define KL_STRINGIFY(x) #x

// Loads libcuda.so.1 and resolves every entry point; any failure is a no_device_error.
driver load_driver() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw no_device_error(std::string("cannot load libcuda.so.1 (") + (why ? why : "unknown") +
                          "); is the NVIDIA driver installed?");
  }
  driver d;
#define KL_DRIVER_RESOLVE(fn)                                                              \
  d.fn = reinterpret_cast<decltype(d.fn)>(dlsym(handle, KL_STRINGIFY_EXPANDED(fn)));       \
  if (d.fn == nullptr)                                                                     \
    throw no_device_error(std::string("libcuda.so.1 lacks ") + KL_STRINGIFY_EXPANDED(fn) + \
                          "; the driver is older than the CUDA 12 API kernlab needs");
  KL_DRIVER_FUNCTIONS(KL_DRIVER_RESOLVE)
#undef KL_DRIVER_RESOLVE
  d.cuFuncGetParamInfo =
      reinterpret_cast<decltype(d.cuFuncGetParamInfo)>(dlsym(handle, "cuFuncGetParamInfo"));
  // The handle stays open for the life of the process: the driver cannot be unloaded safely.

  if (CUresult rc = d.cuInit(0); rc != CUDA_SUCCESS) {
    const char* name = nullptr;
    d.cuGetErrorName(rc, &name);
    throw no_device_error(
        std::string("cuInit failed with ") + (name ? name : "an unknown error") +
        (rc == CUDA_ERROR_NO_DEVICE ? " (no CUDA-capable device is present)" : ""));
  }
  int count = 0;
  if (d.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0)
    throw no_device_error("the driver reports no CUDA device");
  return d;
}

}  // namespace

const driver& driver::get() {
  // A failed load is remembered and rethrown, so every caller sees the same reason.
  static const struct loaded {
    driver d;
    std::string error;
    loaded() {
      try {
        d = load_driver();
      } catch (const no_device_error& e) {
        error = e.why();
      }
    }
  } instance;
  if (!instance.error.empty()) throw no_device_error(instance.error);
  return instance.d;
}

std::string describe(CUresult code) {
  const char* name = nullptr;
  const char* text = nullptr;
  try {
    const driver& d = driver::get();
    d.cuGetErrorName(code, &name);
    d.cuGetErrorString(code, &text);
  } catch (const no_device_error&) {
  }
  std::ostringstream out;
  out << (name ? name : "CUDA error " + std::to_string(static_cast<int>(code)));
  if (text) out << ": " << text;
  return out.str();
}

namespace {

// "cuLaunchKernel failed: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered".
// The user needs the CUDA call and its error; the row it belongs to names the variant. Where in
// kernlab the call was made, with its arguments, is for kernlab's developers: KERNLAB_DEBUG=1
// adds it.
std::string error_text(CUresult code, const std::string& call, const char* file, int line) {
  std::string text = call.substr(0, call.find('(')) + " failed: " + describe(code);
  const char* debug = std::getenv("KERNLAB_DEBUG");
  if (debug && *debug && std::string(debug) != "0")
    text += " [kernlab: " + call + " at " + file + ":" + std::to_string(line) + "]";
  return text;
}

}  // namespace

cuda_error::cuda_error(CUresult code, const std::string& call, const char* file, int line)
    : std::runtime_error(error_text(code, call, file, line)), code_(code) {}

}  // namespace kl::cuda
