// Step 6: loads that do not wait for the look-back. In lookback_tunable.cu a block's loads are in
// registers, so while its first warp looks back (the others at a barrier) the block has nothing in
// flight: at 2^28 Nsight Compute shows barrier stalls of 33 cycles an instruction and DRAM at 64%
// of its peak against a copy's 88%. Giving each warp its own look-back (warp_lookback.cu) removed
// the barriers but multiplied the look-backs, and ran slower. Here the blocks are persistent (as
// many as fit on the GPU at once, each taking tile after tile from the workspace's counter), and
// each copies its next STAGES - 1 tiles into shared memory with cp.async (no registers held)
// before it scans, looks back and writes the current one, so that the memory system always has
// the next tiles' reads to do while a block waits.
//
// A tile is BLOCK * ITEMS elements, ITEMS = 4 * LOADS (16-byte vectors). Thread t copies the
// tile's vectors t, t + BLOCK, ... (each copy instruction of a warp reads 512 consecutive bytes);
// then warp w reads its run of 32 * ITEMS elements from shared memory as lookback_tunable.cu reads
// it from global memory (lane l's vector k at 32 k + l of the run: no bank conflicts), scans it in
// registers, and the block combines its warps' sums and looks back as there. A vector past N is
// zero-filled by the copy (its sum unchanged) and not written.
//
// Why it cannot deadlock: a block takes its tiles in increasing order and finishes them in that
// order; the first tile not yet finished is therefore the current tile of a running block, whose
// look-back waits only on finished tiles (or tiles whose sum is published: every tile before it).
//
// The tunables: LOADS (vectors a thread, per tile), STAGES (tiles a block has in shared memory:
// the current one and STAGES - 1 ahead) and PF (1: the copies carry a 256-byte L2 prefetch hint).
// Stores are streaming (st.global.cs), lookback_tunable.cu's best policy.
/* kernlab
family:       scan
entry:        staged_lookback<BLOCK, LOADS, STAGES, PF, T>
blocks:       128 256 512 1024
tune:         LOADS = 1, 2, 4, 8; STAGES = 2, 3, 4; PF = 0, 1
require:      STAGES * BLOCK * LOADS * 16 <= 196608
shared_bytes: STAGES * BLOCK * LOADS * 16
grid_dims:    min(RESIDENT_BLOCKS, ceil_div(N, BLOCK * 4 * LOADS))
summary:      persistent blocks copy their next tiles to shared memory (cp.async) while looking back
order:        6
*/

#include <kernlab/scan_lookback.cuh>

namespace ks = kl::scan;

template <int BLOCK, int LOADS, int STAGES, int PF, typename T>
__global__ void __launch_bounds__(BLOCK)
    staged_lookback(const T* in, T* out, unsigned long long* ws, long long n) {
  constexpr int VEC = 4, ITEMS = VEC * LOADS, WARPS = BLOCK / 32;
  constexpr long long TILE = static_cast<long long>(BLOCK) * ITEMS;
  static_assert(BLOCK % 32 == 0 && WARPS <= 32 && STAGES >= 2, "whole warps; two stages at least");
  using V = typename ks::vec<T, VEC>::type;
  extern __shared__ __align__(16) unsigned char smem[];
  V* const stage = reinterpret_cast<V*>(smem);  // stage s: vectors s * BLOCK * LOADS ..
  __shared__ unsigned tile_of_stage[STAGES];
  __shared__ T warp_base[WARPS];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned* const counter = reinterpret_cast<unsigned*>(ws);
  unsigned long long* const status = ws + 32;
  const unsigned long long tiles = (n + TILE - 1) / TILE;

  // Copies tile `tile` (nothing past the last) into stage s, as one commit group.
  auto fetch = [&](int s, unsigned tile) {
    if (tile < tiles) {
#pragma unroll
      for (int q = 0; q < LOADS; ++q) {
        const int v = threadIdx.x + BLOCK * q;  // the tile's vector v: elements VEC v ..
        const long long e = tile * TILE + VEC * v;
        const long long left = n - e;  // elements of this vector below n, if fewer than VEC
        const unsigned bytes = left >= VEC ? 16u : left > 0 ? unsigned(left) * sizeof(T) : 0u;
        ks::copy16<PF>(stage + s * (BLOCK * LOADS) + v, bytes ? in + e : in, bytes);
      }
    }
    ks::commit_copies();
  };

  if (threadIdx.x == 0)
    for (int s = 0; s < STAGES - 1; ++s) tile_of_stage[s] = atomicAdd(counter, 1u);
  __syncthreads();
  for (int s = 0; s < STAGES - 1; ++s) fetch(s, tile_of_stage[s]);

  for (int i = 0;; ++i) {
    const int s = i % STAGES, ahead = (i + STAGES - 1) % STAGES;
    // Stage `ahead` was read in the last iteration, before its barriers: free to refill.
    if (threadIdx.x == 0) tile_of_stage[ahead] = atomicAdd(counter, 1u);
    ks::wait_copies<STAGES - 2>();  // this thread's copies of stage s have landed
    __syncthreads();                // everyone's, and tile_of_stage[ahead] is seen
    const unsigned tile = tile_of_stage[s];
    if (tile >= tiles) break;  // and every later tile of this block: nothing is left in flight
    fetch(ahead, tile_of_stage[ahead]);

    V x[LOADS];
    const V* run = stage + s * (BLOCK * LOADS) + warp * (32 * LOADS) + lane;
#pragma unroll
    for (int k = 0; k < LOADS; ++k) x[k] = run[32 * k];
    T offset[LOADS];
    const T carry = ks::scan_run(x, offset, lane);
    if (lane == 0) warp_base[warp] = carry;
    __syncthreads();

    if (warp == 0) {
      const T total = lane < WARPS ? warp_base[lane] : T(0);
      const T inclusive = ks::warp_inclusive_scan(total, lane);
      const T aggregate = __shfl_sync(ks::kAll, inclusive, 31);
      T exclusive = __shfl_up_sync(ks::kAll, inclusive, 1);
      if (lane == 0) exclusive = T(0);
      T before = T(0);
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

    const long long first = tile * TILE + warp * (32 * ITEMS) + lane * VEC;
    ks::store_run<1>(out, first, n, (tile + 1) * TILE <= n, warp_base[warp], x, offset);
  }
}
