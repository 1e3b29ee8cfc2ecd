// Step 4, as one tunable file: decoupled_lookback.cu with its tile's shape and its cache policy as
// tunables, for `kernlab tune`. At 2^28 elements a scan is a copy with a dependency: each block
// holds its SM's resources from its first load until its look-back has found its prefix, so what
// decides how close it comes to a copy is how many bytes each SM keeps in flight while blocks
// wait, and how many tiles (look-backs) the array is cut into. Both depend on the tile's shape.
//
// The tunables:
//  - VEC (1, 2, 4): elements per load and store instruction (4, 8 or 16 bytes).
//  - LOADS (1 to 16): loads per thread, all issued before the first is used. ITEMS = VEC * LOADS
//    elements a thread, a tile of BLOCK * ITEMS: more means fewer tiles and look-backs, and more
//    bytes in flight per thread, but more registers, so fewer blocks per SM.
//  - HINT (0, 1, 2): 0 plain loads and stores; 1 the streaming policy (ld.global.cs /
//    st.global.cs, __ldcs / __stcs: evict first), for data touched once: the input read and the
//    output written need not push anything else out of L2 (the status words, which every tile
//    polls, stay); 2 loads through the non-coherent path with no L1 allocation and a 256-byte L2
//    prefetch hint (ld.global.nc.L1::no_allocate.L2::256B: each miss asks DRAM for the whole
//    256-byte block around it, fewer and longer bursts; reduce_tunable.cu's HINT 1), plain stores.
//  - BLOCK (128 to 1024).
// Requirements: at most 32 elements a thread (registers; decoupled_lookback.cu has 4 to 32), and
// tiles of at most 16384 elements (at 2^20, 64 tiles: fewer would leave most SMs idle). The
// smallest tile, 128 elements (VEC = LOADS = 1 at 128 threads), is the smallest the workspace
// counts status words for (family.toml).
//
// Everything else is decoupled_lookback.cu's, which says why it is right, with its pieces in
// <kernlab/scan_lookback.cuh>: tile numbers from the workspace's counter, the 64-bit status word
// (flag and value in one relaxed atomic access), the look-back by the first warp, 32 tiles at a
// time; warp w owns the w-th run of 32 * ITEMS elements of the tile, its k-th load is 32
// consecutive vectors (one a lane), each vector scanned by its lane, each load's vector sums
// scanned across the warp with shuffles.
/* kernlab
family:    scan
entry:     lookback_tunable<BLOCK, VEC, LOADS, HINT, T>
blocks:    128 256 512 1024
tune:      VEC = 1, 2, 4; LOADS = 1, 2, 4, 8, 16; HINT = 0, 1, 2
require:   VEC * LOADS <= 32; VEC * LOADS * BLOCK <= 16384
grid_dims: ceil_div(N, BLOCK * VEC * LOADS)
summary:   decoupled look-back with tunable elements per load, loads per thread and cache policy
order:     4
*/

#include <kernlab/scan_lookback.cuh>

namespace ks = kl::scan;

// At least 1024 threads' worth of blocks per SM: up to 64 registers a thread at every block size
// (left to itself, ptxas gives 1024-thread blocks 32 and spills the 16-element points).
template <int BLOCK, int VEC, int LOADS, int HINT, typename T>
__global__ void __launch_bounds__(BLOCK, 1024 / BLOCK)
    lookback_tunable(const T* in, T* out, unsigned long long* ws, long long n) {
  constexpr int ITEMS = VEC * LOADS, WARPS = BLOCK / 32;
  constexpr long long TILE = static_cast<long long>(BLOCK) * ITEMS;
  static_assert(BLOCK % 32 == 0 && WARPS <= 32, "BLOCK: whole warps, at most 32");
  using V = typename ks::vec<T, VEC>::type;
  __shared__ unsigned tile_of_block;
  __shared__ T warp_base[WARPS];  // each warp's total, then the sum of everything before its run
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned long long* const status =
      ws + 32;  // family.toml: word 0 counts tiles, 32 + i is tile i's

  if (threadIdx.x == 0) tile_of_block = atomicAdd(reinterpret_cast<unsigned*>(ws), 1u);
  __syncthreads();
  const unsigned tile = tile_of_block;
  // This thread's vector k holds elements first + 32 VEC k .. first + 32 VEC k + VEC - 1.
  const long long first = tile * TILE + warp * (32 * ITEMS) + lane * VEC;
  const bool whole = (tile + 1) * TILE <= n;

  V x[LOADS];
  ks::load_run<HINT>(in, first, n, whole, x);
  T offset[LOADS];  // the sum of the warp's elements before this lane's vector k
  const T carry = ks::scan_run(x, offset, lane);  // the warp's run's sum
  if (lane == 0) warp_base[warp] = carry;
  __syncthreads();

  if (warp == 0) ks::block_look_back<WARPS>(warp_base, status, tile, lane);
  __syncthreads();

  ks::store_run<HINT>(out, first, n, whole, warp_base[warp], x, offset);
}
