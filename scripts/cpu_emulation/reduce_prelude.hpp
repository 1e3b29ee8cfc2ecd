// CPU emulation (scripts/cpu_emulation/run.sh) of the CUDA subset reduce_tunable.cu uses.
#pragma once
#include <barrier>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
#include <memory>
struct dim3e { unsigned x = 0, y = 0, z = 0; };
inline thread_local dim3e threadIdx, blockIdx;
inline dim3e gridDim, blockDim;
struct int2 { int x, y; }; struct int4 { int x, y, z, w; };
struct float2 { float x, y; }; struct float4 { float x, y, z, w; };
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__
inline std::barrier<>* g_bar = nullptr;
inline std::vector<std::unique_ptr<std::barrier<>>> g_warp_bars;
inline uint64_t g_slots[32][32];
inline void __syncthreads() { g_bar->arrive_and_wait(); }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
template <class T> T __shfl_down_sync(unsigned, T v, int off) {
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  uint64_t b = 0; std::memcpy(&b, &v, sizeof(T));
  __atomic_store_n(&g_slots[w][l], b, __ATOMIC_SEQ_CST);
  g_warp_bars[w]->arrive_and_wait();
  T r = v;
  if (l + off < 32) { uint64_t o = __atomic_load_n(&g_slots[w][l + off], __ATOMIC_SEQ_CST); std::memcpy(&r, &o, sizeof(T)); }
  g_warp_bars[w]->arrive_and_wait();
  return r;
}
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
