// Step 2 of the FP64 ladder: the FP64 tensor cores, mma.sync.m8n8k4 in double (DMMA, sm_80 and
// later; on A100 and H100 twice the FP64 FMA units' rate, and what cuBLAS's DGEMM runs on).
//   - A block of 8 warps computes a 128 x 128 tile of C, each warp a 64 x 32 part of it as 8 x 4
//     DMMA tiles of 8 x 8 (64 accumulators a thread, 128 registers: one block per SM). Per
//     4-wide step of K a warp loads 8 A and 4 B fragments, one double a lane each, for 32 DMMAs.
//   - The operands are staged in dynamic shared memory in BK-wide slices of K by a STAGES-deep
//     cp.async pipeline (matmul_tc's mma_multistage): the copy of slice t + STAGES - 1 is issued
//     before the DMMAs of slice t.
//   - Rows are padded by 4 doubles (A: BK + 4, B: 132), so that the rows of a fragment read,
//     32 bytes each, fall 32 bytes apart modulo 128: each half-warp reads 128 distinct bytes.
//   - Any M, N, K: rows and columns past the matrix are zero-filled by cp.async (source size 0).
//     Rows of A and B are 16-byte aligned when K and N are even: then 16-byte copies; otherwise
//     8-byte ones (one double each), which are always aligned. C is written in 16-byte pairs
//     when N is even, else one double at a time, each checked against M and N.
// On an H200 (2026-11-26) every point ran at 25 to 26.5 TFLOP/s at 4096^3 and 8192x8192x4096,
// 37 to 40% of the FP64 tensor-core peak, 2 stages as fast as 4: not the copies' latency but
// the instruction, whose rate on Hopper is the A100's per SM (128 FLOP a clock, half the peak).
// 32-wide slices (half the barriers) were 5% faster than 16-wide ones; the named point
// dmma_multistage is BK = 32, 3 stages (207 KiB of dynamic shared memory). Step 3 (dmma_sm90)
// takes the shapes that reach the peak.
/* kernlab
family:       matmul_f64
entry:        dmma<BLOCK, STAGES, BK>
blocks:       256
tune:         BK = 16, 32; STAGES = 2, 3, 4
require:      STAGES * (128 * (BK + 4) + BK * 132) * 8 <= 232448
shared_bytes: STAGES * (128 * (BK + 4) + BK * 132) * TSIZE
summary:      FP64 tensor cores: mma.sync m8n8k4 (DMMA), 128x128 tiles of 8 warps, cp.async pipeline
points:       dmma_multistage(BK=32,STAGES=3) "FP64 tensor cores: mma.sync m8n8k4 (DMMA), 128x128 tiles of 8 warps of 64x32, 3-stage cp.async pipeline"
order:        2
*/
#include <kernlab/mma_sm80.cuh>

template <int BLOCK, int STAGES, int BK>
__global__ void __launch_bounds__(BLOCK, 1)  // 1 block (8 warps) per SM: up to 255 registers
    dmma(const double* A, const double* B, double* C, int M, int N, int K) {
  static_assert(BLOCK == 256, "8 warps of 64 x 32");
  constexpr int BM = 128, BN = 128, APAD = 4, BPAD = 4;
  extern __shared__ __align__(128) unsigned char smem[];
  auto As = reinterpret_cast<double(*)[BM][BK + APAD]>(smem);
  auto Bs = reinterpret_cast<double(*)[BK][BN + BPAD]>(smem + STAGES * sizeof(double) * BM *
                                                                  (BK + APAD));
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm = warp / 4, wn = warp % 4;  // the warp's 64 x 32 part of the block's tile
  const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
  const bool vec = K % 2 == 0 && N % 2 == 0;  // rows 16-byte aligned: 16-byte copies

  auto load = [&](int stage, int k0) {
    if (vec) {
      for (int c = tid; c < BM * BK / 2; c += BLOCK) {  // A: 128 rows of BK / 2 pairs
        const int r = c / (BK / 2), col = c % (BK / 2) * 2, gr = bm + r, gc = k0 + col;
        const bool ok = gr < M && gc < K;  // K even: gc + 1 < K too
        cp_async16(&As[stage][r][col], ok ? A + (long long)gr * K + gc : A, ok ? 16 : 0);
      }
      for (int c = tid; c < BK * BN / 2; c += BLOCK) {  // B: BK rows of 64 pairs
        const int r = c / (BN / 2), col = c % (BN / 2) * 2, gr = k0 + r, gc = bn + col;
        const bool ok = gr < K && gc < N;  // N even: gc + 1 < N too
        cp_async16(&Bs[stage][r][col], ok ? B + (long long)gr * N + gc : B, ok ? 16 : 0);
      }
    } else {
      for (int i = tid; i < BM * BK; i += BLOCK) {
        const int r = i / BK, col = i % BK, gr = bm + r, gc = k0 + col;
        const bool ok = gr < M && gc < K;
        cp_async8(&As[stage][r][col], ok ? A + (long long)gr * K + gc : A, ok ? 8 : 0);
      }
      for (int i = tid; i < BK * BN; i += BLOCK) {
        const int r = i / BN, col = i % BN, gr = k0 + r, gc = bn + col;
        const bool ok = gr < K && gc < N;
        cp_async8(&Bs[stage][r][col], ok ? B + (long long)gr * N + gc : B, ok ? 8 : 0);
      }
    }
  };

  double acc[8][4][2];  // [m8 tile][n8 tile][fragment]
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j][0] = acc[i][j][1] = 0.0;

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
#pragma unroll
    for (int kk = 0; kk < BK; kk += 4) {
      double a[8], b[4];
#pragma unroll
      for (int i = 0; i < 8; ++i) a[i] = As[s][wm * 64 + i * 8 + lane / 4][kk + lane % 4];
#pragma unroll
      for (int j = 0; j < 4; ++j) b[j] = Bs[s][kk + lane % 4][wn * 32 + j * 8 + lane / 4];
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) dmma884(acc[i][j], a[i], b[j]);
    }
  }
  cp_async_wait<0>();  // no copy may be in flight when the block exits

  // Fragment layout: d[0], d[1] at row lane / 4, columns 2 (lane % 4) and + 1.
  const bool pairs = N % 2 == 0;  // then row * N + even column is 16-byte aligned
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = bm + wm * 64 + i * 8 + lane / 4;
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int col = bn + wn * 32 + j * 8 + lane % 4 * 2;
      double* out = C + (long long)row * N + col;
      if (pairs && col + 1 < N) {
        *reinterpret_cast<double2*>(out) = make_double2(acc[i][j][0], acc[i][j][1]);
      } else {
        if (col < N) out[0] = acc[i][j][0];
        if (col + 1 < N) out[1] = acc[i][j][1];
      }
    }
  }
}
