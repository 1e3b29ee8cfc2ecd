// The tensor-core building blocks of the matmul_tc ladder's mma.sync steps (sm_80 and later),
// each one PTX instruction: m16n8k16 MMAs with float32 accumulators, matmul_f64's m8n8k4 DMMA,
// ldmatrix (plain and transposed), and the 16- and 8-byte cp.async of <kernlab/cp_async.cuh>.
// Included by the kernel files, so that each file holds only its own idea.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <kernlab/cp_async.cuh>

template <typename T> __device__ __forceinline__ T zero_of();
template <> __device__ __forceinline__ __half zero_of<__half>() { return __ushort_as_half(0); }
template <> __device__ __forceinline__ __nv_bfloat16 zero_of<__nv_bfloat16>() {
  return __ushort_as_bfloat16(0);
}

// d += a * b for one m16n8k16 tile, float32 accumulators.
__device__ __forceinline__ void mma16816(float* d, const unsigned* a, const unsigned* b, __half) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma16816(float* d, const unsigned* a, const unsigned* b,
                                         __nv_bfloat16) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// d += a * b for one m8n8k4 tile in float64 (DMMA, the FP64 tensor cores). Fragments: a is
// A[lane / 4][lane % 4] of the 8 x 4 tile, b is B[lane % 4][lane / 4] of the 4 x 8 tile, d[0] and
// d[1] are D[lane / 4][2 (lane % 4)] and the column after it.
__device__ __forceinline__ void dmma884(double* d, double a, double b) {
  asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
               : "+d"(d[0]), "+d"(d[1])
               : "d"(a), "d"(b));
}

__device__ __forceinline__ void ldmatrix_x4(unsigned* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
