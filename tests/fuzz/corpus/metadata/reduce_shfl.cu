// Beyond the seeds, step 1: warp shuffles instead of a shared-memory tree.
// reduce_complete_unroll's shape (8 elements per thread, padded tiles), but the block's values are
// combined with __shfl_down_sync inside each warp, then once more across the warps' results: one
// __syncthreads instead of log2(BLOCK), no shared-memory traffic, and no warp-synchronous
// volatile tricks to get right (the shuffles carry their own synchronisation).
/* kernlab
family:  reduce
entry:   reduce_shfl<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    8 * BLOCK
summary: 8 elements per thread, warp-shuffle reduction within and across warps
order:   20
*/
#include <kernlab/reduce.cuh>

template <typename T, typename OP>
__device__ __forceinline__ T warp_reduce(T v, OP op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

