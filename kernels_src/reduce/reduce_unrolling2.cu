// Unrolling 2 (unrolling chapter): one block consumes 2 data blocks. Each thread first combines
// in[idx] and in[idx + blockDim.x], then runs the seed's "interleaved" tree (reduce2's sequential
// addressing): half the blocks, and more independent loads in flight per thread.
// Deviations: the seed reduces in place in global memory; kernlab times the same input many
// times, so the data go to shared memory and the input is never written. The seed's
// `if (idx + blockDim.x < n)` guard is dropped: with bounds: padded every tile is whole.
/* kernlab
family:  reduce
entry:   reduce_unrolling2<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    2 * BLOCK
summary: a block consumes 2 data blocks, then the in-block tree
order:   10
*/
#include <kernlab/reduce.cuh>

template <unsigned BLOCK, typename T, typename OP>
__global__ void reduce_unrolling2(const T* in, T* out, unsigned int n) {
  __shared__ T sdata[BLOCK];
  OP op;
  const unsigned int tid = threadIdx.x;
  const unsigned int idx = blockIdx.x * (blockDim.x * 2) + tid;
  sdata[tid] = op(in[idx], in[idx + blockDim.x]);
  __syncthreads();

  for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) sdata[tid] = op(sdata[tid], sdata[tid + stride]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
