// The nvcc_reduce plugin: reduce5 and reduce6 from kernels_src/reduce/, compiled ahead of time
// by nvcc, so that kernlab can time them beside their NVRTC-compiled twins (same source, same
// driver; only the compiler differs).
#include <kernlab/plugin_api.h>

#include "nvcc_reduce_variants.h"

namespace {

using namespace kernlab::nvcc_reduce;

const uint32_t kBlockSizes[] = {128, 256, 512, 1024};
const char* const kDtypes[] = {"int32", "float32"};
const char* const kOps[] = {"sum", "min", "max"};

const kl_variant_desc kVariants[] = {
    {
        /*family=*/"reduce",
        /*name=*/"reduce5_nvcc",
        /*summary=*/"reduce5 (completely unrolled tree) compiled by nvcc instead of NVRTC",
        /*block_sizes=*/kBlockSizes,
        /*num_block_sizes=*/4,
        /*dtypes=*/kDtypes,
        /*num_dtypes=*/2,
        /*ops=*/kOps,
        /*num_ops=*/3,
        /*is_baseline=*/0,
        /*workspace_size=*/reduce5_workspace_size,
        /*prepare=*/reduce5_prepare,
        /*run=*/reduce5_run,
    },
    {
        /*family=*/"reduce",
        /*name=*/"reduce6_nvcc",
        /*summary=*/"reduce6 (grid-stride loop, resident grid) compiled by nvcc instead of NVRTC",
        /*block_sizes=*/kBlockSizes,
        /*num_block_sizes=*/4,
        /*dtypes=*/kDtypes,
        /*num_dtypes=*/2,
        /*ops=*/kOps,
        /*num_ops=*/3,
        /*is_baseline=*/0,
        /*workspace_size=*/reduce6_workspace_size,
        /*prepare=*/reduce6_prepare,
        /*run=*/reduce6_run,
    },
};

const kl_plugin kPlugin = {KERNLAB_PLUGIN_ABI_VERSION, "nvcc_reduce", kVariants,
                           sizeof kVariants / sizeof kVariants[0], /*release=*/nullptr};

}  // namespace

KERNLAB_PLUGIN_EXPORT const kl_plugin* kernlab_plugin(void) { return &kPlugin; }
