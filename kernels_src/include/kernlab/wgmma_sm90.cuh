// The Hopper (sm_90a) building blocks of the matmul_tc ladder's wgmma steps, each one or two PTX
// instructions: mbarriers (init, arrive, parity wait), the generic-to-async proxy fence,
// setmaxnreg, the wgmma fence / commit / wait, shared-memory matrix descriptors and
// wgmma.mma_async m64n128k16 and m64n256k16 with float32 accumulators, A and B from shared
// memory, A K-major and B N-major (a row-major K x N matrix: the transpose bit). The files that
// include this need `target: sm_90a`.
#pragma once

#include <kernlab/mma_sm80.cuh>

// --- mbarriers (shared::cta, 64-bit) ---
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count));
}
// One arrival, with release semantics: the thread's earlier writes are visible to a waiter.
__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar))
               : "memory");
}
// One arrival, made by the hardware once every cp.async this thread issued before it has
// completed (noinc: the barrier's expected count already counts it).
__device__ __forceinline__ void cp_async_mbar_arrive(unsigned long long* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_addr(bar))
               : "memory");
}
// 16 bytes from global to shared (the destination as a shared-window address).
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
// The same with a source size: 0 reads nothing and writes 16 zero bytes.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, unsigned src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void st_shared16(unsigned dst, const unsigned* w) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(w[0]), "r"(w[1]),
               "r"(w[2]), "r"(w[3])
               : "memory");
}
// Waits (acquire) until the phase of the given parity has completed. A fresh barrier is in phase
// 0, so waiting on parity 1 returns at once: the producer's first pass over its empty slots.
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// Shared memory written through the generic proxy (st.shared, cp.async) becomes visible to the
// async proxy (wgmma's operand reads): each writing thread, after its writes, before it signals.
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Registers per thread for the rest of the warpgroup's life (a multiple of 8, 24..256). Needs a
// register cap at entry (__launch_bounds__(threads, 1)).
template <int REGS> __device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS> __device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

// --- wgmma ordering ---
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator reads or writes across a wgmma in flight.
template <int COUNT> __device__ __forceinline__ void wgmma_fence_operands(float* d) {
#pragma unroll
  for (int i = 0; i < COUNT; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// A shared-memory matrix descriptor with the 128-byte swizzle (layout type 1 in bits 62-63): the
// start address, the leading and the stride byte offsets, each in 16-byte units (bits 0-13,
// 16-29, 32-45). The swizzle pattern is taken from the address bits, so each 8-row atom of
// 1024 bytes must start 1024-byte aligned (base offset 0).
//  K-major (A): rows of 64 16-bit elements (128 bytes); stride = 1024 between 8-row groups;
//   leading unused (1). A k16 step moves the start by 32 bytes inside the atom.
//  N-major (B): panels of 64 columns (128-byte rows), one row per k; leading = the stride between
//   64-column panels, stride = 1024 between groups of 8 k rows.
__device__ __forceinline__ unsigned long long wgmma_desc(unsigned addr, unsigned leading,
                                                         unsigned stride) {
  return (unsigned long long)((addr & 0x3FFFF) >> 4) |
         (unsigned long long)((leading >> 4) & 0x3FFF) << 16 |
         (unsigned long long)((stride >> 4) & 0x3FFF) << 32 | 1ull << 62;
}

// --- wgmma.mma_async, float32 accumulators, both operands from shared memory ---
// D (64 x N, float32, in registers: N / 2 a thread) += A (64 x 16, shared, K-major) * B (16 x N,
// shared, N-major: the transpose bit); scale_d 0 makes it D = A * B. One overload per input
// type (the type only names the instruction); the operand lists are spelled once, here.
#define KL_WGMMA_D16(o) \
  "+f"(d[o + 0]), "+f"(d[o + 1]), "+f"(d[o + 2]), "+f"(d[o + 3]), "+f"(d[o + 4]), \
      "+f"(d[o + 5]), "+f"(d[o + 6]), "+f"(d[o + 7]), "+f"(d[o + 8]), "+f"(d[o + 9]), \
      "+f"(d[o + 10]), "+f"(d[o + 11]), "+f"(d[o + 12]), "+f"(d[o + 13]), "+f"(d[o + 14]), \
      "+f"(d[o + 15])
#define KL_WGMMA_D64(o) \
  KL_WGMMA_D16(o), KL_WGMMA_D16(o + 16), KL_WGMMA_D16(o + 32), KL_WGMMA_D16(o + 48)
#define KL_WGMMA_REGS64 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define KL_WGMMA_REGS128 \
  KL_WGMMA_REGS64 \
  ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"

#define KL_WGMMA_M64N128K16(TYPE, PTX_TYPE)                                                  \
  __device__ __forceinline__ void wgmma_m64n128k16(float* d, unsigned long long desc_a,      \
                                                   unsigned long long desc_b, int scale_d,   \
                                                   TYPE) {                                   \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." PTX_TYPE "." PTX_TYPE " {"   \
                 KL_WGMMA_REGS64 "}, %64, %65, p, 1, 1, 0, 1;\n}\n"                           \
                 : KL_WGMMA_D64(0)                                                           \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                  \
  }
#define KL_WGMMA_M64N256K16(TYPE, PTX_TYPE)                                                  \
  __device__ __forceinline__ void wgmma_m64n256k16(float* d, unsigned long long desc_a,      \
                                                   unsigned long long desc_b, int scale_d,   \
                                                   TYPE) {                                   \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                               \
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32." PTX_TYPE "." PTX_TYPE " {"   \
                 KL_WGMMA_REGS128 "}, %128, %129, p, 1, 1, 0, 1;\n}\n"                        \
                 : KL_WGMMA_D64(0), KL_WGMMA_D64(64)                                         \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                  \
  }
KL_WGMMA_M64N128K16(__nv_bfloat16, "bf16")
KL_WGMMA_M64N128K16(__half, "f16")
KL_WGMMA_M64N256K16(__nv_bfloat16, "bf16")
KL_WGMMA_M64N256K16(__half, "f16")
#undef KL_WGMMA_M64N128K16
#undef KL_WGMMA_M64N256K16
#undef KL_WGMMA_REGS128
#undef KL_WGMMA_REGS64
#undef KL_WGMMA_D64
#undef KL_WGMMA_D16
