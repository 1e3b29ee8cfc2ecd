// Step 3: first add during the load. Each block consumes 2 * blockDim.x elements and every
// thread combines two of them (one blockDim.x apart, so both loads stay coalesced) before the
// tree, so no thread is idle at the first step and half as many blocks are launched.
// The seed's host grid expression `(n + 2*blockSize - 1 / (2*blockSize))` lacks parentheses;
// kernlab derives the grid from `tile`, and the index below is parenthesized.
/* kernlab
family:  reduce
entry:   reduce3<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    2 * BLOCK
summary: first add during global load, tile of 2 * BLOCK
order:   3
*/
#include <kernlab/reduce.cuh>

template <unsigned BLOCK, typename T, typename OP>
__global__ void reduce3(const T* in, T* out, unsigned int n) {
  __shared__ T sdata[BLOCK];
  OP op;
  const unsigned int tid = threadIdx.x;
  const unsigned int i = blockIdx.x * (blockDim.x * 2) + tid;
  sdata[tid] = op(in[i], in[i + blockDim.x]);  // bounds: padded, whole tile readable
  __syncthreads();

  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = op(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
