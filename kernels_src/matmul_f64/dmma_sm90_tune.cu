// Step 3 of the FP64 ladder: Hopper's larger DMMA, mma.sync.m16n8k16 in double (sm_90; compiled
// for sm_90a, so its rows run on H100 and H200 and are skipped with the reason elsewhere).
// On an H200, step 2 (m8n8k4) reached 40% of the FP64 tensor-core peak whatever its pipeline
// depth and slice width (26.4 TFLOP/s at 4096^3 against cuBLAS's 62.4): not a copy latency but
// the instruction itself, which runs at the A100's rate per SM; Hopper's doubled FP64
// tensor-core rate comes with the shapes sm_90 adds (m16n8k4, k8, k16). Everything else is step
// 2's: the 128 x 128 block tile of 8 warps, each 64 x 32 of it (now 4 x 4 tiles of 16 x 8, the
// same 64 accumulators a thread), the shared layout and padding, the cp.async pipeline with its
// 16- or 8-byte copies, and the checked stores. Measured on the H200 (2026-11-26): 43.7 TFLOP/s
// at 4096^3 and 43.9 at 8192x8192x4096 for the named point (BK = 32, 3 stages, 207 KiB of
// shared memory; 1.65x step 2, 0.70x cuBLAS, 65% of the peak); 16-wide slices 38 to 40, 32-wide
// with 2 stages 42.5.
// Fragments (16 x 16 A, 16 x 8 B, lane = 4 g + t): a[v] is A[g + 8 (v % 2)][t + 4 (v / 2)],
// b[v] is B[t + 4 v][g], d[v] is D[g + 8 (v / 2)][2 t + v % 2]. Each is one 8-byte shared load
// that, as in step 2, reads 4 rows of 32 bytes a half-warp, 32 bytes apart modulo 128. Per 16-wide
// step of K a warp loads its B fragments (16 doubles), then per 16-row tile its A fragment (8)
// and issues 4 MMAs, so that fewer than 64 operand registers are live.
/* kernlab
family:       matmul_f64
entry:        dmma_sm90<BLOCK, STAGES, BK>
blocks:       256
target:       sm_90a
tune:         BK = 16, 32; STAGES = 2, 3, 4
require:      STAGES * (128 * (BK + 4) + BK * 132) * 8 <= 232448
shared_bytes: STAGES * (128 * (BK + 4) + BK * 132) * TSIZE
summary:      + Hopper's mma.sync m16n8k16 in double, 4x4 tiles of 16x8 a warp
points:       dmma_16816(BK=32,STAGES=3) "+ Hopper's mma.sync m16n8k16 in double (8 times the FMAs of m8n8k4 an instruction)"
order:        3
*/
#include <kernlab/mma_sm80.cuh>

// d += a * b for one m16n8k16 tile in float64 (sm_90).
__device__ __forceinline__ void dmma16816(double* d, const double* a, const double* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
      "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
        "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
}

template <int BLOCK, int STAGES, int BK>
__global__ void __launch_bounds__(BLOCK, 1)  // 1 block (8 warps) per SM: up to 255 registers
    dmma_sm90(const double* A, const double* B, double* C, int M, int N, int K) {
  static_assert(BLOCK == 256 && BK % 16 == 0, "8 warps of 64 x 32, K in steps of 16");
  constexpr int BM = 128, BN = 128, APAD = 4, BPAD = 4;
  extern __shared__ __align__(128) unsigned char smem[];
  auto As = reinterpret_cast<double(*)[BM][BK + APAD]>(smem);
  auto Bs = reinterpret_cast<double(*)[BK][BN + BPAD]>(smem + STAGES * sizeof(double) * BM *
                                                                  (BK + APAD));
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int g = lane / 4, t = lane % 4;
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

  double acc[4][4][4];  // [m16 tile][n8 tile][fragment]
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int v = 0; v < 4; ++v) acc[i][j][v] = 0.0;

  const int tiles = (K + BK - 1) / BK;
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < tiles) load(s, s * BK);
    cp_async_commit();  // one group per slice, empty past the last
  }
  for (int tile = 0; tile < tiles; ++tile) {
    cp_async_wait<STAGES - 2>();  // slice `tile` has landed
    __syncthreads();              // ... for every thread, and buffer (tile - 1) % STAGES is free
    const int next = tile + STAGES - 1;
    if (next < tiles) load(next % STAGES, next * BK);
    cp_async_commit();
    const int s = tile % STAGES;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      double b[4][4];
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int v = 0; v < 4; ++v) b[j][v] = Bs[s][kk + t + 4 * v][wn * 32 + j * 8 + g];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        double a[8];
#pragma unroll
        for (int v = 0; v < 8; ++v)
          a[v] = As[s][wm * 64 + i * 16 + g + 8 * (v % 2)][kk + t + 4 * (v / 2)];
#pragma unroll
        for (int j = 0; j < 4; ++j) dmma16816(acc[i][j], a, b[j]);
      }
    }
  }
  cp_async_wait<0>();  // no copy may be in flight when the block exits

  const bool pairs = N % 2 == 0;  // then row * N + even column is 16-byte aligned
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = bm + wm * 64 + i * 16 + g + 8 * h;
      if (row >= M) continue;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int col = bn + wn * 32 + j * 8 + 2 * t;
        double* out = C + (long long)row * N + col;
        const double d0 = acc[i][j][2 * h], d1 = acc[i][j][2 * h + 1];
        if (pairs && col + 1 < N) {
          *reinterpret_cast<double2*>(out) = make_double2(d0, d1);
        } else {
          if (col < N) out[0] = d0;
          if (col + 1 < N) out[1] = d1;
        }
      }
    }
}
