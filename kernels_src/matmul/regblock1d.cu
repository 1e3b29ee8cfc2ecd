// Step 2, 1D register blocking: each thread computes TM elements of one column of C instead of
// one. The block's tile grows to 64x64 (BK = 8 deep) with 128 or 256 threads, so TM = 32 or 16:
// per element of B read from shared memory, a thread does TM multiply-adds (the A values of
// the column come from shared memory as broadcasts, all threads of a warp sharing a row group).
// The tiled kernel did one shared load per multiply-add for each operand; here B's loads are
// amortised over TM, and each global element still is loaded once per block.
/* kernlab
family:     matmul
entry:      regblock1d<BLOCK>
blocks:     128 256
block_dims: BLOCK, 1
grid_dims:  (N + 63) / 64, (M + 63) / 64
summary:    1D register blocking: 64x64 tiles, TM = 4096 / BLOCK outputs per thread
order:      2
*/

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) regblock1d(const float* A, const float* B, float* C,
                                                    int M, int N, int K) {
  constexpr int BM = 64, BN = 64, BK = 8, TM = BM * BN / BLOCK;
  __shared__ float As[BM][BK];
  __shared__ float Bs[BK][BN];
  const int t = threadIdx.x;
  const int col = t % BN;        // this thread's column of the tile
  const int row0 = t / BN * TM;  // and its TM rows
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  float acc[TM];
#pragma unroll
  for (int i = 0; i < TM; ++i) acc[i] = 0.0f;
  for (int k0 = 0; k0 < K; k0 += BK) {
    // Zero-filled past the edges, as in the seed.
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
      const float b = Bs[k][col];
#pragma unroll
      for (int i = 0; i < TM; ++i) acc[i] += As[row0 + i][k] * b;
    }
    __syncthreads();
  }
  const int n = n0 + col;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + row0 + i;
    if (m < M && n < N) C[m * N + n] = acc[i];
  }
}
