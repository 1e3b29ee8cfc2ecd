// Step 7, warp tiling: step 6 with the block's tile split into warp tiles of 64 x 32. The lanes
// of a warp sit 8 x 4 in it, each computing 2 x 2 sub-tiles of 4 x 4 (rows lr*4 and 32 + lr*4,
// columns lc*4 and 16 + lc*4 of the warp tile). At each step k a warp then reads only 32
// distinct floats of A and 16 of B from shared memory (broadcast to the lanes that share them),
// against 32 of A and 128 of B with step 6's block-wide layout: a quarter of the shared-memory
// traffic for the same 64 FMAs per thread, and each operand's reads stay within one 128-byte
// line per warp. The tile is also twice as deep (BK = 16): half the barriers and stage flips.
//
// What it bought on the H100 (first sweep, 4096^3, 256 threads, quick timing): nearly nothing.
// The warp layout alone, at BK = 8, ran at 41.8 TFLOP/s against step 6's 42.0 (1.00x); with
// BK = 16 at 42.5 (1.02x, 0.82x of cuBLAS). Step 6 is not limited by shared-memory bandwidth
// (its loads are conflict-free float4s already, 4 per 64 FMAs), so cutting that traffic does not
// show; the worklog's 94% on an A6000 came from a GPU with less shared bandwidth per FMA. Kept
// as the step it is, and as the best variant measured here.
/* kernlab
family:     matmul
entry:      warptile<BLOCK, BK>
params:     BK = 16
blocks:     128 256
block_dims: BLOCK, 1
grid_dims:  (N + BLOCK / 2 - 1) / (BLOCK / 2), (M + 127) / 128
summary:    + 64x32 warp tiles (8x4 lanes, 2x2 sub-tiles of 4x4: a quarter of the shared traffic), BK = 16
order:      7
*/

// (BLOCK, 2): at most 128 registers at 256 threads, so two blocks share an SM (without it the
// compiler took 145 and one block ran alone: 0.94x as fast).
template <int BLOCK, int BK>
__global__ void __launch_bounds__(BLOCK, 2) warptile(const float* A, const float* B, float* C,
                                                  int M, int N, int K) {
  constexpr int BM = 128, BN = BLOCK / 2, PAD = 4;
  constexpr int WARPS_N = BN / 32;  // warps side by side along N (2 or 4); 2 along M
  constexpr int NA = BM * BK / 4 / BLOCK, NB = BK * BN / 4 / BLOCK;  // float4s per thread
  __shared__ __align__(16) float As[2][BK][BM + PAD];
  __shared__ __align__(16) float Bs[2][BK][BN];
  const int t = threadIdx.x;
  const int warp = t / 32, lane = t % 32;
  // This thread's first row and column in the block tile; its others are +32 and +16 away.
  const int row0 = warp / WARPS_N * 64 + lane / 4 * 4;
  const int col0 = warp % WARPS_N * 32 + lane % 4 * 4;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const bool a_vec = (reinterpret_cast<unsigned long long>(A) % 16 == 0) && K % 4 == 0;
  const bool b_vec = (reinterpret_cast<unsigned long long>(B) % 16 == 0) && N % 4 == 0;
  const bool c_vec = (reinterpret_cast<unsigned long long>(C) % 16 == 0) && N % 4 == 0;
  float4 ra[NA], rb[NB];

  auto load = [&](int k0) {
#pragma unroll
    for (int q = 0; q < NA; ++q) {
      const int i = t + q * BLOCK;
      const int m = m0 + i / (BK / 4), k = k0 + i % (BK / 4) * 4;
      if (a_vec && m < M && k + 3 < K) {
        ra[q] = *reinterpret_cast<const float4*>(&A[m * K + k]);
      } else {
        ra[q].x = m < M && k < K ? A[m * K + k] : 0.0f;
        ra[q].y = m < M && k + 1 < K ? A[m * K + k + 1] : 0.0f;
        ra[q].z = m < M && k + 2 < K ? A[m * K + k + 2] : 0.0f;
        ra[q].w = m < M && k + 3 < K ? A[m * K + k + 3] : 0.0f;
      }
    }
#pragma unroll
    for (int q = 0; q < NB; ++q) {
      const int i = t + q * BLOCK;
      const int k = k0 + i / (BN / 4), n = n0 + i % (BN / 4) * 4;
      if (b_vec && k < K && n + 3 < N) {
        rb[q] = *reinterpret_cast<const float4*>(&B[k * N + n]);
      } else {
        rb[q].x = k < K && n < N ? B[k * N + n] : 0.0f;
        rb[q].y = k < K && n + 1 < N ? B[k * N + n + 1] : 0.0f;
        rb[q].z = k < K && n + 2 < N ? B[k * N + n + 2] : 0.0f;
        rb[q].w = k < K && n + 3 < N ? B[k * N + n + 3] : 0.0f;
      }
    }
  };
  auto store = [&](int s) {
#pragma unroll
    for (int q = 0; q < NA; ++q) {
      const int i = t + q * BLOCK;
      const int r = i / (BK / 4), kq = i % (BK / 4) * 4;
      As[s][kq + 0][r] = ra[q].x;
      As[s][kq + 1][r] = ra[q].y;
      As[s][kq + 2][r] = ra[q].z;
      As[s][kq + 3][r] = ra[q].w;
    }
#pragma unroll
    for (int q = 0; q < NB; ++q) {
      const int i = t + q * BLOCK;
      *reinterpret_cast<float4*>(&Bs[s][i / (BN / 4)][i % (BN / 4) * 4]) = rb[q];
    }
  };

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
  load(0);
  store(0);
  __syncthreads();
  int s = 0;
  for (int k0 = 0; k0 < K; k0 += BK) {
    const bool more = k0 + BK < K;  // the same in every thread: the barrier below is uniform
    if (more) load(k0 + BK);
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float4 a0 = *reinterpret_cast<const float4*>(&As[s][k][row0]);
      const float4 a1 = *reinterpret_cast<const float4*>(&As[s][k][row0 + 32]);
      const float4 b0 = *reinterpret_cast<const float4*>(&Bs[s][k][col0]);
      const float4 b1 = *reinterpret_cast<const float4*>(&Bs[s][k][col0 + 16]);
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
    }
    if (more) {
      store(s ^ 1);
      __syncthreads();
      s ^= 1;
    }
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int m = m0 + row0 + (i < 4 ? i : 32 + i - 4);
    if (m >= M) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int n = n0 + col0 + h * 16;
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
