// Step 6: many elements per thread (algorithm cascading). A resident grid loops over the input
// with a grid stride of 2 * BLOCK * gridDim.x, each thread folding pairs into a register, then
// one reduce5 tree per block. Fixes vs the seed: it read in[i + blockSize] unchecked (every read
// here is guarded with `< n`, so any n >= 1 and any grid size work without padding); it
// accumulated in shared memory (a register here); and its volatile-only warp steps race since
// Volta, so they take __syncwarp() between read and write.
/* kernlab
family:  reduce
entry:   reduce6<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    2 * BLOCK
grid:    resident
bounds:  checked
summary: many elements per thread (grid-stride loop), completely unrolled tree
order:   6
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
__global__ void reduce6(const T* in, T* out, unsigned int n) {
  static_assert(BLOCK >= 64 && (BLOCK & (BLOCK - 1)) == 0, "BLOCK: a power of two >= 64");
  __shared__ T sdata[BLOCK];
  OP op;
  const unsigned int tid = threadIdx.x;
  const unsigned int grid_size = BLOCK * 2 * gridDim.x;

  // Threads with nothing to read keep the identity (a block may lie wholly past n).
  // No unsigned wrap: n <= 2^31 and gridDim.x <= tiles give grid_size <= 2^31 (2^31 is a
  // multiple of the tile), and i <= n - 1 inside the loop, so i + grid_size < 2^32.
  T acc = OP::identity();
  for (unsigned int i = blockIdx.x * (BLOCK * 2) + tid; i < n; i += grid_size) {
    acc = op(acc, in[i]);
    if (i + BLOCK < n) acc = op(acc, in[i + BLOCK]);  // the seed read this unguarded
  }
  sdata[tid] = acc;
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
