// Step 3 of the tensor-core ladder: step 2 with a deeper cp.async pipeline. Nsight Compute
// showed step 2's warps waiting on the latency of MMAs and ldmatrix with only 16 warps per SM,
// and each slice's copy had one slice of compute to hide behind. Here the shared tiles live in
// dynamic shared memory (STAGES slices of A and B: 74 KiB for 4, which kernlab asks the driver
// for past the default 48 KiB), and the copy of slice t + STAGES - 1 is issued before the MMAs
// of slice t, so a copy has STAGES - 1 slices of compute to overlap. Everything else (tiles,
// fragments, padding, the zero-filled edges and the element-wise path for unaligned rows) is
// step 2's.
/* kernlab
family:       matmul_tc
entry:        mma_multistage<BLOCK, STAGES, T>
blocks:       256
dtypes:       bfloat16 float16
params:       STAGES = 4
shared_bytes: STAGES * (128 * 40 + 32 * 136) * TSIZE
grid_dims:    ceil_div(N, 128), ceil_div(M, 128)
summary:      + a 4-stage cp.async pipeline in dynamic shared memory (74 KiB a block)
order:        3
*/
#include <kernlab/mma_sm80.cuh>

template <int BLOCK, int STAGES, typename T>
__global__ void __launch_bounds__(BLOCK, 2)  // 2 blocks (16 warps) per SM: at most 128 registers
    mma_multistage(const T* A, const T* B, float* C, int M, int N, int K) {
  constexpr int BM = 128, BN = 128, BK = 32, APAD = 8, BPAD = 8;
  extern __shared__ __align__(128) unsigned char smem[];
  auto As = reinterpret_cast<T(*)[BM][BK + APAD]>(smem);
  auto Bs = reinterpret_cast<T(*)[BK][BN + BPAD]>(smem + STAGES * sizeof(T) * BM * (BK + APAD));
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm = warp / 4, wn = warp % 4;  // the warp's 64 x 32 part of the block's tile
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const bool vec = K % 8 == 0 && N % 8 == 0;  // rows 16-byte aligned: cp.async
  const T zero = zero_of<T>();

  auto load = [&](int stage, int k0) {
    if (vec) {
      for (int c = tid; c < BM * BK / 8; c += BLOCK) {  // A: 128 rows of 4 chunks
        const int r = c / (BK / 8), col = c % (BK / 8) * 8, gr = bm + r, gc = k0 + col;
        const bool ok = gr < M && gc < K;
        cp_async16(&As[stage][r][col], ok ? A + (long long)gr * K + gc : A, ok ? 16 : 0);
      }
      for (int c = tid; c < BK * BN / 8; c += BLOCK) {  // B: 32 rows of 16 chunks
        const int r = c / (BN / 8), col = c % (BN / 8) * 8, gr = k0 + r, gc = bn + col;
        const bool ok = gr < K && gc < N;
        cp_async16(&Bs[stage][r][col], ok ? B + (long long)gr * N + gc : B, ok ? 16 : 0);
      }
    } else {
      for (int i = tid; i < BM * BK; i += BLOCK) {
        const int r = i / BK, col = i % BK, gr = bm + r, gc = k0 + col;
        As[stage][r][col] = gr < M && gc < K ? A[(long long)gr * K + gc] : zero;
      }
      for (int i = tid; i < BK * BN; i += BLOCK) {
        const int r = i / BN, col = i % BN, gr = k0 + r, gc = bn + col;
        Bs[stage][r][col] = gr < K && gc < N ? B[(long long)gr * N + gc] : zero;
      }
    }
  };

  float acc[4][4][4];  // [m16 tile][n8 tile][fragment]
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  const int tiles = (K + BK - 1) / BK;
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < tiles) load(s, s * BK);
    cp_async_commit();  // one group per slice, empty past the last
  }
  for (int t = 0; t < tiles; ++t) {
    cp_async_wait<STAGES - 2>();  // slice t has landed: at most STAGES - 2 newer groups pending
    __syncthreads();              // ... for every thread, and buffer (t - 1) % STAGES is free
    const int next = t + STAGES - 1;
    if (next < tiles) load(next % STAGES, next * BK);
    cp_async_commit();
    const int s = t % STAGES;
    for (int kk = 0; kk < BK; kk += 16) {
      unsigned a[4][4], b[4][2];
      for (int i = 0; i < 4; ++i)
        ldmatrix_x4(a[i], &As[s][wm * 64 + i * 16 + lane % 16][kk + lane / 16 * 8]);
      for (int j = 0; j < 4; j += 2) {
        unsigned r[4];
        ldmatrix_x4_trans(r, &Bs[s][kk + lane % 16][wn * 32 + j * 8 + lane / 16 * 8]);
        b[j][0] = r[0];
        b[j][1] = r[1];
        b[j + 1][0] = r[2];
        b[j + 1][1] = r[3];
      }
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) mma16816(acc[i][j], a[i], b[j], zero);
    }
  }

  // Fragment layout: d0, d1 at row lane / 4, columns 2 (lane % 4) and + 1; d2, d3 eight rows down.
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int row = bm + wm * 64 + i * 16 + lane / 4;
      const int col = bn + wn * 32 + j * 8 + lane % 4 * 2;
      for (int h = 0; h < 2; ++h) {
        const int r = row + h * 8;
        if (r >= M) continue;
        if (col < N) C[(long long)r * N + col] = acc[i][j][2 * h];
        if (col + 1 < N) C[(long long)r * N + col + 1] = acc[i][j][2 * h + 1];
      }
    }
}
