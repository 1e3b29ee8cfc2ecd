// The CUDA driver API, loaded at run time.
//
// kernlab never links libcuda: the binary must start (and list, compile and test) on machines
// with the toolkit but no driver. `driver::get()` dlopens libcuda.so.1 on first use and resolves
// every entry point below; a machine without a driver gets a `no_device_error` that says so.
#pragma once

#include <cuda.h>

#include <stdexcept>
#include <string>

namespace kl::cuda {

// Every driver function kernlab calls. The macro names the function as cuda.h spells it; cuda.h
// maps some names onto versioned symbols (cuMemAlloc -> cuMemAlloc_v2), and the loader resolves
// the expanded name so that the versioned symbol is the one found.
#define KL_DRIVER_FUNCTIONS(X)                   \
  X(cuInit)                                      \
  X(cuDriverGetVersion)                          \
  X(cuGetErrorName)                              \
  X(cuGetErrorString)                            \
  X(cuDeviceGetCount)                            \
  X(cuDeviceGet)                                 \
  X(cuDeviceGetName)                             \
  X(cuDeviceGetAttribute)                        \
  X(cuDeviceTotalMem)                            \
  X(cuDeviceGetUuid)                             \
  X(cuDevicePrimaryCtxRetain)                    \
  X(cuDevicePrimaryCtxRelease)                   \
  X(cuCtxSetCurrent)                             \
  X(cuCtxSynchronize)                            \
  X(cuMemGetInfo)                                \
  X(cuMemAlloc)                                  \
  X(cuMemFree)                                   \
  X(cuMemcpyHtoD)                                \
  X(cuMemcpyDtoH)                                \
  X(cuMemcpyDtoDAsync)                           \
  X(cuMemsetD8Async)                             \
  X(cuMemsetD32Async)                            \
  X(cuModuleLoadData)                            \
  X(cuModuleUnload)                              \
  X(cuModuleGetFunction)                         \
  X(cuFuncGetAttribute)                          \
  X(cuFuncSetAttribute)                          \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) \
  X(cuLaunchKernel)                              \
  X(cuStreamCreate)                              \
  X(cuStreamDestroy)                             \
  X(cuStreamSynchronize)                         \
  X(cuEventCreate)                               \
  X(cuEventDestroy)                              \
  X(cuEventRecord)                               \
  X(cuEventSynchronize)                          \
  X(cuEventElapsedTime)                          \
  X(cuMemHostAlloc)                              \
  X(cuMemFreeHost)                               \
  X(cuMemcpyHtoDAsync)                           \
  X(cuMemcpyDtoHAsync)                           \
  X(cuStreamWaitEvent)                           \
  X(cuStreamBeginCapture)                        \
  X(cuStreamEndCapture)                          \
  X(cuGraphInstantiateWithFlags)                 \
  X(cuGraphUpload)                               \
  X(cuGraphLaunch)                               \
  X(cuGraphExecDestroy)                          \
  X(cuGraphDestroy)                              \
  X(cuTensorMapEncodeTiled)

/// The loaded driver: one function pointer per entry point, with cuda.h's own types.
struct driver {
#define KL_DRIVER_MEMBER(fn) decltype(&::fn) fn = nullptr;
  KL_DRIVER_FUNCTIONS(KL_DRIVER_MEMBER)
#undef KL_DRIVER_MEMBER
  /// Optional (drivers from CUDA 12.4 on): null when the driver lacks it.
  decltype(&::cuFuncGetParamInfo) cuFuncGetParamInfo = nullptr;

  /// Loads and initialises the driver once; throws no_device_error when there is none.
  static const driver& get();
};

/// There is no usable CUDA driver or device here. Everything that needs no GPU still works.
class no_device_error : public std::runtime_error {
 public:
  explicit no_device_error(const std::string& why)
      : std::runtime_error("no CUDA driver/device: " + why), why_(why) {}
  /// The reason alone, without the "no CUDA driver/device: " prefix.
  const std::string& why() const { return why_; }

 private:
  std::string why_;
};

/// A failed driver call: "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY: out of memory", the
/// function and the error's name and meaning. The call's full text and kernlab's source location
/// are added only with KERNLAB_DEBUG=1: they mean nothing to a user.
class cuda_error : public std::runtime_error {
 public:
  cuda_error(CUresult code, const std::string& call, const char* file, int line);
  CUresult code() const { return code_; }

 private:
  CUresult code_;
};

/// "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered"
std::string describe(CUresult code);

/// Throws cuda_error for anything but CUDA_SUCCESS.
inline void check(CUresult code, const char* call, const char* file, int line) {
  if (code != CUDA_SUCCESS) throw cuda_error(code, call, file, line);
}

}  // namespace kl::cuda

/// Calls a driver function through the loaded table and throws on failure, e.g.
/// `KL_CU(cuMemAlloc(&ptr, bytes));`
#define KL_CU(call) ::kl::cuda::check(::kl::cuda::driver::get().call, #call, __FILE__, __LINE__)
