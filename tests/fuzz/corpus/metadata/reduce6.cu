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
