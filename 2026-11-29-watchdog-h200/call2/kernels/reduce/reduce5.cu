// Step 5: completely unrolled. The block size is the template parameter BLOCK, so every
// `if (BLOCK >= ...)` below is decided at compile time and the tree has no loop left. Beyond
// the seed (which stops at 512) a 1024 -> 512 step is added. Fix vs the seed: the warp steps
// use __syncwarp() between read and write instead of relying on `volatile` alone, which races
// under Volta's independent thread scheduling.
/* kernlab
family:  reduce
entry:   reduce5<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    2 * BLOCK
summary: completely unrolled tree, block size as a template parameter
order:   5
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
__global__ void reduce5(const T* in, T* out, unsigned int n) {
  static_assert(BLOCK >= 64 && (BLOCK & (BLOCK - 1)) == 0, "BLOCK: a power of two >= 64");
  __shared__ T sdata[BLOCK];
  OP op;
  const unsigned int tid = threadIdx.x;
  const unsigned int i = blockIdx.x * (BLOCK * 2) + tid;
  sdata[tid] = op(in[i], in[i + BLOCK]);  // bounds: padded, whole tile readable
  __syncthreads();

  if (BLOCK >= 1024) {
    if (tid < 512) sdata[tid] = op(sdata[tid], sdata[tid + 512]);
    __syncthreads();
  }
  if (BLOCK >= 512) {
    if (tid < 256) sdata[tid] = op(sdata[tid], sdata[tid + 256]);
    __syncthreads();
  }
  if (BLOCK >= 256) {
    if (tid < 128) sdata[tid] = op(sdata[tid], sdata[tid + 128]);
    __syncthreads();
  }
  if (BLOCK >= 128) {
    if (tid < 64) sdata[tid] = op(sdata[tid], sdata[tid + 64]);
    __syncthreads();
  }
  if (tid < 32) warp_reduce<T, OP>(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
