// Step 4, vectorized loads: 2D register blocking (step 3), with 16-byte accesses wherever they
// are allowed. Global loads of A and B and stores of C move float4s, and A's tile is stored
// transposed (As[k][m]), so that the 8 A values a thread needs at step k are contiguous and
// come from shared memory as two float4 loads, like B's.
//
// A float4 of A at (m, k) is 16-byte aligned only if A itself is, K % 4 == 0 and k % 4 == 0
// (likewise B with N, C with N); kernlab's buffers are 256-byte aligned, but the kernel checks
// its pointers anyway. The fast path takes a float4 that is aligned and wholly inside the
// matrix; anything else (an odd N or K, the last partial float4 of a row) takes the edge path:
// the same four elements one at a time, each bounds-checked, zero past the edge.
/* kernlab
family:     matmul
entry:      vectorized<BLOCK>
blocks:     128 256
block_dims: BLOCK, 1
grid_dims:  (N + BLOCK / 2 - 1) / (BLOCK / 2), (M + 127) / 128
summary:    + float4 global loads and stores (aligned fast path, checked edge path), A transposed in shared memory
order:      4
*/

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) vectorized(const float* A, const float* B, float* C,
                                                    int M, int N, int K) {
  constexpr int BM = 128, BN = BLOCK / 2, BK = 8, TM = 8, TN = 8;
  constexpr int TCOLS = BN / TN;
  __shared__ __align__(16) float As[BK][BM];
  __shared__ __align__(16) float Bs[BK][BN];
  const int t = threadIdx.x;
  const int tr = t / TCOLS, tc = t % TCOLS;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const bool a_vec = (reinterpret_cast<unsigned long long>(A) % 16 == 0) && K % 4 == 0;
  const bool b_vec = (reinterpret_cast<unsigned long long>(B) % 16 == 0) && N % 4 == 0;
  const bool c_vec = (reinterpret_cast<unsigned long long>(C) % 16 == 0) && N % 4 == 0;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int i = t; i < BM * BK / 4; i += BLOCK) {
      const int r = i / (BK / 4), kq = i % (BK / 4) * 4;
      const int m = m0 + r, k = k0 + kq;
      float4 v;
      if (a_vec && m < M && k + 3 < K) {
        v = *reinterpret_cast<const float4*>(&A[m * K + k]);
      } else {
        v.x = m < M && k < K ? A[m * K + k] : 0.0f;
        v.y = m < M && k + 1 < K ? A[m * K + k + 1] : 0.0f;
        v.z = m < M && k + 2 < K ? A[m * K + k + 2] : 0.0f;
        v.w = m < M && k + 3 < K ? A[m * K + k + 3] : 0.0f;
      }
      As[kq + 0][r] = v.x;
      As[kq + 1][r] = v.y;
      As[kq + 2][r] = v.z;
      As[kq + 3][r] = v.w;
    }
    for (int i = t; i < BK * BN / 4; i += BLOCK) {
      const int r = i / (BN / 4), c = i % (BN / 4) * 4;
      const int k = k0 + r, n = n0 + c;
      float4 v;
      if (b_vec && k < K && n + 3 < N) {
        v = *reinterpret_cast<const float4*>(&B[k * N + n]);
      } else {
        v.x = k < K && n < N ? B[k * N + n] : 0.0f;
        v.y = k < K && n + 1 < N ? B[k * N + n + 1] : 0.0f;
        v.z = k < K && n + 2 < N ? B[k * N + n + 2] : 0.0f;
        v.w = k < K && n + 3 < N ? B[k * N + n + 3] : 0.0f;
      }
      *reinterpret_cast<float4*>(&Bs[r][c]) = v;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[k][tr * TM]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[k][tr * TM + 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[k][tc * TN]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[k][tc * TN + 4]);
      const float a[TM] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[TN] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
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
    if (m >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      const int n = n0 + tc * TN + j;
      if (c_vec && n + 3 < N) {
        *reinterpret_cast<float4*>(&C[m * N + n]) =
            make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
      } else {
        for (int q = 0; q < 4; ++q)
          if (n + q < N) C[m * N + n + q] = acc[i][j + q];
      }
    }
  }
}
