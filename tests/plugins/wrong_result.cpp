// Test plugin: a reduce variant that "succeeds" but writes a wrong value: every byte of the
// int32 output set to 0x01, i.e. 0x01010101 = 16843009, which no test input sums to. kernlab
// must report it as a wrong result with expected and got values.
#include <kernlab/plugin_api.h>

#include <cuda_runtime_api.h>

#include <cstdio>

namespace {

int run(const kl_launch_args* args, char* error, size_t capacity) {
  try {
    const cudaError_t status = cudaMemsetAsync(args->outputs[0], 0x01, sizeof(int32_t),
                                               static_cast<cudaStream_t>(args->stream));
    if (status == cudaSuccess) return KL_STATUS_OK;
    std::snprintf(error, capacity, "planted_wrong: cudaMemsetAsync: %s: %s",
                  cudaGetErrorName(status), cudaGetErrorString(status));
  } catch (...) {
    std::snprintf(error, capacity, "planted_wrong: unexpected exception");
  }
  return KL_STATUS_ERROR;
}

const char* const kDtypes[] = {"int32"};
const char* const kOps[] = {"sum"};
const kl_variant_desc kVariants[] = {{"reduce", "planted_wrong", "writes 0x01010101, always wrong",
                                      nullptr, 0, kDtypes, 1, kOps, 1, 0, nullptr, nullptr, run}};
const kl_plugin kPlugin = {KERNLAB_PLUGIN_ABI_VERSION, "wrong_result", kVariants, 1, nullptr};

}  // namespace

KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin(void) { return &kPlugin; }
