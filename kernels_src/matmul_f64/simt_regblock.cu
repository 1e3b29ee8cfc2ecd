// Step 1 of the FP64 ladder: double precision on the SMs' FP64 units, no tensor cores. matmul's
// register blocking (regblock2d) in double: a block of 256 threads computes a 128 x 128 tile of
// C, each thread an 8 x 8 block of it (64 accumulators, 128 registers) as outer products of 8
// values of A and 8 of B per step of K. Per 8-wide slice of K the block stages A (transposed,
// As[k][m]) and B in shared memory, zero-filled past the edges, so any M, N, K works; the next
// slice is read from global memory into registers while the current one is computed, and
// written to the other of two shared buffers, so one barrier a slice suffices.
// A thread's rows are 2 ty + 32 i (+ 0, 1) and its columns 2 tx + 32 j (+ 0, 1): its shared
// reads are 16-byte pairs, the 16 columns of a warp's B read are 256 contiguous bytes (no bank
// conflicts) and its A read is a broadcast. As's rows are padded by 2 doubles, so the transposed
// stores of a half-warp fall into 16 different bank pairs.
// Its ceiling is the FP64 FMA peak, half the FP64 tensor-core peak on A100 and H100.
/* kernlab
family:     matmul_f64
entry:      simt_regblock<BLOCK>
blocks:     256
summary:    FP64 FMA units: 128x128 block tile, 8x8 doubles a thread, next K slice prefetched
order:      1
*/

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK, 1)  // 1 block (8 warps) per SM: up to 255 registers
    simt_regblock(const double* A, const double* B, double* C, int M, int N, int K) {
  static_assert(BLOCK == 256, "a 16 x 16 grid of threads, 8 x 8 outputs each");
  constexpr int BM = 128, BN = 128, BK = 8, APAD = 2;
  constexpr int LOADS = BM * BK / BLOCK;  // elements of A (and of B) a thread stages a slice: 4
  __shared__ __align__(16) double As[2][BK][BM + APAD];
  __shared__ __align__(16) double Bs[2][BK][BN];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;

  double ra[LOADS], rb[LOADS];  // the next slice, on its way from global memory
  auto fetch = [&](int k0) {
#pragma unroll
    for (int q = 0; q < LOADS; ++q) {
      const int e = tid + q * BLOCK;
      const int ar = e / BK, ac = e % BK, gr = bm + ar, gk = k0 + ac;  // A: 128 rows of 8
      ra[q] = gr < M && gk < K ? A[(long long)gr * K + gk] : 0.0;
      const int br = e / BN, bc = e % BN, gkb = k0 + br, gc = bn + bc;  // B: 8 rows of 128
      rb[q] = gkb < K && gc < N ? B[(long long)gkb * N + gc] : 0.0;
    }
  };
  auto stage = [&](int s) {
#pragma unroll
    for (int q = 0; q < LOADS; ++q) {
      const int e = tid + q * BLOCK;
      As[s][e % BK][e / BK] = ra[q];
      Bs[s][e / BN][e % BN] = rb[q];
    }
  };

  double acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0;

  const int tiles = (K + BK - 1) / BK;
  fetch(0);
  stage(0);
  __syncthreads();
  for (int t = 0; t < tiles; ++t) {
    const int s = t & 1;
    if (t + 1 < tiles) fetch((t + 1) * BK);  // in flight during the FMAs below
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      double a[8], b[8];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const double2 va = *reinterpret_cast<const double2*>(&As[s][k][2 * ty + 32 * i]);
        a[2 * i] = va.x;
        a[2 * i + 1] = va.y;
        const double2 vb = *reinterpret_cast<const double2*>(&Bs[s][k][2 * tx + 32 * i]);
        b[2 * i] = vb.x;
        b[2 * i + 1] = vb.y;
      }
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
    // The other buffer was last read in slice t - 1, which every thread finished before the
    // barrier that ended it.
    if (t + 1 < tiles) stage(s ^ 1);
    __syncthreads();
  }

  // acc[i][j] is row 2 ty + 32 (i / 2) + i % 2, column 2 tx + 32 (j / 2) + j % 2.
  const bool pairs = N % 2 == 0;  // then row * N + even column is 16-byte aligned
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = bm + 2 * ty + 32 * (i / 2) + i % 2;
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < 8; j += 2) {
      const int col = bn + 2 * tx + 32 * (j / 2);
      double* out = C + (long long)row * N + col;
      if (pairs && col + 1 < N) {
        *reinterpret_cast<double2*>(out) = make_double2(acc[i][j], acc[i][j + 1]);
      } else {
        if (col < N) out[0] = acc[i][j];
        if (col + 1 < N) out[1] = acc[i][j + 1];
      }
    }
  }
}
