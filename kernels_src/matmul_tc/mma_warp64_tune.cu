// Step 4 of the tensor-core ladder: bigger warp tiles and fragments loaded one k-step ahead.
// Nsight Compute showed step 3's warps stalled on ldmatrix results (short_scoreboard) and on
// the MMAs' own latency (wait), with SM throughput near 45%. Two changes address both: each warp
// now computes a 64 x 64 part of C (a block of 8 warps a 128 x 256 tile), so a k-step's 8
// ldmatrix feed 32 MMAs instead of 6 feeding 16; and the fragments of k-step kk + 16 are loaded
// into a second register set before the MMAs of kk are issued, so their latency hides behind
// them. The accumulators (128 floats a thread) take one block per SM (__launch_bounds__(256, 1));
// STAGES slices of BK of K in cp.async flight keep the copies ahead. `kernlab tune --variant
// mma_warp64_tune --strategy exhaustive` on an H100 (2026-11-26) ranked BK = 64 first at 4096^3
// and 8192^3: with one block per SM every __syncthreads stalls the whole SM, and 64-wide slices
// halve them (BK = 32 was 0.8x, slower than step 3). The named point mma_warp64 is the best:
// BK = 64, 4 stages (204 KiB of dynamic shared memory).
// Everything else (padding, zero-filled edges, the element-wise path for unaligned rows) is
// step 3's.
/* kernlab
family:       matmul_tc
entry:        mma_warp64<BLOCK, STAGES, BK, T>
blocks:       256
dtypes:       bfloat16 float16
tune:         BK = 32, 64; STAGES = 2, 3, 4
require:      STAGES * (128 * (BK + 8) + BK * 264) * 2 <= 232448
shared_bytes: STAGES * (128 * (BK + 8) + BK * 264) * TSIZE
grid_dims:    ceil_div(N, 256), ceil_div(M, 128)
summary:      + 64x64 warp tiles (128x256 block) and fragments double-buffered in registers
points:       mma_warp64(BK=64,STAGES=4) "+ 64x64 warp tiles (128x256 block), fragments double-buffered in registers"
order:        4
*/
#include <kernlab/mma_sm80.cuh>

template <int BLOCK, int STAGES, int BK, typename T>
__global__ void __launch_bounds__(BLOCK, 1)  // 1 block (8 warps) per SM: up to 255 registers
    mma_warp64(const T* A, const T* B, float* C, int M, int N, int K) {
  constexpr int BM = 128, BN = 256, APAD = 8, BPAD = 8;
  extern __shared__ __align__(128) unsigned char smem[];
  auto As = reinterpret_cast<T(*)[BM][BK + APAD]>(smem);
  auto Bs = reinterpret_cast<T(*)[BK][BN + BPAD]>(smem + STAGES * sizeof(T) * BM * (BK + APAD));
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm = warp / 4, wn = warp % 4;  // the warp's 64 x 64 part of the block's tile
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
      for (int c = tid; c < BK * BN / 8; c += BLOCK) {  // B: 32 rows of 32 chunks
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

  unsigned a[2][4][4], b[2][8][2];  // [register set][m16 tile | n8 tile][fragment]
  // The fragments of k-step kk of stage s into register set `set`.
  auto fragments = [&](int set, int s, int kk) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
      ldmatrix_x4(a[set][i], &As[s][wm * 64 + i * 16 + lane % 16][kk + lane / 16 * 8]);
#pragma unroll
    for (int j = 0; j < 8; j += 2) {
      unsigned r[4];
      ldmatrix_x4_trans(r, &Bs[s][kk + lane % 16][wn * 64 + j * 8 + lane / 16 * 8]);
      b[set][j][0] = r[0];
      b[set][j][1] = r[1];
      b[set][j + 1][0] = r[2];
      b[set][j + 1][1] = r[3];
    }
  };

  float acc[4][8][4];  // [m16 tile][n8 tile][fragment]
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
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
    fragments(0, s, 0);
#pragma unroll
    for (int step = 0; step < BK / 16; ++step) {
      const int set = step % 2;
      if (step + 1 < BK / 16) fragments(set ^ 1, s, (step + 1) * 16);  // ahead of the MMAs
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) mma16816(acc[i][j], a[set][i], b[set][j], zero);
    }
  }

  // Fragment layout: d0, d1 at row lane / 4, columns 2 (lane % 4) and + 1; d2, d3 eight rows down.
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int row = bm + wm * 64 + i * 16 + lane / 4;
      const int col = bn + wn * 64 + j * 8 + lane % 4 * 2;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = row + h * 8;
        if (r >= M) continue;
        if (col < N) C[(long long)r * N + col] = acc[i][j][2 * h];
        if (col + 1 < N) C[(long long)r * N + col + 1] = acc[i][j][2 * h + 1];
      }
    }
}
