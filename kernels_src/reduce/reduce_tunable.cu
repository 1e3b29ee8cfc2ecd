// Beyond the seeds, as one tunable file: the resident, single-launch reduction of
// reduce_single_pass with its load shape as tunables, and a cheaper finish for int32 sums.
//
// What the earlier steps measured (H100, results branch: 2026-11-22-h100, -h100-reduce-tuning):
// 16-byte loads (reduce_vec4) and several of them in flight into independent accumulators
// (reduce_multi_acc) reach 93.5 % of the DRAM peak at 2^28; a resident grid striding over the
// input (reduce_persistent) and a single launch finished by the last block to arrive
// (reduce_single_pass) win at 2^20 and 2^24, where fixed costs dominate: 6.88 us at 2^20 (1.24x
// CUB; a launch alone is 2.9 us) and 26.4 us at 2^24 (1.09x), with 1 to 8 loads in flight per
// thread all on one plateau. What is left at 2^20 is the finish: each block stores its partial
// result, fences (__threadfence), takes a ticket with an atomic, and the last block reads every
// partial result back and reduces them.
//
// The kernel: the grid is resident (at most SM count x resident blocks per SM, never more blocks
// than tiles); block b reduces tiles b, b + gridDim.x, ... of VEC * UNROLL * BLOCK elements. The
// input is padded by kernlab with the operation's identity to whole tiles (`bounds: padded`),
// so no load is checked and there is no tail. In a tile, each thread issues UNROLL loads of VEC
// elements (int4/float4 at VEC = 4; kernlab's buffers are 256-byte aligned, so every vector is
// aligned), all before it uses any, then folds them into ACC independent accumulators. The
// block's result comes from warp shuffles (then one warp over the warps' results), and then:
//  - int32 sum: one 64-bit atomicAdd per block into the workspace, of (1 << 48) + the block's
//    sum as an unsigned 32-bit value: the low 48 bits add up the partial sums (a resident grid
//    has at most 32 blocks per SM, a few thousand in all, far fewer than the 2^16 at which a
//    carry would reach bit 48), the high 16 bits count the blocks. The block whose atomic
//    returns count gridDim.x - 1 is the last; the low 32 bits of (returned value + its own
//    addend) are the sum modulo 2^32, exactly what int32 wrap-around gives, in any order of
//    arrival. No partial result is stored or read back, and no fence is needed (the atomic's
//    value is the only thing communicated). The last block writes out[0] and zeroes the word,
//    leaving the workspace as kernlab gave it.
//  - every other operation and type (float sums, min, max): reduce_single_pass's finish, in
//    block order, so the float result is deterministic: the partial result into the workspace,
//    __threadfence, a ticket; the last block reduces the partial results and resets the ticket.
//
// The tunables:
//  - VEC (1, 2, 4): elements per load (4, 8 or 16 bytes).
//  - UNROLL (1, 2, 4, 8, 16): loads in flight per thread per tile. With BLOCK it sets the tile
//    and so the grid at small n: at 2^20, VEC 4, BLOCK 256: UNROLL 1 makes 1024 tiles (a grid of
//    1024 of the 1056 resident blocks on 132 SMs, one load per thread), UNROLL 4 makes 256 blocks
//    of four loads per thread, UNROLL 8 128 blocks. Fewer blocks means fewer atomics on one word
//    and fewer blocks to schedule; more means more SMs pulling bytes.
//  - ACC (1, 2, 4; at most UNROLL): independent accumulators; loaded vector u folds into
//    accumulator u % ACC.
//  - HINT (0, 1): 0 loads plainly; 1 through ld.global.nc.L1::no_allocate.L2::256B: no L1
//    allocation for data used once, and a 256-byte prefetch hint to L2, so each miss fetches a
//    whole 256-byte block from DRAM (fewer, longer DRAM bursts; untried on this chip so far).
//  - BLOCK (128 to 1024).
// Requirements: ACC <= UNROLL; at most 32 elements in flight per thread (VEC * UNROLL <= 32:
// registers, and a tile of at most 32 * 1024 elements, 32 blocks' worth at 2^20).
/* kernlab
family:    reduce
entry:     reduce_tunable<BLOCK, VEC, UNROLL, ACC, HINT, T, OP>
blocks:    128 256 512 1024
tune:      VEC = 1, 2, 4; UNROLL = 1, 2, 4, 8, 16; ACC = 1, 2, 4; HINT = 0, 1
require:   ACC <= UNROLL; VEC * UNROLL <= 32
tile:      VEC * UNROLL * BLOCK
grid:      resident
bounds:    padded
output:    single
workspace: 16 + GRID * TSIZE   # int32 sum: a 64-bit counter and sum; else a ticket, then one partial per block
summary:   resident single-launch reduction: tunable load width, loads in flight and accumulators; int32 sum finished by one 64-bit atomic per block
order:     25
*/
#include <kernlab/reduce.cuh>

namespace rt {

template <typename T, int VEC> struct vec;
template <> struct vec<int, 1> { using type = int; };
template <> struct vec<int, 2> { using type = int2; };
template <> struct vec<int, 4> { using type = int4; };
template <> struct vec<float, 1> { using type = float; };
template <> struct vec<float, 2> { using type = float2; };
template <> struct vec<float, 4> { using type = float4; };

template <typename OP> __device__ __forceinline__ int combine(int x, OP) { return x; }
template <typename OP> __device__ __forceinline__ float combine(float x, OP) { return x; }
template <typename OP> __device__ __forceinline__ int combine(const int2& x, OP op) { return op(x.x, x.y); }
template <typename OP> __device__ __forceinline__ float combine(const float2& x, OP op) { return op(x.x, x.y); }
template <typename OP> __device__ __forceinline__ int combine(const int4& x, OP op) {
  return op(op(x.x, x.y), op(x.z, x.w));
}
template <typename OP> __device__ __forceinline__ float combine(const float4& x, OP op) {
  return op(op(x.x, x.y), op(x.z, x.w));
}

// A vector load: plain (HINT = 0), or (HINT = 1) through the non-coherent path without
// allocating in L1 and with a 256-byte L2 prefetch hint (each miss asks DRAM for the whole
// 256-byte block around it; a warp's 16-byte loads cover 512 contiguous bytes).
#define RT_LD(TYPE, VECQ, SUF, CONS, OUTS, ...)                                                  \
  __device__ __forceinline__ TYPE load_hinted(const TYPE* p) {                                   \
    TYPE x;                                                                                      \
    asm("ld.global.nc.L1::no_allocate.L2::256B" VECQ SUF " " OUTS ", [%" CONS "];"             \
        : __VA_ARGS__                                                                            \
        : "l"(__cvta_generic_to_global(p)));                                                     \
    return x;                                                                                    \
  }
RT_LD(int, "", ".s32", "1", "%0", "=r"(x))
RT_LD(float, "", ".f32", "1", "%0", "=f"(x))
RT_LD(int2, ".v2", ".s32", "2", "{%0, %1}", "=r"(x.x), "=r"(x.y))
RT_LD(float2, ".v2", ".f32", "2", "{%0, %1}", "=f"(x.x), "=f"(x.y))
RT_LD(int4, ".v4", ".s32", "4", "{%0, %1, %2, %3}", "=r"(x.x), "=r"(x.y), "=r"(x.z), "=r"(x.w))
RT_LD(float4, ".v4", ".f32", "4", "{%0, %1, %2, %3}", "=f"(x.x), "=f"(x.y), "=f"(x.z), "=f"(x.w))
#undef RT_LD

template <int HINT, typename V>
__device__ __forceinline__ V load(const V* p) {
  if constexpr (HINT == 0)
    return *p;
  else
    return load_hinted(p);
}

template <typename T, typename OP> struct is_int_sum { static constexpr bool value = false; };
template <> struct is_int_sum<int, kl::sum<int>> { static constexpr bool value = true; };

template <typename T, typename OP>
__device__ __forceinline__ T warp_reduce(T v, OP op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
  return v;
}

// The block's result in thread 0 (every thread must call it). A second call must come after a
// barrier that follows the first (warp 0 reads warp_results after the first call's barrier).
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

}  // namespace rt

template <unsigned BLOCK, int VEC, int UNROLL, int ACC, int HINT, typename T, typename OP>
__global__ void __launch_bounds__(BLOCK)
    reduce_tunable(const T* __restrict__ in, T* out, unsigned int n, void* workspace) {
  using V = typename rt::vec<T, VEC>::type;
  OP op;
  const V* __restrict__ inv = reinterpret_cast<const V*>(in);
  constexpr unsigned TILE = VEC * UNROLL * BLOCK;  // elements; the header's tile
  // n < 2^31 and TILE <= 2^15: no wrap. The padding makes every tile whole (identity past n).
  const unsigned tiles = (n + TILE - 1) / TILE;
  T acc[ACC];
#pragma unroll
  for (int a = 0; a < ACC; ++a) acc[a] = OP::identity();
  for (unsigned tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const unsigned i = tile * (UNROLL * BLOCK) + threadIdx.x;  // in vectors; < 2^29
    V x[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) x[u] = rt::load<HINT>(inv + (i + u * BLOCK));  // every load before any use
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u % ACC] = op(acc[u % ACC], rt::combine(x[u], op));
  }
  T v = acc[0];
#pragma unroll
  for (int a = 1; a < ACC; ++a) v = op(v, acc[a]);
  v = rt::block_reduce<BLOCK>(v, op);

  if constexpr (rt::is_int_sum<T, OP>::value) {
    if (threadIdx.x == 0) {
      unsigned long long* word = static_cast<unsigned long long*>(workspace);
      const unsigned long long add = (1ull << 48) | static_cast<unsigned>(v);
      const unsigned long long old = atomicAdd(word, add);
      if (old >> 48 == gridDim.x - 1) {  // every other block has added its sum
        out[0] = static_cast<int>(static_cast<unsigned>(old + add));
        *word = 0;
      }
    }
  } else {
    unsigned* ticket = static_cast<unsigned*>(workspace);
    volatile T* partials = reinterpret_cast<volatile T*>(static_cast<char*>(workspace) + 16);
    __shared__ bool is_last;
    if (threadIdx.x == 0) {
      partials[blockIdx.x] = v;
      __threadfence();  // the partial result is visible to every block before the ticket is taken
      is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!is_last) return;  // uniform across the block
    // The last block: every other block's partial result is visible; volatile reads go to L2.
    T w = OP::identity();
    for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK) w = op(w, partials[b]);
    w = rt::block_reduce<BLOCK>(w, op);
    if (threadIdx.x == 0) {
      out[0] = w;
      *ticket = 0;  // leave the workspace as it was given: zeroed, for the next launch
    }
  }
}
