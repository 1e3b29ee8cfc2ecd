// Step 1: same interleaved tree as reduce0, but thread tid works on index 2*s*tid, so the
// active threads are contiguous: no % and no divergence inside warps that work. The price is
// a strided shared-memory index: lanes of a warp hit the same bank (2*s*tid mod 32), so
// accesses serialize (bank conflicts), growing worse as s grows.
/* kernlab
family:  reduce
entry:   reduce1<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    BLOCK
summary: interleaved addressing, strided index (no divergence, bank conflicts)
order:   1
*/
#include <kernlab/reduce.cuh>

template <unsigned BLOCK, typename T, typename OP>
__global__ void reduce1(const T* in, T* out, unsigned int n) {
  __shared__ T sdata[BLOCK];
  OP op;
  const unsigned int tid = threadIdx.x;
  const unsigned int i = blockIdx.x * blockDim.x + tid;
  sdata[tid] = in[i];  // bounds: padded, so the whole tile is readable
  __syncthreads();

  for (unsigned int s = 1; s < blockDim.x; s *= 2) {
    const unsigned int index = 2 * s * tid;  // at most 2 * 512 * 1023: no overflow
    if (index + s < blockDim.x) sdata[index] = op(sdata[index], sdata[index + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
