// Step 1 of the tensor-core ladder: WMMA fragments (nvcuda::wmma, 16x16x16, float32
// accumulators). A block of 4 warps computes a 64 x 64 tile of C, each warp a 32 x 32 quarter as
// 2 x 2 fragments. Per 32-wide slice of K the block stages A's 64 x 32 and B's 32 x 64 in shared
// memory, zero-filled past the matrix's edges, so any M, N, K works; the warps load their
// fragments from there. The accumulators go through shared memory too, so that only elements
// inside C are written. The rows of the shared tiles are padded by 8 elements (16 bytes), which
// keeps every fragment's start 32-byte aligned as load_matrix_sync requires and spreads the rows
// over the banks. What it leaves for the next steps: the loads are plain (no cp.async, no
// double buffering), and WMMA's fragment loads from shared memory are not conflict-free.
/* kernlab
family:     matmul_tc
entry:      wmma_tiled<BLOCK, T>
blocks:     128
dtypes:     bfloat16 float16
summary:    WMMA 16x16x16 fragments, 64x64 block tile, 4 warps of 32x32, zero-filled K slices of 32
order:      1
*/
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

using namespace nvcuda;

template <typename T> __device__ __forceinline__ T zero_of();
template <> __device__ __forceinline__ __half zero_of<__half>() { return __ushort_as_half(0); }
template <> __device__ __forceinline__ __nv_bfloat16 zero_of<__nv_bfloat16>() {
  return __ushort_as_bfloat16(0);
}

template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK)
    wmma_tiled(const T* A, const T* B, float* C, int M, int N, int K) {
  constexpr int BM = 64, BN = 64, BK = 32, PAD = 8;
  __shared__ __align__(32) T As[BM][BK + PAD];
  __shared__ __align__(32) T Bs[BK][BN + PAD];
  __shared__ __align__(32) float Cs[BM][BN + 4];
  const int tid = threadIdx.x, warp = tid / 32;
  const int wm = warp / 2, wn = warp % 2;  // the warp's 32 x 32 quarter
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const T zero = zero_of<T>();

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = tid; i < BM * BK; i += BLOCK) {
      const int r = i / BK, c = i % BK, gr = bm + r, gc = k0 + c;
      As[r][c] = gr < M && gc < K ? A[(long long)gr * K + gc] : zero;
    }
    for (int i = tid; i < BK * BN; i += BLOCK) {
      const int r = i / BN, c = i % BN, gr = k0 + r, gc = bn + c;
      Bs[r][c] = gr < K && gc < N ? B[(long long)gr * N + gc] : zero;
    }
    __syncthreads();
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> b[2];
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(a[i], &As[wm * 32 + i * 16][kk], BK + PAD);
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(b[j], &Bs[kk][wn * 32 + j * 16], BN + PAD);
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&Cs[wm * 32 + i * 16][wn * 32 + j * 16], acc[i][j], BN + 4,
                              wmma::mem_row_major);
  __syncthreads();
  for (int i = tid; i < BM * BN; i += BLOCK) {
    const int r = i / BN, c = i % BN, gr = bm + r, gc = bn + c;
    if (gr < M && gc < N) C[(long long)gr * N + gc] = Cs[r][c];
  }
}
