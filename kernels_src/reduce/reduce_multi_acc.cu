// Beyond the seeds, step 3: more independent loads in flight.
// A memory-bound kernel is limited by how many bytes each SM has requested and not yet received.
// reduce_vec4 issues two 16-byte loads per thread; here each thread issues four, into four
// independent accumulators, so no load waits for the previous one's addition: twice the bytes
// in flight per thread, a quarter as many blocks.
/* kernlab
family:  reduce
entry:   reduce_multi_acc<BLOCK, T, OP>
blocks:  128 256 512 1024
tile:    16 * BLOCK
bounds:  checked
summary: four 16-byte loads per thread into four independent accumulators
order:   22
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
__global__ void reduce_multi_acc(const T* in, T* out, unsigned int n) {
  using V = typename vec4<T>::type;
  OP op;
  const V* in4 = reinterpret_cast<const V*>(in);
  const unsigned n4 = n / 4;
  const unsigned base = blockIdx.x * (4 * BLOCK) + threadIdx.x;  // 4 vectors per thread
  T acc[4];
#pragma unroll
  for (int k = 0; k < 4; ++k)
    acc[k] = base + k * BLOCK < n4 ? combine4(in4[base + k * BLOCK], op) : OP::identity();
  T v = op(op(acc[0], acc[1]), op(acc[2], acc[3]));
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x < n - n4 * 4) v = op(v, in[n4 * 4 + threadIdx.x]);
  v = block_reduce<BLOCK>(v, op);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
