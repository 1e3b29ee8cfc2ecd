// The templated complete unroll: reduce_complete_unroll_warps8 with the block-size checks on
// the template parameter BLOCK instead of blockDim.x, so the compiler drops the impossible steps
// (the index uses BLOCK too). Fixes vs the seed: __syncwarp() in the warp steps (volatile alone
// races since Volta). Deviation: shared memory instead of the seed's in-place global writes,
// input untouched, bounds: padded.
/* kernlab
family:  reduce
entry:   reduce_complete_unroll<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    8 * BLOCK
summary: unroll 8 data blocks, tree unrolled on the template block size, last warp unrolled
order:   15
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
__global__ void reduce_complete_unroll(const T* in, T* out, unsigned int n) {
  static_assert(BLOCK >= 64 && (BLOCK & (BLOCK - 1)) == 0, "BLOCK: a power of two >= 64");
  __shared__ T sdata[BLOCK];
  OP op;
  const unsigned int tid = threadIdx.x;
  const unsigned int idx = blockIdx.x * (BLOCK * 8) + tid;
  const T a1 = in[idx];  // bounds: padded, the whole tile of 8 data blocks is readable
  const T a2 = in[idx + BLOCK];
  const T a3 = in[idx + 2 * BLOCK];
  const T a4 = in[idx + 3 * BLOCK];
  const T a5 = in[idx + 4 * BLOCK];
  const T a6 = in[idx + 5 * BLOCK];
  const T a7 = in[idx + 6 * BLOCK];
  const T a8 = in[idx + 7 * BLOCK];
  sdata[tid] = op(op(op(a1, a2), op(a3, a4)), op(op(a5, a6), op(a7, a8)));
  __syncthreads();

  // As in the seed the barriers stay unconditional; the steps themselves vanish at compile time.
  if (BLOCK >= 1024 && tid < 512) sdata[tid] = op(sdata[tid], sdata[tid + 512]);
  __syncthreads();
  if (BLOCK >= 512 && tid < 256) sdata[tid] = op(sdata[tid], sdata[tid + 256]);
  __syncthreads();
  if (BLOCK >= 256 && tid < 128) sdata[tid] = op(sdata[tid], sdata[tid + 128]);
  __syncthreads();
  if (BLOCK >= 128 && tid < 64) sdata[tid] = op(sdata[tid], sdata[tid + 64]);
  __syncthreads();
  if (tid < 32) warp_reduce<T, OP>(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
