// Unrolling 4: like reduce_unrolling2, but one block consumes 4 data blocks: each thread issues 4
// independent, coalesced loads before the tree, hiding more memory latency with 1/4 the blocks.
// Deviations: the seed reduces in place in global memory; kernlab times the same input many
// times, so the data go to shared memory and the input is never written. The seed's
// `if (idx + 3*blockDim.x < n)` guard is dropped: with bounds: padded every tile is whole, and
// in a partial tile that guard would drop valid elements idx + blockDim.x ... (not just padding).
/* kernlab
family:  reduce
entry:   reduce_unrolling4<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    4 * BLOCK
summary: a block consumes 4 data blocks, then the in-block tree
order:   11
*/
#include <kernlab/reduce.cuh>

template <unsigned BLOCK, typename T, typename OP>
__global__ void reduce_unrolling4(const T* in, T* out, unsigned int n) {
  __shared__ T sdata[BLOCK];
  OP op;
  const unsigned int tid = threadIdx.x;
  const unsigned int idx = blockIdx.x * (blockDim.x * 4) + tid;
  const T a1 = in[idx];
  const T a2 = in[idx + blockDim.x];
  const T a3 = in[idx + 2 * blockDim.x];
  const T a4 = in[idx + 3 * blockDim.x];
  sdata[tid] = op(op(a1, a2), op(a3, a4));
  __syncthreads();

  for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) sdata[tid] = op(sdata[tid], sdata[tid + stride]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
