// Beyond the seeds, step 5: one launch instead of two.
// Every variant so far needs a second launch to reduce the blocks' partial results; at 2^20
// elements (4 MiB) the launch and the ramp-up of that second grid cost as much as reading the
// data. Here each block of reduce_persistent's grid stores its partial result in a workspace,
// makes it visible (__threadfence), and takes a ticket from an atomic counter; the block that
// takes the last ticket reduces all the partial results and writes the answer. It reads them in
// block order, whichever block is last, so the result is deterministic (no float atomics). The
// last block also resets the counter to 0, leaving the workspace as kernlab zeroed it.
/* kernlab
family:    reduce
entry:     reduce_single_pass<BLOCK, T, OP>
blocks:    128 256 512 1024
tile:      16 * BLOCK
grid:      resident
bounds:    checked
output:    single            # the kernel writes the final result: one launch
workspace: 16 + GRID * TSIZE # a ticket counter, then one partial result per block
summary:   reduce_persistent finished by the last block to arrive: a single launch
order:     24
*/
#include <kernlab/reduce.cuh>

template <typename T> struct vec4;
template <> struct vec4<int> { using type = int4; };
template <> struct vec4<float> { using type = float4; };

template <typename V, typename OP>
__device__ __forceinline__ auto combine4(const V& x, OP op) {
  return op(op(x.x, x.y), op(x.z, x.w));
}

template <typename T, typename OP>
__device__ __forceinline__ T warp_reduce(T v, OP op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

template <unsigned BLOCK, typename T, typename OP>
__device__ __forceinline__ T block_reduce(T v, OP op) {
  __shared__ T warp_results[BLOCK / 32];
  v = warp_reduce(v, op);
  if (threadIdx.x % 32 == 0) warp_results[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < BLOCK / 32 ? warp_results[threadIdx.x] : OP::identity();
    v = warp_reduce(v, op);
  }
  return v;
}

template <unsigned BLOCK, typename T, typename OP>
__global__ void reduce_single_pass(const T* in, T* out, unsigned int n, void* workspace) {
  using V = typename vec4<T>::type;
  OP op;
  const V* in4 = reinterpret_cast<const V*>(in);
  const unsigned n4 = n / 4;
  const unsigned stride = gridDim.x * (4 * BLOCK);
  T acc[4] = {OP::identity(), OP::identity(), OP::identity(), OP::identity()};
  for (unsigned i = blockIdx.x * (4 * BLOCK) + threadIdx.x; i < n4; i += stride) {
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (i + k * BLOCK < n4) acc[k] = op(acc[k], combine4(in4[i + k * BLOCK], op));
  }
  T v = op(op(acc[0], acc[1]), op(acc[2], acc[3]));
  if (blockIdx.x == 0 && threadIdx.x < n - n4 * 4) v = op(v, in[n4 * 4 + threadIdx.x]);
  v = block_reduce<BLOCK>(v, op);

  unsigned* ticket = static_cast<unsigned*>(workspace);
  volatile T* partials = reinterpret_cast<volatile T*>(static_cast<char*>(workspace) + 16);
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    __threadfence();  // the partial result is visible to every block before the ticket is taken
    is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;  // uniform across the block

  // The last block: every other block's partial result is visible. volatile reads go to L2,
  // past this SM's L1, which may hold nothing stale but is not coherent.
  T w = OP::identity();
  for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK) w = op(w, partials[b]);
  w = block_reduce<BLOCK>(w, op);
  if (threadIdx.x == 0) {
    out[0] = w;
    *ticket = 0;  // leave the workspace as it was given: zeroed, for the next launch
  }
}
