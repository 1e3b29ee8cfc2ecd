// CPU emulation (scripts/cpu_emulation/run.sh) of the CUDA subset the matmul kernel uses: one std::thread per CUDA thread,
// std::barrier for __syncthreads and __syncwarp, static locals for __shared__, cp.async as per-thread copy queues.
#pragma once
#include <barrier>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <deque>
#include <functional>
#include <memory>
#include <thread>
#include <vector>
#include <cstdio>
#include <cstdlib>

struct dim3e { unsigned x = 0, y = 0, z = 0; };
inline thread_local dim3e threadIdx, blockIdx;
inline dim3e gridDim, blockDim;
struct float4 { float x, y, z, w; };
struct float2 { float x, y; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
inline float2 make_float2(float a, float b) { return {a, b}; }
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)

inline std::barrier<>* g_bar = nullptr;
inline void __syncthreads() { g_bar->arrive_and_wait(); }
// One barrier of 32 threads a warp, for __syncwarp (the C epilogue's staging).
inline std::vector<std::unique_ptr<std::barrier<>>>* g_warp_bars = nullptr;
inline void __syncwarp() { (*g_warp_bars)[threadIdx.x / 32]->arrive_and_wait(); }

// cp.async emulation. Mode 0: the copy lands at issue; mode 1: at the wait that completes it.
inline int g_cp_mode = 0;
struct cp_op { void* dst; const void* src; int bytes, src_bytes; };
inline thread_local std::vector<cp_op> t_open;                 // issued, not committed
inline thread_local std::deque<std::vector<cp_op>> t_groups;   // committed, not complete
inline void cp_do(const cp_op& o) {
  std::memset(o.dst, 0, o.bytes);
  if (o.src_bytes) std::memcpy(o.dst, o.src, o.src_bytes);
}
// Poisons a block's shared arrays with NaN (thread 0), then a barrier.
inline void emu_poison(void* p, size_t n) {
  if (threadIdx.x == 0) { float* f = (float*)p; for (size_t i = 0; i < n / 4; ++i) f[i] = NAN; }
}
