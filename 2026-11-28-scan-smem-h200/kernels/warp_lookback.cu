// Step 5: the look-back of every warp for itself. In lookback_tunable.cu a tile is a block's, and
// the whole block waits at two barriers while its first warp looks back: at 2^28 elements that is
// the top stall (barrier, 35 cycles an instruction under Nsight Compute), and no load of the
// block is in flight meanwhile. Here each warp's run of 32 * ITEMS elements is a tile of its own:
// the warp loads it, scans it in registers, publishes its sum, looks back and writes it, without
// a barrier after the first, so that the warps of an SM are at different points and some are
// always loading. The cost: 32 times more tiles than lookback_tunable.cu's at 1024 threads, each
// with its two status words and its look-back (32 status words read at a time, from L2).
//
// Tile numbers: the block's first thread takes the block's number from the workspace's counter
// (one atomic a block, not a warp: 2^28 / 128 atomics on one address would be a queue of their
// own) and warp w's tile is number * WARPS + w. A warp waits only for tiles before its own: the
// warps before it in its block, which run beside it, and the tiles of blocks that took their
// numbers earlier, which are therefore running or done. So the first unfinished tile never waits.
// A warp whose run starts at or past N has no tile: it returns at once, and no tile after it
// exists. The workspace has a status word per 128 elements, so a run is at least 128 elements.
//
// The tunables: VEC (elements a load), LOADS (loads a thread) and HINT (cache policy) as in
// lookback_tunable.cu; OCC, the threads per SM that ptxas must fit (launch bounds: 1024 allows 64
// registers a thread, 1536 40, 2048 32), since now more warps hide more waiting. Points that would
// spill at that budget are left out: 16 elements a thread above 1536 threads, 32 above 1024.
/* kernlab
family:    scan
entry:     warp_lookback<BLOCK, VEC, LOADS, HINT, OCC, T>
blocks:    128 256 512 1024
tune:      VEC = 1, 2, 4; LOADS = 1, 2, 4, 8; HINT = 0, 1, 2; OCC = 1024, 1536, 2048
require:   VEC * LOADS >= 4; VEC * LOADS <= 32; OCC % BLOCK == 0; VEC * LOADS * OCC <= 24576 || OCC == 1024
grid_dims: ceil_div(N, BLOCK * VEC * LOADS)
summary:   decoupled look-back by every warp for its own tile, no barrier after the first
order:     5
*/

#include <kernlab/scan_lookback.cuh>

namespace ks = kl::scan;

template <int BLOCK, int VEC, int LOADS, int HINT, int OCC, typename T>
__global__ void __launch_bounds__(BLOCK, OCC / BLOCK)
    warp_lookback(const T* in, T* out, unsigned long long* ws, long long n) {
  constexpr int WARPS = BLOCK / 32;
  constexpr long long TILE = 32LL * VEC * LOADS;  // one warp's run
  static_assert(BLOCK % 32 == 0 && TILE >= 128, "whole warps; a status word per 128 elements");
  using V = typename ks::vec<T, VEC>::type;
  __shared__ unsigned block_number;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned long long* const status = ws + 32;  // family.toml: word 0 counts, 32 + i is tile i's

  if (threadIdx.x == 0) block_number = atomicAdd(reinterpret_cast<unsigned*>(ws), 1u);
  __syncthreads();
  const unsigned tile = block_number * WARPS + warp;
  const long long start = tile * TILE;
  if (start >= n) return;
  const long long first = start + lane * VEC;  // this lane's vector k: first + 32 VEC k ..
  const bool whole = start + TILE <= n;

  V x[LOADS];
  ks::load_run<HINT>(in, first, n, whole, x);
  T offset[LOADS];
  const T aggregate = ks::scan_run(x, offset, lane);  // the tile's sum

  T before = T(0);  // the sum of every tile before this one
  if (tile == 0) {
    if (lane == 0) ks::store_status(status, ks::status_word(ks::kInclusive, aggregate));
  } else {
    if (lane == 0) ks::store_status(status + tile, ks::status_word(ks::kAggregate, aggregate));
    before = ks::look_back<T>(status, tile, lane);
    if (lane == 0)
      ks::store_status(status + tile, ks::status_word(ks::kInclusive, before + aggregate));
  }
  ks::store_run<HINT>(out, first, n, whole, before, x, offset);
}
