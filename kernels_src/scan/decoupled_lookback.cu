// Step 3, a single-pass scan at the speed of a copy: decoupled look-back (Merrill and Garland,
// "Single-pass Parallel Prefix Scan with Decoupled Look-back", 2016), the algorithm of CUB.
//
// Steps 1 and 2 wait for the previous tile's inclusive prefix before they can publish their own:
// the tiles' prefixes pass down a chain one link at a time, a global-memory round trip each. Here
// a tile publishes two things in its status word, as soon as it has each:
//  - its aggregate (flag A = 1): the sum of its own elements, known as soon as its loads are in,
//    without waiting for anyone;
//  - its inclusive prefix (flag P = 2): the sum of everything up to its end.
// To find its exclusive prefix, a tile's first warp looks back at the 32 tiles before it, one lane
// each, waiting only until each has published something (an aggregate comes a load's time after
// the tile started, not a chain's). If one of them has a P, the closest one ends the look-back:
// the prefix is that P plus the aggregates of the tiles between. If all 32 have only an A, their
// sum is added and the warp looks at the 32 before them. The tile then publishes its P, and every
// later tile that sees it stops there.
//
// The status word is 64 bits, (flag << 32) | the 32 bits of the value, written and read whole as
// relaxed atomics at GPU scope: a reader always gets a flag and the value written with it, never a
// new flag beside a stale value, so no fence is needed between a value and its flag (the value is
// in the flag's word; nothing else passes between blocks). A tile writes its own word twice, A
// then P; a later read of one address never returns an older write (coherence), and either is a
// right answer. Tile numbers come from an atomic counter in the workspace, in the order blocks
// start: a tile waits only on tiles taken by blocks that started before it, which are running or
// done and publish their A without waiting on anything, so no wait depends on a block the GPU has
// not scheduled (blocks are not guaranteed to start in blockIdx order).
//
// In the block: a tile of 4096 elements (BLOCK * ITEMS, ITEMS = 4096 / BLOCK: 32 at 128 threads,
// 4 at 1024), each thread loading ITEMS / 4 16-byte vectors, all issued before any is used.
// Warp w owns the w-th run of 32 * ITEMS elements of the tile; its k-th load instruction reads 32
// consecutive vectors, one a lane (512 contiguous bytes: fully coalesced), and so does each store.
// A lane's four elements of a vector are consecutive, so it scans them itself (three additions);
// the warp then scans the 32 vector sums of load k with shuffles (log-step, five shuffles) and
// carries the k-th run's total into run k + 1. The warps' totals go through shared memory to the
// first warp, which scans them (one more shuffle scan), publishes, looks back, and hands every warp
// its starting value. kernlab's buffers are 256-byte aligned and tiles are 16 KiB, so every
// vector is aligned; the last tile (n not a multiple of 4096) loads and stores element by element
// under a bounds check, and counts 0 past n.
//
// Every sum is the sum of a run of consecutive elements added to the run just before or after it,
// as in the other variants (family.toml: the reason float32 results are exact for its inputs).
/* kernlab
family:    scan
entry:     decoupled_lookback<BLOCK, ITEMS, T>
blocks:    128 256 512 1024
params:    ITEMS = 4096 / BLOCK
grid_dims: ceil_div(N, BLOCK * ITEMS)
summary:   single-pass decoupled look-back (aggregate and prefix flags), 16-byte loads, warp-shuffle scans, 4096-element tiles
order:     3
*/

namespace dl {

constexpr unsigned long long kAggregate = 1;  // status flags; 0: nothing published yet
constexpr unsigned long long kInclusive = 2;
constexpr unsigned kAll = 0xffffffffu;

template <typename T> struct vec4;
template <> struct vec4<int> { using type = int4; };
template <> struct vec4<float> { using type = float4; };

__device__ __forceinline__ unsigned bits_of(int v) { return static_cast<unsigned>(v); }
__device__ __forceinline__ unsigned bits_of(float v) { return __float_as_uint(v); }
template <typename T> __device__ __forceinline__ T value_of(unsigned long long word);
template <> __device__ __forceinline__ int value_of<int>(unsigned long long word) {
  return static_cast<int>(static_cast<unsigned>(word));
}
template <> __device__ __forceinline__ float value_of<float>(unsigned long long word) {
  return __uint_as_float(static_cast<unsigned>(word));
}
template <typename T>
__device__ __forceinline__ unsigned long long status_word(unsigned long long flag, T value) {
  return (flag << 32) | bits_of(value);
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

// Inclusive scan across the warp: lane l gets the sum of lanes 0..l, each step adding the run
// just before its own.
template <typename T> __device__ __forceinline__ T warp_inclusive_scan(T v, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const T up = __shfl_up_sync(kAll, v, d);
    if (lane >= d) v = up + v;
  }
  return v;
}

// The exclusive prefix of tile `tile` (> 0), by the whole first warp: lane l reads the status of
// tile last - l, waiting until it has a flag. Returns the same value in every lane.
template <typename T>
__device__ __forceinline__ T look_back(const unsigned long long* status, unsigned tile, int lane) {
  T before = T(0);  // the sum of the tiles from `last` + 1 to tile - 1
  long long last = static_cast<long long>(tile) - 1;
  while (true) {
    const long long p = last - lane;
    unsigned long long word = kInclusive << 32;  // before tile 0: an inclusive prefix of 0
    if (p >= 0) {
      do {
        word = load_status(status + p);
      } while ((word >> 32) == 0);
    }
    const unsigned has_prefix = __ballot_sync(kAll, (word >> 32) == kInclusive);
    const int stop = has_prefix ? __ffs(static_cast<int>(has_prefix)) - 1 : 31;
    // Lanes 0..stop hold tiles last - stop .. last: their sum, in every lane (each step of the
    // butterfly adds two neighbouring runs of tiles).
    T v = lane <= stop ? value_of<T>(word) : T(0);
#pragma unroll
    for (int d = 1; d < 32; d *= 2) v = __shfl_xor_sync(kAll, v, d) + v;
    before = v + before;
    if (has_prefix) return before;
    last -= 32;
  }
}

}  // namespace dl

template <int BLOCK, int ITEMS, typename T>
__global__ void __launch_bounds__(BLOCK)
    decoupled_lookback(const T* in, T* out, unsigned long long* ws, long long n) {
  constexpr int VEC = 4, LOADS = ITEMS / VEC, WARPS = BLOCK / 32;
  constexpr long long TILE = static_cast<long long>(BLOCK) * ITEMS;
  static_assert(ITEMS % VEC == 0 && LOADS >= 1, "ITEMS: whole 16-byte vectors");
  static_assert(BLOCK % 32 == 0 && WARPS <= 32, "BLOCK: whole warps, at most 32");
  using V = typename dl::vec4<T>::type;
  __shared__ unsigned tile_of_block;
  __shared__ T warp_base[WARPS];  // each warp's total, then the sum of everything before its run
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned long long* const status = ws + 32;  // family.toml: word 0 counts tiles, 32 + i is tile i's

  if (threadIdx.x == 0) tile_of_block = atomicAdd(reinterpret_cast<unsigned*>(ws), 1u);
  __syncthreads();
  const unsigned tile = tile_of_block;
  // This thread's vector k holds elements first + 128 k .. first + 128 k + 3 (128 = 32 lanes x 4).
  const long long first = tile * TILE + warp * (32 * ITEMS) + lane * VEC;
  const bool whole = (tile + 1) * TILE <= n;

  V x[LOADS];
  if (whole) {
#pragma unroll
    for (int k = 0; k < LOADS; ++k) x[k] = *reinterpret_cast<const V*>(in + first + 128 * k);
  } else {
    const auto get = [&](long long i) { return i < n ? in[i] : T(0); };
#pragma unroll
    for (int k = 0; k < LOADS; ++k) {
      const long long i = first + 128 * k;
      x[k].x = get(i);
      x[k].y = get(i + 1);
      x[k].z = get(i + 2);
      x[k].w = get(i + 3);
    }
  }

  // Each vector scanned in place; then run k of the warp (load k's 32 vectors) scanned across
  // lanes. offset[k]: the sum of the warp's elements before this lane's vector k.
  T offset[LOADS];
  T carry = T(0);  // the warp's runs 0 .. k - 1
#pragma unroll
  for (int k = 0; k < LOADS; ++k) {
    x[k].y = x[k].x + x[k].y;
    x[k].z = x[k].y + x[k].z;
    x[k].w = x[k].z + x[k].w;
    const T inclusive = dl::warp_inclusive_scan(x[k].w, lane);
    T exclusive = __shfl_up_sync(dl::kAll, inclusive, 1);
    if (lane == 0) exclusive = T(0);
    offset[k] = carry + exclusive;
    carry = carry + __shfl_sync(dl::kAll, inclusive, 31);
  }
  if (lane == 0) warp_base[warp] = carry;
  __syncthreads();

  if (warp == 0) {
    const T total = lane < WARPS ? warp_base[lane] : T(0);
    const T inclusive = dl::warp_inclusive_scan(total, lane);
    const T aggregate = __shfl_sync(dl::kAll, inclusive, 31);  // the tile's sum
    T exclusive = __shfl_up_sync(dl::kAll, inclusive, 1);
    if (lane == 0) exclusive = T(0);
    T before = T(0);  // the sum of every tile before this one
    if (tile == 0) {
      if (lane == 0) dl::store_status(status, dl::status_word(dl::kInclusive, aggregate));
    } else {
      if (lane == 0) dl::store_status(status + tile, dl::status_word(dl::kAggregate, aggregate));
      before = dl::look_back<T>(status, tile, lane);
      if (lane == 0)
        dl::store_status(status + tile, dl::status_word(dl::kInclusive, before + aggregate));
    }
    if (lane < WARPS) warp_base[lane] = before + exclusive;
  }
  __syncthreads();

  const T base = warp_base[warp];
#pragma unroll
  for (int k = 0; k < LOADS; ++k) {
    const T p = base + offset[k];
    V y;
    y.x = p + x[k].x;
    y.y = p + x[k].y;
    y.z = p + x[k].z;
    y.w = p + x[k].w;
    const long long i = first + 128 * k;
    if (whole) {
      *reinterpret_cast<V*>(out + i) = y;
    } else {
      if (i < n) out[i] = y.x;
      if (i + 1 < n) out[i + 1] = y.y;
      if (i + 2 < n) out[i + 2] = y.z;
      if (i + 3 < n) out[i + 3] = y.w;
    }
  }
}
