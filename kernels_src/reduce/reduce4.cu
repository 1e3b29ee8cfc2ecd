// Step 4: unroll the last warp. Once s <= 32 only warp 0 works, so the loop stops at s > 32 and
// warp 0 finishes 64 -> 1 without __syncthreads() or `if (tid < s)`, cutting instruction
// overhead. Fix vs the seed: it relied on `volatile` and warp lockstep, a race since Volta's
// independent thread scheduling; each step now reads into a register, __syncwarp(), writes,
// __syncwarp() (volatile kept so every read goes to shared memory).
/* kernlab
family:  reduce
entry:   reduce4<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    2 * BLOCK
summary: reduce3 plus the last warp unrolled (__syncwarp between steps)
order:   4
*/
#include <kernlab/reduce.cuh>

// Warp 0 reduces s[0..63] into s[0]; all 32 lanes of warp 0 must call it. The read and the
// write of a step are split by __syncwarp(), so no lane overwrites s[tid] before another lane
// has read it, and the next step only starts once every lane has written.
template <typename T, typename OP>
__device__ __forceinline__ void warp_reduce(volatile T* s, unsigned int tid) {
  OP op;
  T v;
  v = op(s[tid], s[tid + 32]); __syncwarp(); s[tid] = v; __syncwarp();
  v = op(s[tid], s[tid + 16]); __syncwarp(); s[tid] = v; __syncwarp();
  v = op(s[tid], s[tid + 8]);  __syncwarp(); s[tid] = v; __syncwarp();
  v = op(s[tid], s[tid + 4]);  __syncwarp(); s[tid] = v; __syncwarp();
  v = op(s[tid], s[tid + 2]);  __syncwarp(); s[tid] = v; __syncwarp();
  v = op(s[tid], s[tid + 1]);  __syncwarp(); s[tid] = v;
}

template <unsigned BLOCK, typename T, typename OP>
__global__ void reduce4(const T* in, T* out, unsigned int n) {
  static_assert(BLOCK >= 64, "the unrolled warp step reads s[tid + 32]");
  __shared__ T sdata[BLOCK];
  OP op;
  const unsigned int tid = threadIdx.x;
  const unsigned int i = blockIdx.x * (blockDim.x * 2) + tid;
  sdata[tid] = op(in[i], in[i + blockDim.x]);  // bounds: padded, whole tile readable
  __syncthreads();

  for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) sdata[tid] = op(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid < 32) warp_reduce<T, OP>(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
