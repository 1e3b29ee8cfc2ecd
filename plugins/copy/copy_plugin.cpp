// qam256.d2d_copy: cudaMemcpyAsync of the 8n input bytes into the 8n-byte output, device to
// device. A demapper reads 8 bytes and writes 8 bytes per symbol; so does this copy, with no
// arithmetic at all, which makes it the bandwidth a demapper can hope to reach on this device.
//
// It is the qam256 family's baseline (is_baseline), so the table's "x d2d_copy" column shows each
// kernel against it. It cannot make soft bits: the family checks a qam256 baseline as what it is,
// a copy, byte for byte against the input (docs/kernel_contract.md, "The qam256 family").
#include <kernlab/plugin_api.h>

#include "kernlab_plugin_cuda.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace {

using namespace kernlab::plugin;

int copy_run(const kl_launch_args* args, char* error, size_t capacity) {
  return guarded("d2d_copy run", error, capacity, [&]() -> int {
    if (args == nullptr || args->family == nullptr || std::strcmp(args->family, "qam256") != 0) {
      set_error(error, capacity, "d2d_copy: only the qam256 family");
      return KL_STATUS_UNSUPPORTED;
    }
    if (args->num_inputs < 1 || args->num_outputs < 1 || args->num_sizes < 1 ||
        args->inputs == nullptr || args->outputs == nullptr || args->sizes == nullptr ||
        args->inputs[0] == nullptr || args->outputs[0] == nullptr) {
      set_error(error, capacity, "d2d_copy: needs inputs[0], outputs[0] and sizes[0] = n");
      return KL_STATUS_ERROR;
    }
    const std::uint64_t bytes = 8 * args->sizes[0];  // one float2 per symbol
    const cudaError_t status = cudaMemcpyAsync(args->outputs[0], args->inputs[0], bytes,
                                               cudaMemcpyDeviceToDevice, to_stream(args->stream));
    return cuda_ok(status, "cudaMemcpyAsync (device to device)", error, capacity) ? KL_STATUS_OK
                                                                                  : KL_STATUS_ERROR;
  });
}

const char* const kDtypes[] = {"float32"};
const char* const kOps[] = {"demap"};

const kl_variant_desc kVariants[] = {{
    /*family=*/"qam256",
    /*name=*/"d2d_copy",
    /*summary=*/"cudaMemcpyAsync device to device of the 8n input bytes: the bandwidth reference",
    /*block_sizes=*/nullptr,  // the copy engine or the runtime's kernel chooses
    /*num_block_sizes=*/0,
    /*dtypes=*/kDtypes,
    /*num_dtypes=*/1,
    /*ops=*/kOps,
    /*num_ops=*/1,
    /*is_baseline=*/1,
    /*workspace_size=*/nullptr,
    /*prepare=*/nullptr,
    /*run=*/copy_run,
}};

const kl_plugin kPlugin = {KERNLAB_PLUGIN_ABI_VERSION, "copy", kVariants, 1, nullptr};

}  // namespace

KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin(void) { return &kPlugin; }
