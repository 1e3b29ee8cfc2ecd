// cp.async (sm_80 and later): copies from global to shared memory that do not pass through
// registers, 16 bytes (.cg, around L1) or 8 (.ca, through L1), the bytes past src_bytes
// zero-filled, and their commit and wait. A copy has landed for its own thread after
// cp_async_commit() and cp_async_wait<N>() (at most N of the thread's committed groups still
// pending), and for the block's other threads after a barrier as well. Included by the
// tensor-core matmul steps (through <kernlab/mma_sm80.cuh>) and the scan's shared-memory look-back.
#pragma once

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// 16 bytes from global to shared; src_bytes 0 writes zeros and reads nothing.
__device__ __forceinline__ void cp_async16(void* dst, const void* src, unsigned src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(src_bytes));
}
// 8 bytes (one double) from global to shared, through L1 (cp.async.cg takes 16 bytes only);
// src_bytes 0 writes zeros and reads nothing.
__device__ __forceinline__ void cp_async8(void* dst, const void* src, unsigned src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
