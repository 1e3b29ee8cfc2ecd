// Step 5, a bank-conflict-free shared layout. Two sources of conflicts are left in step 4:
//  - A's transposing store: the lanes of a warp write As[kq + j][r] for two values of kq, which
//    are BM = 128 floats (a multiple of 32 banks) apart, so pairs of lanes hit one bank. A row
//    padded to BM + 4 floats moves the second group by 16 banks: conflict-free.
//  - The float4 reads of B: lanes reading Bs[k][tc * 8] are 32 bytes apart, so a quarter-warp's
//    eight float4s span 256 bytes and wrap onto the same banks twice. Here a thread owns columns
//    tc * 4 .. +3 and BN/2 + tc * 4 .. +3 (and rows tr * 4 .. +3 and BM/2 + tr * 4 .. +3), so
//    neighbouring lanes read neighbouring float4s: 128 contiguous bytes per quarter-warp.
// Each thread still computes 8x8 outputs; only which ones changes.
/* kernlab
family:     matmul
entry:      conflict_free<BLOCK>
blocks:     128 256
block_dims: BLOCK, 1
grid_dims:  (N + BLOCK / 2 - 1) / (BLOCK / 2), (M + 127) / 128
summary:    + padded transposed A tile and split 4+4 thread tiles: no shared-memory bank conflicts
order:      5
*/

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) conflict_free(const float* A, const float* B, float* C,
                                                       int M, int N, int K) {
  constexpr int BM = 128, BN = BLOCK / 2, BK = 8, PAD = 4;
  constexpr int TCOLS = BN / 8;
  __shared__ __align__(16) float As[BK][BM + PAD];
  __shared__ __align__(16) float Bs[BK][BN];
  const int t = threadIdx.x;
  const int tr = t / TCOLS, tc = t % TCOLS;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const bool a_vec = (reinterpret_cast<unsigned long long>(A) % 16 == 0) && K % 4 == 0;
  const bool b_vec = (reinterpret_cast<unsigned long long>(B) % 16 == 0) && N % 4 == 0;
  const bool c_vec = (reinterpret_cast<unsigned long long>(C) % 16 == 0) && N % 4 == 0;
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
  for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
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
#pragma unroll
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
      const float4 a0 = *reinterpret_cast<const float4*>(&As[k][tr * 4]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[k][BM / 2 + tr * 4]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[k][tc * 4]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[k][BN / 2 + tc * 4]);
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int m = m0 + (i < 4 ? tr * 4 + i : BM / 2 + tr * 4 + i - 4);
    if (m >= M) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int n = n0 + h * (BN / 2) + tc * 4;
      const float* v = &acc[i][h * 4];
      if (c_vec && n + 3 < N) {
        *reinterpret_cast<float4*>(&C[m * N + n]) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (n + q < N) C[m * N + n + q] = v[q];
      }
    }
  }
}
