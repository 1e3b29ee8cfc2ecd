// Unroll-8 plus the last warp unrolled: reduce_unrolling8, with the tree stopping at stride 32
// and warp 0 finishing 64 -> 1 without __syncthreads(). Fix vs the seed: its volatile-only warp
// steps race since Volta's independent thread scheduling; each step here reads into a register,
// __syncwarp(), writes, __syncwarp(). Deviation: the seed works in place in global memory (and
// has a guard that drops a partial tile); here shared memory, input untouched, bounds: padded.
/* kernlab
family:  reduce
entry:   reduce_unroll_warps8<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    8 * BLOCK
summary: unroll 8 data blocks per block, last warp unrolled (__syncwarp between steps)
order:   13
*/
#include <kernlab/reduce.cuh>

// Warp 0 reduces s[0..63] into s[0]; all 32 lanes of warp 0 must call it. Read, __syncwarp(),
// write, __syncwarp(): no lane overwrites a slot another lane still has to read.
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
__global__ void reduce_unroll_warps8(const T* in, T* out, unsigned int n) {
  static_assert(BLOCK >= 64, "the unrolled warp step reads s[tid + 32]");
  __shared__ T sdata[BLOCK];
  OP op;
  const unsigned int tid = threadIdx.x;
  const unsigned int idx = blockIdx.x * (blockDim.x * 8) + tid;
  const T a1 = in[idx];  // bounds: padded, the whole tile of 8 data blocks is readable
  const T a2 = in[idx + blockDim.x];
  const T a3 = in[idx + 2 * blockDim.x];
  const T a4 = in[idx + 3 * blockDim.x];
  const T a5 = in[idx + 4 * blockDim.x];
  const T a6 = in[idx + 5 * blockDim.x];
  const T a7 = in[idx + 6 * blockDim.x];
  const T a8 = in[idx + 7 * blockDim.x];
  sdata[tid] = op(op(op(a1, a2), op(a3, a4)), op(op(a5, a6), op(a7, a8)));
  __syncthreads();

  for (unsigned int stride = blockDim.x / 2; stride > 32; stride >>= 1) {
    if (tid < stride) sdata[tid] = op(sdata[tid], sdata[tid + stride]);
    __syncthreads();
  }
  if (tid < 32) warp_reduce<T, OP>(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
