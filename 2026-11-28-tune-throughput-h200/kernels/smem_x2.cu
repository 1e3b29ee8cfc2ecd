// Step 5: a tile in shared memory, so that an SM holds more tiles while they look back. In
// lookback_tunable.cu a tile lives in registers (32 elements a thread at its best, 61 registers)
// from its load until its look-back has found its prefix, so an SM holds two blocks of 512, and
// while a block's first warp looks back (the others at a barrier, 33 cycles an instruction under
// Nsight Compute) the block has no load in flight: DRAM runs at 64% of its peak at 2^28, a copy
// at 88%. Here a block copies its tile into shared memory with cp.async (no registers held), and
// reads it twice: once for each warp's sum, once, after the look-back, to write the scan. Few
// registers a thread, so the SM holds as many blocks as its shared memory has tiles (up to 227 KB:
// seven tiles of 32 KB), and while some look back the others are loading.
//
// A tile is BLOCK * ITEMS elements, ITEMS = 4 * LOADS (16-byte vectors); thread t copies the
// tile's vectors t, t + BLOCK, ... (each copy instruction of a warp moves 512 consecutive bytes),
// a vector past N zero-filled (its sum unchanged) and not written. Warp w owns the w-th run of
// 32 * ITEMS elements; lane l reads the run's vectors l, 32 + l, ... (no bank conflicts); the
// first pass sums them, the second scans each vector in its lane and each round of 32 vectors
// across the warp with shuffles, carrying the round's sum to the next. The tile numbers, status
// words and look-back are lookback_tunable.cu's (<kernlab/scan_lookback.cuh>).
//
// The tunables: LOADS, the vectors a thread copies (4 to 16), and ORDER: 0 takes the tile number
// from the workspace's counter, as every other look-back file here does; 1 takes blockIdx.x, as
// CUB does, which saves the counter's atomic round trip and a barrier before the first copy but
// is right only because the GPU starts blocks in the order of their index: a block may wait on a
// lower-numbered tile only if that block has started (a promise CUDA's programming guide does not
// make, and every NVIDIA GPU keeps). Stores are streaming (st.global.cs), lookback_tunable.cu's
// best policy; an L2 prefetch hint on the copies measured no faster.
//
// The named point smem_lookback (LOADS = 8, ORDER = 0) is the family's step 5: with the counter,
// the best point at 2^24 on an H200 (and within 2% of the best at 2^28), 4096 elements (16 KB) a
// tile at 128 threads, thirteen blocks an SM. ORDER = 1 was faster by 3.4% at 2^24 (LOADS = 6)
// and 2.6% at 2^28 (LOADS = 16), both at 256 threads, in the same tune (docs/results.md).
/* kernlab
family:       scan
entry:        smem_lookback<BLOCK, LOADS, ORDER, T>
blocks:       128 256 512 1024
tune:         LOADS = 12, 16, 20, 24, 32; ORDER = 0, 1
require:      BLOCK * LOADS * 16 <= 98304
shared_bytes: BLOCK * LOADS * 16
grid_dims:    ceil_div(N, BLOCK * 4 * LOADS)
summary:      decoupled look-back over a tile copied to shared memory: more tiles an SM
order:        50
*/

#include <kernlab/scan_lookback.cuh>

namespace ks = kl::scan;

template <int BLOCK, int LOADS, int ORDER, typename T>
__global__ void __launch_bounds__(BLOCK)
    smem_lookback(const T* in, T* out, unsigned long long* ws, long long n) {
  constexpr int VEC = 4, ITEMS = VEC * LOADS, WARPS = BLOCK / 32;
  constexpr long long TILE = static_cast<long long>(BLOCK) * ITEMS;
  static_assert(BLOCK % 32 == 0 && WARPS <= 32, "whole warps, at most 32");
  using V = typename ks::vec<T, VEC>::type;
  extern __shared__ __align__(16) unsigned char smem[];
  V* const tile_data = reinterpret_cast<V*>(smem);
  __shared__ unsigned tile_of_block;
  __shared__ T warp_base[WARPS];  // each warp's sum, then the sum of everything before its run
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned long long* const status = ws + 32;  // family.toml: word 0 counts, 32 + i is tile i's

  unsigned tile = blockIdx.x;
  if constexpr (ORDER == 0) {
    if (threadIdx.x == 0) tile_of_block = atomicAdd(reinterpret_cast<unsigned*>(ws), 1u);
    __syncthreads();
    tile = tile_of_block;
  }
  const long long start = tile * TILE;
#pragma unroll
  for (int q = 0; q < LOADS; ++q) {
    const int v = threadIdx.x + BLOCK * q;  // the tile's vector v: elements start + VEC v ..
    const long long e = start + VEC * v;
    const long long left = n - e;  // elements of this vector below n, if fewer than VEC
    const unsigned bytes = left >= VEC ? 16u : left > 0 ? unsigned(left) * sizeof(T) : 0u;
    cp_async16(tile_data + v, bytes ? in + e : in, bytes);
  }
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();

  const V* const run = tile_data + warp * (32 * LOADS) + lane;
  T sum = T(0);
#pragma unroll
  for (int k = 0; k < LOADS; ++k) {
    const V x = run[32 * k];
    sum = sum + ((x.x + x.y) + (x.z + x.w));
  }
#pragma unroll
  for (int d = 1; d < 32; d *= 2) sum = __shfl_xor_sync(ks::kAll, sum, d) + sum;
  if (lane == 0) warp_base[warp] = sum;
  __syncthreads();

  if (warp == 0) ks::block_look_back<WARPS>(warp_base, status, tile, lane);
  __syncthreads();

  T carry = warp_base[warp];  // the sum of everything before this round of the run
  const long long first = start + warp * (32 * ITEMS) + lane * VEC;
  const bool whole = start + TILE <= n;
#pragma unroll
  for (int k = 0; k < LOADS; ++k) {
    V x = run[32 * k];
    x.y = x.x + x.y;
    x.z = x.y + x.z;
    x.w = x.z + x.w;
    const T inclusive = ks::warp_inclusive_scan(x.w, lane);
    T exclusive = __shfl_up_sync(ks::kAll, inclusive, 1);
    if (lane == 0) exclusive = T(0);
    const T p = carry + exclusive;
    x.x = p + x.x;
    x.y = p + x.y;
    x.z = p + x.z;
    x.w = p + x.w;
    const long long i = first + 32 * VEC * k;
    if (whole) {
      ks::store<1>(reinterpret_cast<V*>(out + i), x);
    } else {
#pragma unroll
      for (int e = 0; e < VEC; ++e)
        if (i + e < n) out[i + e] = ks::at(x, e);
    }
    carry = carry + __shfl_sync(ks::kAll, inclusive, 31);
  }
}
