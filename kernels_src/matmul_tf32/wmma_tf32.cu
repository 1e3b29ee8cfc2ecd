// The TF32 step: WMMA fragments in TF32 precision (nvcuda::wmma, m16n16k8, float32 accumulators).
// The same tiling as matmul_tc's first step: a block of 4 warps computes a 64 x 64 tile of C,
// each warp a 32 x 32 quarter as 2 x 2 fragments; per 32-wide slice of K the block stages A's
// 64 x 32 and B's 32 x 64 in shared memory, zero-filled past the edges, so any M, N, K works.
// Fragments are loaded as float32 and rounded to TF32 (__float_to_tf32) before the MMA, which the
// instruction requires. Rows padded by 4 floats (16 bytes) keep every fragment 32-byte aligned.
/* kernlab
family:     matmul_tf32
entry:      wmma_tf32<BLOCK>
blocks:     128
summary:    WMMA TF32 16x16x8 fragments, 64x64 block tile, 4 warps of 32x32, K slices of 32
order:      1
*/
#include <mma.h>

using namespace nvcuda;

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK)
    wmma_tf32(const float* A, const float* B, float* C, int M, int N, int K) {
  constexpr int BM = 64, BN = 64, BK = 32, PAD = 4;
  __shared__ __align__(32) float As[BM][BK + PAD];
  __shared__ __align__(32) float Bs[BK][BN + PAD];
  __shared__ __align__(32) float Cs[BM][BN + PAD];
  const int tid = threadIdx.x, warp = tid / 32;
  const int wm = warp / 2, wn = warp % 2;  // the warp's 32 x 32 quarter
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;

  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc[2][2];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = tid; i < BM * BK; i += BLOCK) {
      const int r = i / BK, c = i % BK, gr = bm + r, gc = k0 + c;
      As[r][c] = gr < M && gc < K ? A[(long long)gr * K + gc] : 0.0f;
    }
    for (int i = tid; i < BK * BN; i += BLOCK) {
      const int r = i / BN, c = i % BN, gr = k0 + r, gc = bn + c;
      Bs[r][c] = gr < K && gc < N ? B[(long long)gr * N + gc] : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < BK; kk += 8) {
      wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b[2];
      for (int i = 0; i < 2; ++i) {
        wmma::load_matrix_sync(a[i], &As[wm * 32 + i * 16][kk], BK + PAD);
        for (int t = 0; t < a[i].num_elements; ++t) a[i].x[t] = wmma::__float_to_tf32(a[i].x[t]);
      }
      for (int j = 0; j < 2; ++j) {
        wmma::load_matrix_sync(b[j], &Bs[kk][wn * 32 + j * 16], BN + PAD);
        for (int t = 0; t < b[j].num_elements; ++t) b[j].x[t] = wmma::__float_to_tf32(b[j].x[t]);
      }
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  // Through shared memory, so that only elements inside C are written.
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&Cs[wm * 32 + i * 16][wn * 32 + j * 16], acc[i][j], BN + PAD,
                              wmma::mem_row_major);
  __syncthreads();
  for (int i = tid; i < BM * BN; i += BLOCK) {
    const int r = i / BN, c = i % BN, gr = bm + r, gc = bn + c;
    if (gr < M && gc < N) C[(long long)gr * N + gc] = Cs[r][c];
  }
}
