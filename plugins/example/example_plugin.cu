// A complete kernlab plugin: one reduce variant, "atomic_sum" (int32, sum, 256 threads).
// Build it with kernlab_add_plugin() (find_package(kernlab); see plugins/example/CMakeLists.txt):
// it needs only the CUDA runtime and <kernlab/plugin_api.h>.
#include <kernlab/plugin_api.h>

#include <cuda_runtime.h>

#include <cstdio>

namespace {

constexpr unsigned kBlock = 256;

// Each thread sums a grid-strided slice, then adds it to *out with one atomicAdd. Unsigned
// arithmetic: int32 sums wrap modulo 2^32, and unsigned overflow is well defined.
__global__ void atomic_sum(const int* in, int* out, unsigned long long n) {
  unsigned sum = 0;
  for (unsigned long long i = blockIdx.x * 1ull * blockDim.x + threadIdx.x; i < n;
       i += 1ull * gridDim.x * blockDim.x) {
    sum += static_cast<unsigned>(in[i]);
  }
  atomicAdd(reinterpret_cast<unsigned*>(out), sum);
}

// kernlab calls run only with what the table below offers: int32, sum, block size 256.
int run(const kl_launch_args* args, char* error, size_t error_capacity) {
  try {  // no C++ exception may cross the C boundary
    const unsigned long long n = args->sizes[0];
    const unsigned long long tiles = (n + kBlock - 1) / kBlock;
    const unsigned blocks = static_cast<unsigned>(tiles < 1024 ? tiles : 1024);  // grid-stride
    auto stream = static_cast<cudaStream_t>(args->stream);
    int* out = static_cast<int*>(args->outputs[0]);
    cudaError_t status = cudaMemsetAsync(out, 0, sizeof(int), stream);
    if (status == cudaSuccess) {
      atomic_sum<<<blocks, kBlock, 0, stream>>>(static_cast<const int*>(args->inputs[0]), out, n);
      status = cudaGetLastError();
    }
    if (status == cudaSuccess) return KL_STATUS_OK;
    std::snprintf(error, error_capacity, "atomic_sum: %s", cudaGetErrorString(status));
  } catch (...) {
    std::snprintf(error, error_capacity, "atomic_sum: unexpected exception");
  }
  return KL_STATUS_ERROR;
}

const uint32_t kBlockSizes[] = {kBlock};
const char* const kDtypes[] = {"int32"};
const char* const kOps[] = {"sum"};
const kl_variant_desc kVariants[] = {
    {"reduce", "atomic_sum", "grid-stride loop, one atomicAdd per thread",  // family, name, summary
     kBlockSizes, 1, kDtypes, 1, kOps, 1,                                   // what it offers
     /*is_baseline=*/0, /*workspace_size=*/nullptr, /*prepare=*/nullptr, run}};
const kl_plugin kPlugin = {KERNLAB_PLUGIN_ABI_VERSION, "example", kVariants, 1,
                           /*release=*/nullptr};  // nothing to free before unload

}  // namespace

// The one exported symbol (C linkage, default visibility): kernlab looks it up by this name and
// checks abi_version first.
KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin(void) { return &kPlugin; }
