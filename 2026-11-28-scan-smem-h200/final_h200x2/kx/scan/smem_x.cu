// An experiment on smem_lookback.cu (2026-11-28): LOADS around the shipped 8, and ORDER 1 taking the
// tile number from blockIdx.x (as CUB does, relying on blocks starting in order) instead of the
// workspace's counter, which saves an atomic's round trip and a barrier before the first copy.
/* kernlab
family:       scan
entry:        smem_x<BLOCK, LOADS, ORDER, T>
blocks:       128 256
tune:         LOADS = 4, 6, 8, 12, 16; ORDER = 0, 1
shared_bytes: BLOCK * LOADS * 16
grid_dims:    ceil_div(N, BLOCK * 4 * LOADS)
summary:      smem_lookback with tunable loads and tile order
*/

#include <kernlab/scan_lookback.cuh>

namespace ks = kl::scan;

template <int BLOCK, int LOADS, int ORDER, typename T>
__global__ void __launch_bounds__(BLOCK)
    smem_x(const T* in, T* out, unsigned long long* ws, long long n) {
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
    ks::copy16(tile_data + v, bytes ? in + e : in, bytes);
  }
  ks::commit_copies();
  ks::wait_copies<0>();
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

  if (warp == 0) {
    const T total = lane < WARPS ? warp_base[lane] : T(0);
    const T inclusive = ks::warp_inclusive_scan(total, lane);
    const T aggregate = __shfl_sync(ks::kAll, inclusive, 31);  // the tile's sum
    T exclusive = __shfl_up_sync(ks::kAll, inclusive, 1);
    if (lane == 0) exclusive = T(0);
    T before = T(0);  // the sum of every tile before this one
    if (tile == 0) {
      if (lane == 0) ks::store_status(status, ks::status_word(ks::kInclusive, aggregate));
    } else {
      if (lane == 0) ks::store_status(status + tile, ks::status_word(ks::kAggregate, aggregate));
      before = ks::look_back<T>(status, tile, lane);
      if (lane == 0)
        ks::store_status(status + tile, ks::status_word(ks::kInclusive, before + aggregate));
    }
    if (lane < WARPS) warp_base[lane] = before + exclusive;
  }
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
