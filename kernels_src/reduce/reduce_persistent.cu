// Beyond the seeds, step 4: a persistent grid.
// reduce_multi_acc launches one block per 16*BLOCK elements: 4096 blocks at 2^24, scheduled in
// waves, with a ragged last wave. Here the grid is exactly what fits on the GPU at once
// (`grid: resident`: SM count x resident blocks per SM from the occupancy calculator), and each
// block strides over the input with reduce_multi_acc's four-loads-in-flight body. The second pass
// then has only a few hundred partial results to reduce.
/* kernlab
family:  reduce
entry:   reduce_persistent<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    16 * BLOCK
grid:    resident
bounds:  checked
summary: a resident grid striding over the input, four 16-byte loads in flight per thread
order:   23
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
__global__ void reduce_persistent(const T* in, T* out, unsigned int n) {
  using V = typename vec4<T>::type;
  OP op;
  const V* in4 = reinterpret_cast<const V*>(in);
  const unsigned n4 = n / 4;
  // n4 <= 2^29 and the stride is at most a few million vectors: i + stride cannot wrap.
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
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
