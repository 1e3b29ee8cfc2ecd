// Step 3, 2D register blocking: each thread computes an 8x8 block of C. Per step k it loads 8
// values of A and 8 of B from shared memory into registers and does 64 multiply-adds with them
// (an outer product): 16 shared loads for 64 FMAs, against 2 per FMA in the tiled kernel and
// 1 + 1/TM in 1D blocking. The block tile grows to 128 x BN (BN = BLOCK / 2: 64 or 128), so
// each element loaded from global memory serves 64 or 128 multiply-adds.
// Loads stay scalar and bounds-checked; A's tile is stored as it is laid out in memory
// (As[m][k]), which the next steps change.
// It pays on large shapes (H100, 4096^3: 25.3 TFLOP/s against 1D blocking's 19.6), not at
// 1024^3 (8.2 against 11.9): 128-row tiles make only 64 to 128 blocks there, fewer than the
// 132 SMs, and nothing overlaps a block's loads with its math until double buffering (step 6).
/* kernlab
family:     matmul
entry:      regblock2d<BLOCK>
blocks:     128 256
block_dims: BLOCK, 1
grid_dims:  (N + BLOCK / 2 - 1) / (BLOCK / 2), (M + 127) / 128
summary:    2D register blocking: 128 x BLOCK/2 tiles, 8x8 outputs per thread
order:      3
*/

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) regblock2d(const float* A, const float* B, float* C,
                                                    int M, int N, int K) {
  constexpr int BM = 128, BN = BLOCK / 2, BK = 8, TM = 8, TN = 8;
  constexpr int TCOLS = BN / TN;  // threads along a row of the tile
  __shared__ float As[BM][BK];
  __shared__ float Bs[BK][BN];
  const int t = threadIdx.x;
  const int tr = t / TCOLS, tc = t % TCOLS;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  float a[TM], b[TN];
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = t; i < BM * BK; i += BLOCK) {
      const int r = i / BK, c = i % BK;
      As[r][c] = m0 + r < M && k0 + c < K ? A[(m0 + r) * K + k0 + c] : 0.0f;
    }
    for (int i = t; i < BK * BN; i += BLOCK) {
      const int r = i / BN, c = i % BN;
      Bs[r][c] = k0 + r < K && n0 + c < N ? B[(k0 + r) * N + n0 + c] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[tr * TM + i][k];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[k][tc * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + tr * TM + i;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int n = n0 + tc * TN + j;
      if (m < M && n < N) C[m * N + n] = acc[i][j];
    }
  }
}
