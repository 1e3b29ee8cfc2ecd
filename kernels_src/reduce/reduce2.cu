// Step 2: sequential addressing. The stride starts at blockDim.x/2 and halves; thread tid
// combines sdata[tid] and sdata[tid + s]. Consecutive lanes touch consecutive words, so the bank
// conflicts of reduce1 are gone and the active threads stay contiguous. Still, half the threads
// are idle from the very first step (fixed by reduce3).
/* kernlab
family:  reduce
entry:   reduce2<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    BLOCK
summary: sequential addressing (conflict-free, half the threads idle at the first step)
order:   2
*/
#include <kernlab/reduce.cuh>

template <unsigned BLOCK, typename T, typename OP>
__global__ void reduce2(const T* in, T* out, unsigned int n) {
  __shared__ T sdata[BLOCK];
  OP op;
  const unsigned int tid = threadIdx.x;
  const unsigned int i = blockIdx.x * blockDim.x + tid;
  sdata[tid] = in[i];  // bounds: padded, so the whole tile is readable
  __syncthreads();

  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = op(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
