// Beyond the seeds, step 2: 16-byte loads, with a correct tail.
// reduce_shfl reads 8 separate 4-byte values per thread; here each thread reads two 16-byte
// vectors (int4/float4): a quarter of the load instructions for the same bytes. kernlab's buffers
// are 256-byte aligned, so the vector view of the input is aligned. The input is not padded
// (`bounds: checked`): the n % 4 elements past the last whole vector are read one by one by the
// last block, so any n is correct.
/* kernlab
family:  reduce
entry:   reduce_vec4<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    8 * BLOCK
bounds:  checked
summary: reduce_shfl with 16-byte vector loads and a scalar tail
order:   21
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
__global__ void reduce_vec4(const T* in, T* out, unsigned int n) {
  using V = typename vec4<T>::type;
  OP op;
  const V* in4 = reinterpret_cast<const V*>(in);
  const unsigned n4 = n / 4;                                // whole vectors
  const unsigned base = blockIdx.x * (2 * BLOCK) + threadIdx.x;  // in vectors: 2 per thread
  T v = OP::identity();
  if (base < n4) v = op(v, combine4(in4[base], op));
  if (base + BLOCK < n4) v = op(v, combine4(in4[base + BLOCK], op));
  // The tail: at most 3 elements after the last whole vector, read by the last block.
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x < n - n4 * 4) v = op(v, in[n4 * 4 + threadIdx.x]);
  v = block_reduce<BLOCK>(v, op);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
