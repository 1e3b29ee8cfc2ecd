// Unrolling (unrolling chapter): one block consumes UNROLL data blocks. Each thread first issues
// UNROLL independent, coalesced loads, in[idx], in[idx + blockDim.x], ... a block apart, before it
// uses any of them, combines them pairwise (op(a1, a2) at UNROLL = 2; op(op(a1, a2), op(a3, a4))
// at 4; op(op(op(a1, a2), op(a3, a4)), op(op(a5, a6), op(a7, a8))) at 8, and so on), then runs
// the seed's "interleaved" tree (reduce2's sequential addressing) over the block. 1/UNROLL the
// blocks, and more loads in flight per thread to hide memory latency.
//
// The seed's three copies (unrolling 2, 4 and 8) are the named points reduce_unrolling2, 4 and 8,
// each with the seed's loads and the seed's order of operations, so a float sum gives the same
// bits as the separate files did (their sm_90 machine code is the deleted files', instruction
// for instruction, at every block, dtype and op); UNROLL = 16 is one step further, for `kernlab
// tune --variant reduce_unrolling` (the default job leaves it out).
//
// Deviations: the seed reduces in place in global memory; kernlab times the same input many
// times, so the data go to shared memory and the input is never written. The seed's guards
// (`if (idx + blockDim.x < n)` at 2, `if (idx + 3*blockDim.x < n)` at 4, 7* at 8) are dropped:
// with bounds: padded every tile is whole, and in a partial tile the guards at 4 and 8 would
// drop valid elements idx + blockDim.x ... (not just padding).
/* kernlab
family:  reduce
entry:   reduce_unrolling<BLOCK, UNROLL, T, OP>
blocks:  128 256 512 1024
tune:    UNROLL = 2, 4, 8, 16
tile:    UNROLL * BLOCK
summary: a block consumes UNROLL data blocks, then the in-block tree
points:  reduce_unrolling2(UNROLL=2) "a block consumes 2 data blocks, then the in-block tree"
points:  reduce_unrolling4(UNROLL=4) "a block consumes 4 data blocks, then the in-block tree"
points:  reduce_unrolling8(UNROLL=8) "a block consumes 8 data blocks, then the in-block tree"
order:   10
*/
#include <kernlab/reduce.cuh>

// The pairwise tree of a[FIRST] .. a[FIRST + COUNT - 1], written as the seeds write it:
// op(tree of the first half, tree of the second half), down to op(a1, a2).
template <unsigned FIRST, unsigned COUNT, typename T, typename OP>
__device__ __forceinline__ T pairwise(const T* a, OP op) {
  if constexpr (COUNT == 1)
    return a[FIRST];
  else
    return op(pairwise<FIRST, COUNT / 2>(a, op), pairwise<FIRST + COUNT / 2, COUNT / 2>(a, op));
}

template <unsigned BLOCK, unsigned UNROLL, typename T, typename OP>
__global__ void reduce_unrolling(const T* in, T* out, unsigned int n) {
  static_assert(UNROLL >= 2 && (UNROLL & (UNROLL - 1)) == 0, "UNROLL: a power of two >= 2");
  __shared__ T sdata[BLOCK];
  OP op;
  const unsigned int tid = threadIdx.x;
  const unsigned int idx = blockIdx.x * (blockDim.x * UNROLL) + tid;
  // The loads, a1 .. aUNROLL in order, all issued before any is used. a1 is in[idx] apart, as
  // the seeds write it: as in[idx + 0 * blockDim.x] in the loop it let the compiler fold the
  // index the other way round (the same addresses, other instructions).
  T a[UNROLL];
  a[0] = in[idx];
#pragma unroll
  for (unsigned int k = 1; k < UNROLL; ++k) a[k] = in[idx + k * blockDim.x];
  sdata[tid] = pairwise<0, UNROLL>(a, op);
  __syncthreads();

  for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) sdata[tid] = op(sdata[tid], sdata[tid + stride]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
