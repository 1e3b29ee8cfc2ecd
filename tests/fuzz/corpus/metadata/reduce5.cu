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
