// Hopper's tensor memory accelerator (TMA) from a kernel: the tensor map the host encodes for a
// buffer the header names (`tensor_maps: in[ROWS][COLS] box [32][32] swizzle 128`, passed after
// the family's arguments as `const __grid_constant__ kl_tensor_map`), and the copy of one box
// to shared memory, which completes on an mbarrier with the bytes it wrote. Elements outside the
// array arrive as zeros. sm_90 and later.
#pragma once

#include <kernlab/wgmma_sm90.cuh>  // the mbarriers

// CUtensorMap's 128 opaque bytes, as the kernel parameter that holds them.
struct alignas(64) kl_tensor_map {
  unsigned long long opaque[16];
};

// Makes the mbarriers' initialisation visible to the async proxy (the TMA that completes them);
// then a __syncthreads() before any thread uses them.
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival that also tells the barrier to expect `bytes` more from the copies of this phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

// Fetches the tensor map into the cache ahead of its first copy.
__device__ __forceinline__ void tma_prefetch(const kl_tensor_map& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(&map) : "memory");
}

// Copies the box whose first element is at (x, y) (x the inner coordinate, a column; y the row)
// into shared memory at `dst` (1024-byte aligned for the 128-byte swizzle); `bar` counts its bytes.
__device__ __forceinline__ void tma_load_2d(void* dst, const kl_tensor_map& map, int x, int y,
                                            unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(smem_addr(dst)),
      "l"(&map), "r"(x), "r"(y), "r"(smem_addr(bar))
      : "memory");
}

// Where element (r, c) of a box with 128-byte rows, stored with the 128-byte swizzle, is: the
// 16-byte chunk c / (16 / ESIZE) of row r sits at chunk position (that chunk) ^ (r % 8).
template <int ESIZE>
__device__ __forceinline__ int swizzle128(int r, int c) {
  constexpr int per_chunk = 16 / ESIZE, per_row = 128 / ESIZE;
  return r * per_row + (((c / per_chunk) ^ (r & 7)) * per_chunk) + c % per_chunk;
}
