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
// Everything else is decoupled_lookback.cu's, which says why it is right: tile numbers from the
// workspace's counter, the 64-bit status word (flag and value in one relaxed atomic access), the
// look-back by the first warp, 32 tiles at a time; warp w owns the w-th run of 32 * ITEMS
// elements of the tile, its k-th load is 32 consecutive vectors (one a lane), each vector scanned
// by its lane, each load's vector sums scanned across the warp with shuffles.
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

namespace lt {

constexpr unsigned long long kAggregate = 1;  // status flags; 0: nothing published yet
constexpr unsigned long long kInclusive = 2;
constexpr unsigned kAll = 0xffffffffu;

template <typename T, int VEC> struct vec;
template <> struct vec<int, 1> { using type = int; };
template <> struct vec<int, 2> { using type = int2; };
template <> struct vec<int, 4> { using type = int4; };
template <> struct vec<float, 1> { using type = float; };
template <> struct vec<float, 2> { using type = float2; };
template <> struct vec<float, 4> { using type = float4; };

// Element e of a vector; e is a constant once the loops are unrolled.
__device__ __forceinline__ int& at(int& v, int) { return v; }
__device__ __forceinline__ float& at(float& v, int) { return v; }
__device__ __forceinline__ int& at(int2& v, int e) { return e == 0 ? v.x : v.y; }
__device__ __forceinline__ float& at(float2& v, int e) { return e == 0 ? v.x : v.y; }
__device__ __forceinline__ int& at(int4& v, int e) {
  return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}
__device__ __forceinline__ float& at(float4& v, int e) {
  return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}

// A load through the non-coherent path, without allocating in L1, with a 256-byte L2 prefetch.
#define LT_LD(TYPE, VECQ, SUF, CONS, OUTS, ...)                                                  \
  __device__ __forceinline__ TYPE load_prefetching(const TYPE* p) {                              \
    TYPE x;                                                                                      \
    asm("ld.global.nc.L1::no_allocate.L2::256B" VECQ SUF " " OUTS ", [%" CONS "];"             \
        : __VA_ARGS__                                                                            \
        : "l"(__cvta_generic_to_global(p)));                                                     \
    return x;                                                                                    \
  }
LT_LD(int, "", ".s32", "1", "%0", "=r"(x))
LT_LD(float, "", ".f32", "1", "%0", "=f"(x))
LT_LD(int2, ".v2", ".s32", "2", "{%0, %1}", "=r"(x.x), "=r"(x.y))
LT_LD(float2, ".v2", ".f32", "2", "{%0, %1}", "=f"(x.x), "=f"(x.y))
LT_LD(int4, ".v4", ".s32", "4", "{%0, %1, %2, %3}", "=r"(x.x), "=r"(x.y), "=r"(x.z), "=r"(x.w))
LT_LD(float4, ".v4", ".f32", "4", "{%0, %1, %2, %3}", "=f"(x.x), "=f"(x.y), "=f"(x.z), "=f"(x.w))
#undef LT_LD

template <int HINT, typename V> __device__ __forceinline__ V load(const V* p) {
  if constexpr (HINT == 1)
    return __ldcs(p);
  else if constexpr (HINT == 2)
    return load_prefetching(p);
  else
    return *p;
}
template <int HINT, typename V> __device__ __forceinline__ void store(V* p, const V& v) {
  if constexpr (HINT == 1)
    __stcs(p, v);
  else
    *p = v;
}

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

// Relaxed atomic 64-bit accesses at GPU scope (decoupled_lookback.cu says why that is enough).
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

template <typename T> __device__ __forceinline__ T warp_inclusive_scan(T v, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const T up = __shfl_up_sync(kAll, v, d);
    if (lane >= d) v = up + v;
  }
  return v;
}

// decoupled_lookback.cu's look-back: the exclusive prefix of tile `tile` (> 0), in every lane.
template <typename T>
__device__ __forceinline__ T look_back(const unsigned long long* status, unsigned tile, int lane) {
  T before = T(0);
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
    T v = lane <= stop ? value_of<T>(word) : T(0);
#pragma unroll
    for (int d = 1; d < 32; d *= 2) v = __shfl_xor_sync(kAll, v, d) + v;
    before = v + before;
    if (has_prefix) return before;
    last -= 32;
  }
}

}  // namespace lt

// At least 1024 threads' worth of blocks per SM: up to 64 registers a thread at every block size
// (left to itself, ptxas gives 1024-thread blocks 32 and spills the 16-element points).
template <int BLOCK, int VEC, int LOADS, int HINT, typename T>
__global__ void __launch_bounds__(BLOCK, 1024 / BLOCK)
    lookback_tunable(const T* in, T* out, unsigned long long* ws, long long n) {
  constexpr int ITEMS = VEC * LOADS, WARPS = BLOCK / 32, RUN = 32 * VEC;  // RUN: one warp's load
  constexpr long long TILE = static_cast<long long>(BLOCK) * ITEMS;
  static_assert(BLOCK % 32 == 0 && WARPS <= 32, "BLOCK: whole warps, at most 32");
  using V = typename lt::vec<T, VEC>::type;
  __shared__ unsigned tile_of_block;
  __shared__ T warp_base[WARPS];  // each warp's total, then the sum of everything before its run
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  unsigned long long* const status = ws + 32;  // family.toml: word 0 counts tiles, 32 + i is tile i's

  if (threadIdx.x == 0) tile_of_block = atomicAdd(reinterpret_cast<unsigned*>(ws), 1u);
  __syncthreads();
  const unsigned tile = tile_of_block;
  // This thread's vector k holds elements first + RUN k .. first + RUN k + VEC - 1.
  const long long first = tile * TILE + warp * (32 * ITEMS) + lane * VEC;
  const bool whole = (tile + 1) * TILE <= n;

  V x[LOADS];
  if (whole) {
#pragma unroll
    for (int k = 0; k < LOADS; ++k)
      x[k] = lt::load<HINT>(reinterpret_cast<const V*>(in + first + RUN * k));
  } else {
#pragma unroll
    for (int k = 0; k < LOADS; ++k)
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const long long i = first + RUN * k + e;
        lt::at(x[k], e) = i < n ? in[i] : T(0);  // past n: 0, which changes no sum
      }
  }

  T offset[LOADS];  // the sum of the warp's elements before this lane's vector k
  T carry = T(0);   // the warp's runs 0 .. k - 1
#pragma unroll
  for (int k = 0; k < LOADS; ++k) {
#pragma unroll
    for (int e = 1; e < VEC; ++e) lt::at(x[k], e) = lt::at(x[k], e - 1) + lt::at(x[k], e);
    const T inclusive = lt::warp_inclusive_scan(lt::at(x[k], VEC - 1), lane);
    T exclusive = __shfl_up_sync(lt::kAll, inclusive, 1);
    if (lane == 0) exclusive = T(0);
    offset[k] = carry + exclusive;
    carry = carry + __shfl_sync(lt::kAll, inclusive, 31);
  }
  if (lane == 0) warp_base[warp] = carry;
  __syncthreads();

  if (warp == 0) {
    const T total = lane < WARPS ? warp_base[lane] : T(0);
    const T inclusive = lt::warp_inclusive_scan(total, lane);
    const T aggregate = __shfl_sync(lt::kAll, inclusive, 31);  // the tile's sum
    T exclusive = __shfl_up_sync(lt::kAll, inclusive, 1);
    if (lane == 0) exclusive = T(0);
    T before = T(0);  // the sum of every tile before this one
    if (tile == 0) {
      if (lane == 0) lt::store_status(status, lt::status_word(lt::kInclusive, aggregate));
    } else {
      if (lane == 0) lt::store_status(status + tile, lt::status_word(lt::kAggregate, aggregate));
      before = lt::look_back<T>(status, tile, lane);
      if (lane == 0)
        lt::store_status(status + tile, lt::status_word(lt::kInclusive, before + aggregate));
    }
    if (lane < WARPS) warp_base[lane] = before + exclusive;
  }
  __syncthreads();

  const T base = warp_base[warp];
#pragma unroll
  for (int k = 0; k < LOADS; ++k) {
    const T p = base + offset[k];
    V y;
#pragma unroll
    for (int e = 0; e < VEC; ++e) lt::at(y, e) = p + lt::at(x[k], e);
    const long long i = first + RUN * k;
    if (whole) {
      lt::store<HINT>(reinterpret_cast<V*>(out + i), y);
    } else {
#pragma unroll
      for (int e = 0; e < VEC; ++e)
        if (i + e < n) out[i + e] = lt::at(y, e);
    }
  }
}
