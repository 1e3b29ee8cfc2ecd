// Step 0 of the seven classic steps: the naive tree in shared memory with interleaved
// addressing. Each thread loads one element; at stride s only threads with tid % (2*s) == 0 work.
// The % is a slow integer division and the active threads are scattered over every warp, so
// warps diverge. The loop runs to blockDim.x, as in the seed, so % keeps a runtime divisor;
// BLOCK only sizes the shared array.
/* kernlab
family:  reduce
entry:   reduce0<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    BLOCK
summary: interleaved addressing with %, divergent warps
order:   0
*/
#include <kernlab/reduce.cuh>

template <unsigned BLOCK, typename T, typename OP>
__global__ void reduce0(const T* in, T* out, unsigned int n) {
  __shared__ T sdata[BLOCK];
  OP op;
  const unsigned int tid = threadIdx.x;
  const unsigned int i = blockIdx.x * blockDim.x + tid;
  sdata[tid] = in[i];  // bounds: padded, so the whole tile is readable
