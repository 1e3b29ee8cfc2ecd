// CUDA runtime helpers shared by kernlab's own plugins (see kernlab_plugin_support.h).
#pragma once

#include "kernlab_plugin_support.h"

#include <cuda_runtime_api.h>

namespace kernlab::plugin {

/// True on cudaSuccess; otherwise writes "<what>: <error name>: <error text>" and returns false.
inline bool cuda_ok(cudaError_t status, const char* what, char* error, size_t capacity) {
  if (status == cudaSuccess) return true;
  set_error(error, capacity, "%s: %s: %s", what, cudaGetErrorName(status),
            cudaGetErrorString(status));
  return false;
}

/// kernlab passes a CUstream, which is the same object as a cudaStream_t.
inline cudaStream_t to_stream(void* stream) { return static_cast<cudaStream_t>(stream); }

}  // namespace kernlab::plugin
