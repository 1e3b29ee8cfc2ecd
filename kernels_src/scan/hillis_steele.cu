// Step 1, the textbook scan in a block, chained from block to block.
//
// A block scans a tile of BLOCK elements, one per thread, with Hillis and Steele's log-step scan:
// at step d = 1, 2, 4, ... every thread t >= d adds the value d places to its left, so after
// log2(BLOCK) steps thread t holds in[0] + ... + in[t] of its tile. Each step reads the values of
// the step before, so the steps go back and forth between two arrays in shared memory (double
// buffering) instead of overwriting a value another thread has yet to read; one barrier a step.
// It does BLOCK * log2(BLOCK) additions where a sequential scan does BLOCK ("naive": not
// work-efficient; blelloch.cu is).
//
// Across blocks, the chained scan (StreamScan, Yan, Long and Zhang 2013): tile t's prefix is the
// inclusive prefix of tile t-1 plus its own sum, so its last thread waits until tile t-1 has
// published that prefix, publishes its own, and only then can the block write its outputs. The
// tiles are numbered by an atomic counter in the workspace, in the order blocks start, never by
// blockIdx: a block waits only on tiles taken by blocks that started before it, which are running
// or done, so no block ever waits on a block the GPU has not scheduled (blocks are not guaranteed
// to start in blockIdx order).
//
// A tile's status is one 64-bit word, (flag << 32) | the value's 32 bits, written and read whole
// as a relaxed atomic: a reader sees the flag and the value of one write together, never a flag
// with a stale value, so no fence is needed (the value travels in the flag's own word, and
// nothing else is communicated). The chain passes from tile to tile one at a time, a global-memory
// round trip each (about half a microsecond): 2^24 elements in tiles of 256 are 65536 links, tens
// of milliseconds. That latency, not the bandwidth, is what this step measures.
/* kernlab
family:    scan
entry:     hillis_steele<BLOCK, T>
blocks:    128 256 512 1024
grid_dims: ceil_div(N, BLOCK)
summary:   Hillis-Steele log-step scan of BLOCK elements in shared memory, blocks chained tile by tile
order:     1
*/

namespace hs {

constexpr unsigned long long kInclusive = 2;  // the status flag: the value is an inclusive prefix

__device__ __forceinline__ unsigned bits_of(int v) { return static_cast<unsigned>(v); }
__device__ __forceinline__ unsigned bits_of(float v) { return __float_as_uint(v); }
template <typename T> __device__ __forceinline__ T value_of(unsigned long long word);
template <> __device__ __forceinline__ int value_of<int>(unsigned long long word) {
  return static_cast<int>(static_cast<unsigned>(word));
}
template <> __device__ __forceinline__ float value_of<float>(unsigned long long word) {
  return __uint_as_float(static_cast<unsigned>(word));
}

// Relaxed atomic 64-bit accesses at GPU scope: one word, never torn; the load is not cached in
// L1, so a polling loop sees another SM's store.
__device__ __forceinline__ unsigned long long load_status(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];"
               : "=l"(v)
               : "l"(__cvta_generic_to_global(p))
               : "memory");
  return v;
}
__device__ __forceinline__ void store_status(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" : : "l"(__cvta_generic_to_global(p)), "l"(v)
               : "memory");
}

}  // namespace hs

template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK)
    hillis_steele(const T* in, T* out, unsigned long long* ws, long long n) {
  __shared__ T buf[2][BLOCK];
  __shared__ unsigned tile_of_block;
  __shared__ T tile_prefix;  // the sum of every tile before this one
  const int t = threadIdx.x;
  unsigned long long* const status = ws + 32;  // family.toml: word 0 counts tiles, 32 + i is tile i's

  if (t == 0) tile_of_block = atomicAdd(reinterpret_cast<unsigned*>(ws), 1u);
  __syncthreads();
  const unsigned tile = tile_of_block;
  const long long i = static_cast<long long>(tile) * BLOCK + t;

  int cur = 0;
  buf[cur][t] = i < n ? in[i] : T(0);  // past n: 0, which changes no sum
  __syncthreads();
#pragma unroll
  for (int d = 1; d < BLOCK; d *= 2) {
    buf[cur ^ 1][t] = t >= d ? buf[cur][t - d] + buf[cur][t] : buf[cur][t];
    cur ^= 1;
    __syncthreads();
  }
  const T local = buf[cur][t];  // in[first of tile] + ... + in[i]

  // The chain: the last thread holds the tile's sum.
  if (t == BLOCK - 1) {
    T before = T(0);
    if (tile > 0) {
      unsigned long long word;
      do {
        word = hs::load_status(status + (tile - 1));
      } while ((word >> 32) != hs::kInclusive);
      before = hs::value_of<T>(word);
    }
    hs::store_status(status + tile, (hs::kInclusive << 32) | hs::bits_of(before + local));
    tile_prefix = before;
  }
  __syncthreads();
  if (i < n) out[i] = tile_prefix + local;
}
