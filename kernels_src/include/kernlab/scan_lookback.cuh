// The building blocks of the scan family's decoupled look-back files (lookback_tunable.cu,
// smem_lookback_tunable.cu): vectors of 1, 2 or 4 elements and their loads and stores under three
// cache policies, the 64-bit status words that tiles publish in the family's workspace (flag << 32
// | the value's 32 bits; family.toml), a warp's inclusive scan, a warp's run scanned in registers,
// and the look-back by a warp and by a block. decoupled_lookback.cu keeps its own copies so that
// the ladder's steps each read as one file.
#pragma once

#include <kernlab/cp_async.cuh>  // for smem_lookback_tunable.cu

namespace kl::scan {

constexpr unsigned long long kAggregate = 1;  // status flags; 0: nothing published yet
constexpr unsigned long long kInclusive = 2;
constexpr unsigned kAll = 0xffffffffu;

template <typename T, int VEC>
struct vec;
template <>
struct vec<int, 1> {
  using type = int;
};
template <>
struct vec<int, 2> {
  using type = int2;
};
template <>
struct vec<int, 4> {
  using type = int4;
};
template <>
struct vec<float, 1> {
  using type = float;
};
template <>
struct vec<float, 2> {
  using type = float2;
};
template <>
struct vec<float, 4> {
  using type = float4;
};

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
#define KL_SCAN_LD(TYPE, VECQ, SUF, CONS, OUTS, ...)                               \
  __device__ __forceinline__ TYPE load_prefetching(const TYPE* p) {                \
    TYPE x;                                                                        \
    asm("ld.global.nc.L1::no_allocate.L2::256B" VECQ SUF " " OUTS ", [%" CONS "];" \
        : __VA_ARGS__                                                              \
        : "l"(__cvta_generic_to_global(p)));                                       \
    return x;                                                                      \
  }
KL_SCAN_LD(int, "", ".s32", "1", "%0", "=r"(x))
KL_SCAN_LD(float, "", ".f32", "1", "%0", "=f"(x))
KL_SCAN_LD(int2, ".v2", ".s32", "2", "{%0, %1}", "=r"(x.x), "=r"(x.y))
KL_SCAN_LD(float2, ".v2", ".f32", "2", "{%0, %1}", "=f"(x.x), "=f"(x.y))
KL_SCAN_LD(int4, ".v4", ".s32", "4", "{%0, %1, %2, %3}", "=r"(x.x), "=r"(x.y), "=r"(x.z), "=r"(x.w))
KL_SCAN_LD(float4, ".v4", ".f32", "4", "{%0, %1, %2, %3}", "=f"(x.x), "=f"(x.y), "=f"(x.z),
           "=f"(x.w))
#undef KL_SCAN_LD

template <int HINT, typename V>
__device__ __forceinline__ V load(const V* p) {
  if constexpr (HINT == 1)
    return __ldcs(p);
  else if constexpr (HINT == 2)
    return load_prefetching(p);
  else
    return *p;
}
template <int HINT, typename V>
__device__ __forceinline__ void store(V* p, const V& v) {
  if constexpr (HINT == 1)
    __stcs(p, v);
  else
    *p = v;
}

__device__ __forceinline__ unsigned bits_of(int v) { return static_cast<unsigned>(v); }
__device__ __forceinline__ unsigned bits_of(float v) { return __float_as_uint(v); }
template <typename T>
__device__ __forceinline__ T value_of(unsigned long long word);
template <>
__device__ __forceinline__ int value_of<int>(unsigned long long word) {
  return static_cast<int>(static_cast<unsigned>(word));
}
template <>
__device__ __forceinline__ float value_of<float>(unsigned long long word) {
  return __uint_as_float(static_cast<unsigned>(word));
}
template <typename T>
__device__ __forceinline__ unsigned long long status_word(unsigned long long flag, T value) {
  return (flag << 32) | bits_of(value);
}

// Relaxed atomic 64-bit accesses at GPU scope. Enough: a status word carries its flag and its value
// in one access, so a reader that sees a flag sees the value written with it, and the look-back
// reads nothing else another block wrote.
__device__ __forceinline__ unsigned long long load_status(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];"
               : "=l"(v)
               : "l"(__cvta_generic_to_global(p))
               : "memory");
  return v;
}
__device__ __forceinline__ void store_status(unsigned long long* p, unsigned long long v) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;"
               :
               : "l"(__cvta_generic_to_global(p)), "l"(v)
               : "memory");
}

template <typename T>
__device__ __forceinline__ T warp_inclusive_scan(T v, int lane) {
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const T up = __shfl_up_sync(kAll, v, d);
    if (lane >= d) v = up + v;
  }
  return v;
}

// The look-back of decoupled_lookback.cu, by one warp: the exclusive prefix of tile `tile` (> 0),
// the sum of every tile before it, in every lane. It reads 32 tiles' status words at a time, the
// nearest first, waits until each has published something, and adds values back to the nearest
// inclusive prefix.
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

// A block's tile, by its first warp, after each warp w has put its run's sum in warp_base[w]:
// publishes the tile's sum (its aggregate) in its status word, looks back for the sum of every
// tile before it, publishes the inclusive prefix, and leaves in warp_base[w] the sum of
// everything before warp w's run. The block's other warps wait at a barrier meanwhile.
template <int WARPS, typename T>
__device__ __forceinline__ void block_look_back(T* warp_base, unsigned long long* status,
                                                unsigned tile, int lane) {
  const T total = lane < WARPS ? warp_base[lane] : T(0);
  const T inclusive = warp_inclusive_scan(total, lane);
  const T aggregate = __shfl_sync(kAll, inclusive, 31);  // the tile's sum
  T exclusive = __shfl_up_sync(kAll, inclusive, 1);
  if (lane == 0) exclusive = T(0);
  T before = T(0);  // the sum of every tile before this one
  if (tile == 0) {
    if (lane == 0) store_status(status, status_word(kInclusive, aggregate));
  } else {
    if (lane == 0) store_status(status + tile, status_word(kAggregate, aggregate));
    before = look_back<T>(status, tile, lane);
    if (lane == 0) store_status(status + tile, status_word(kInclusive, before + aggregate));
  }
  if (lane < WARPS) warp_base[lane] = before + exclusive;
}

// A warp's run of LOADS * 32 * VEC elements: lane l's vector k holds elements first + 32 VEC k ..
// first + 32 VEC k + VEC - 1, where first = the run's start + VEC l (each load instruction of the
// warp reads 32 consecutive vectors). `whole`: all of them are below n, so vectors are read and
// written whole; otherwise one element at a time, and those past n read as 0, which changes no
// sum, and are not written.
template <int HINT, int LOADS, typename T, typename V>
__device__ __forceinline__ void load_run(const T* in, long long first, long long n, bool whole,
                                         V (&x)[LOADS]) {
  constexpr int VEC = sizeof(V) / sizeof(T), RUN = 32 * VEC;
  if (whole) {
#pragma unroll
    for (int k = 0; k < LOADS; ++k)
      x[k] = load<HINT>(reinterpret_cast<const V*>(in + first + RUN * k));
  } else {
#pragma unroll
    for (int k = 0; k < LOADS; ++k)
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const long long i = first + RUN * k + e;
        at(x[k], e) = i < n ? in[i] : T(0);
      }
  }
}

// Scans the run in registers: each vector in its lane, then each load's vector sums across the
// warp with shuffles. Afterwards x[k] holds the inclusive scan of its vector and offset[k] the sum
// of the run's elements before it; returns the run's sum, in every lane.
template <int LOADS, typename T, typename V>
__device__ __forceinline__ T scan_run(V (&x)[LOADS], T (&offset)[LOADS], int lane) {
  constexpr int VEC = sizeof(V) / sizeof(T);
  T carry = T(0);  // the sum of loads 0 .. k - 1
#pragma unroll
  for (int k = 0; k < LOADS; ++k) {
#pragma unroll
    for (int e = 1; e < VEC; ++e) at(x[k], e) = at(x[k], e - 1) + at(x[k], e);
    const T inclusive = warp_inclusive_scan(at(x[k], VEC - 1), lane);
    T exclusive = __shfl_up_sync(kAll, inclusive, 1);
    if (lane == 0) exclusive = T(0);
    offset[k] = carry + exclusive;
    carry = carry + __shfl_sync(kAll, inclusive, 31);
  }
  return carry;
}

// Writes the run's inclusive scan: element e of vector k is base + offset[k] + x[k].e, base the
// sum of everything before the run.
template <int HINT, int LOADS, typename T, typename V>
__device__ __forceinline__ void store_run(T* out, long long first, long long n, bool whole, T base,
                                          const V (&x)[LOADS], const T (&offset)[LOADS]) {
  constexpr int VEC = sizeof(V) / sizeof(T), RUN = 32 * VEC;
#pragma unroll
  for (int k = 0; k < LOADS; ++k) {
    const T p = base + offset[k];
    V y = x[k];
#pragma unroll
    for (int e = 0; e < VEC; ++e) at(y, e) = p + at(y, e);
    const long long i = first + RUN * k;
    if (whole) {
      store<HINT>(reinterpret_cast<V*>(out + i), y);
    } else {
#pragma unroll
      for (int e = 0; e < VEC; ++e)
        if (i + e < n) out[i + e] = at(y, e);
    }
  }
}

}  // namespace kl::scan
