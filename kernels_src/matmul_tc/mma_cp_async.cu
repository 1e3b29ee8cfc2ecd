// Step 2 of the tensor-core ladder: mma.sync with ldmatrix, fed by cp.async double buffering.
// What it changes against wmma (step 1):
//   - mma.sync.m16n8k16 in inline PTX instead of WMMA: the fragments are loaded with ldmatrix
//     (.x4 for A; .x4.trans for two 8-column tiles of B, which is row-major K x N), one
//     instruction for what WMMA's loads spell out element by element;
//   - a 128 x 128 block tile for 8 warps of 64 x 32 each (16 MMAs per 16-wide step of K per warp,
//     against 4 in step 1): each element staged in shared memory feeds twice as many MMAs;
//   - cp.async: the next 32-wide slice of K is copied into the second shared buffer, 16 bytes per
//     instruction and without passing through registers, while the warps compute on the first;
//   - the shared rows are padded to 80 bytes (A) and 272 bytes (B): the 8 row addresses of each
//     ldmatrix then fall into 8 different groups of 4 banks (no conflicts).
// Any M, N, K: rows and columns past the matrix are zero-filled by cp.async (source size 0).
// 16-byte copies need K and N to be multiples of 8 (aligned rows); other shapes take a plain
// element-by-element load of each slice, correct and slower.
/* kernlab
family:     matmul_tc
entry:      mma_cp_async<BLOCK, T>
blocks:     256
dtypes:     bfloat16 float16
grid_dims:  ceil_div(N, 128), ceil_div(M, 128)
summary:    + mma.sync m16n8k16 with ldmatrix, 128x128 tiles of 8 warps, cp.async double buffering
order:      2
*/
#include <kernlab/mma_sm80.cuh>

template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK)
    mma_cp_async(const T* A, const T* B, float* C, int M, int N, int K) {
  constexpr int BM = 128, BN = 128, BK = 32, APAD = 8, BPAD = 8;
  __shared__ __align__(128) T As[2][BM][BK + APAD];
  __shared__ __align__(128) T Bs[2][BK][BN + BPAD];
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
  load(0, 0);
  cp_async_commit();
  for (int t = 0; t < tiles; ++t) {
    const int s = t & 1;
    if (t + 1 < tiles) load(s ^ 1, (t + 1) * BK);
    cp_async_commit();     // an empty group on the last slice
    cp_async_wait<1>();   // slice t has landed (its group is not the newest)
    __syncthreads();       // ... for every thread's copies, and the plain stores
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
    __syncthreads();  // everyone is done with buffer s before slice t + 2 is copied into it
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
