// Step 6 of the tensor-core ladder: step 5's warp-specialised wgmma kernel with a persistent tile
// scheduler. Step 5 launches one block per 128 x BN tile: each block starts with empty stages
// (all 132 blocks of a wave wait for their first slices at once) and ends with an epilogue
// (accumulators -> C) that nothing overlaps; 4096^3 is 512 tiles of 128 x 256, 3.9 waves.
// Here the grid is one block per SM (min(SM_COUNT, tiles)), and each block walks its tiles,
// tile += gridDim.x, in step 5's grouped order (16 tile rows down a column, then the next):
// - The ring goes on across tiles: the producer keeps one slice counter over all of its tiles,
//   the stage and the mbarrier parities carried from one tile to the next, so it loads the next
//   tile's first STAGES slices while the consumers finish the last ones and write C.
// - The first wgmma of a tile has scale-d 0 (D = A * B): the accumulators are not zeroed. The
//   last slice of each tile is released after wgmma.wait_group 0 (step 5 never released it).
// - EPI = 1: C leaves through a 16 x 32 slab of shared memory per consumer warp (20 KiB in all),
//   so each 16-byte store of a warp writes 4 whole 128-byte rows of C, where step 5's float2
//   stores write 8 quarter rows; edge tiles and N % 4 != 0 keep step 5's stores.
// - Two schedules (PINGPONG), CUTLASS's two: cooperative (0), the two consumer warpgroups on one
//   128 x BN tile, 64 rows each, as step 5; ping-pong (1), each consumer a whole tile of
//   (16384 / BN) x BN (128 x 128 or 64 x 256, still 128 accumulators a thread), the block's
//   tiles alternating between them, so one writes C while the other's wgmmas run. The ring is
//   shared and filled in tile order; an mbarrier pair (`turn`) hands the ring from one consumer
//   to the other at the end of its main loop, which keeps each consumer's parity waits on
//   `full` at most one phase ahead of the producer (without it a consumer could pass a wait
//   two phases early).
// - Copies, layout, unaligned path and registers are step 5's (its comment says how).
// H200 (results branch: 2026-11-26-h200-tc-persistent/), bfloat16: the named point (cooperative,
// EPI = 1, BN = 256, 4 stages) ran 4096^3 at 768.9-782.5 TFLOP/s in five measurements,
// 1.04x-1.05x step 5 and 0.94x-0.97x the cuBLAS of the same call, and 4095x4097x1023 at 85.3
// (step 5 82.6, cuBLAS 142.2: the unaligned path, as in step 5). At 8192^3 the card's software
// power cap takes the SM clock from 1980 to 1740 MHz for most samples of every kernel, so the
// order of the rows decides a table's ratios; run one process a variant, step 6 was 1.00x
// cuBLAS (767.0 and 770.7 against 769.3) and 1.01x step 5, and at the full clock (each run's
// fastest sample) 867-869 against cuBLAS's 874-875. Nsight Compute (runs 3 and 5): SM
// throughput 83.8% at 4096^3 (step 5 79.7%), 89.6% at 8192^3 (88.8%). Ping-pong lost everywhere
// (<= 690 at 4096^3): its 128 x 128 and 64 x 256 tiles move 33% and 67% more bytes a FLOP
// through the cp.async producer than 128 x 256. A dynamic scheduler (an atomic tile counter)
// was slower than tile += gridDim.x (731 against 783 at 4096^3) and is not kept.
/* kernlab
family:       matmul_tc
target:       sm_90a
entry:        wgmma_persistent<BLOCK, PINGPONG, EPI, BN, STAGES, UG, T>
blocks:       384 512                 # 1 or 2 producer warpgroups, then 2 consumers
dtypes:       bfloat16 float16
tune:         PINGPONG = 0, 1; EPI = 0, 1; BN = 128, 256; STAGES = 4, 5, 6; UG = 2, 4, 8
params:       BM = PINGPONG ? 16384 / BN : 128
require:      STAGES * ((PINGPONG ? 16384 / BN : 128) * 64 + 64 * BN) * 2 + 1024 + 256 + EPI * 20480 <= 232448; BLOCK == 384 || (BN == 128 && PINGPONG == 0); BLOCK == 384 || UG <= 4; PINGPONG == 0 || BN == 128 || UG <= 4
shared_bytes: STAGES * (BM * 64 + 64 * BN) * TSIZE + 1024 + 256 + EPI * 20480
grid_dims:    min(SM_COUNT, ceil_div(N, BN) * ceil_div(M, BM))
summary:      + persistent blocks (one per SM), the producer's ring running across tiles
points:       wgmma_persistent(PINGPONG=0,EPI=1,BN=256,STAGES=4,UG=8) "+ persistent: one block per SM takes tiles, the cp.async ring runs across tile boundaries"
order:        6
*/
#include <kernlab/wgmma_sm90.cuh>

template <int BN>
__device__ __forceinline__ void wgmma_tile(float* d, unsigned long long da,
                                           unsigned long long db, int scale_d, __nv_bfloat16 t) {
  if constexpr (BN == 256) wgmma_m64n256k16(d, da, db, scale_d, t);
  else wgmma_m64n128k16(d, da, db, scale_d, t);
}
template <int BN>
__device__ __forceinline__ void wgmma_tile(float* d, unsigned long long da,
                                           unsigned long long db, int scale_d, __half t) {
  if constexpr (BN == 256) wgmma_m64n256k16(d, da, db, scale_d, t);
  else wgmma_m64n128k16(d, da, db, scale_d, t);
}

// Unaligned rows (step 5's): 8 consecutive 16-bit elements p[g .. g + 8), the first nv (0..8)
// valid and the rest read as 0, from the one or two aligned 16-byte blocks that hold them, then
// shifted into four words. Near the buffer's end the elements are read one by one.
struct Window {
  uint4 v0, v1;
  int sh, nv;  // the chunk's byte offset in v0, and its valid elements
};
__device__ __forceinline__ Window window_load(const unsigned short* p, long long g, int nv,
                                              long long total) {
  Window w;
  w.v0 = w.v1 = make_uint4(0u, 0u, 0u, 0u);
  w.sh = (int)(g * 2 & 15);
  w.nv = nv;
  if (nv <= 0) return w;
  const long long lo = g * 2 & ~15ll;
  const char* bytes = reinterpret_cast<const char*>(p);
  if (lo + 32 <= total * 2) {
    w.v0 = *reinterpret_cast<const uint4*>(bytes + lo);
    if (w.sh + 2 * nv > 16) w.v1 = *reinterpret_cast<const uint4*>(bytes + lo + 16);
  } else {
    unsigned e[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) e[i] = i < nv ? p[g + i] : 0u;
    w.v0 = make_uint4(e[0] | e[1] << 16, e[2] | e[3] << 16, e[4] | e[5] << 16, e[6] | e[7] << 16);
    w.sh = 0;
  }
  return w;
}
__device__ __forceinline__ void window_words(const Window& w, unsigned* r) {
  unsigned x[8] = {w.v0.x, w.v0.y, w.v0.z, w.v0.w, w.v1.x, w.v1.y, w.v1.z, w.v1.w};
  const int q = w.sh >> 2;  // whole words to skip, then a half word if sh % 4 == 2
#pragma unroll
  for (int i = 0; i < 6; ++i) x[i] = q & 2 ? x[i + 2] : x[i];
#pragma unroll
  for (int i = 0; i < 7; ++i) x[i] = q & 1 ? x[i + 1] : x[i];
  const unsigned shift = (w.sh & 2) * 8;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    unsigned v = __funnelshift_r(x[j], x[j + 1], shift);
    if (2 * j + 1 >= w.nv) v &= 0xFFFFu;
    if (2 * j >= w.nv) v = 0u;
    r[j] = v;
  }
}

template <int BLOCK, int PINGPONG, int EPI, int BN, int STAGES, int UG, typename T>
__global__ void __launch_bounds__(BLOCK, 1)  // 1 block per SM: 168 (128) registers at launch
    wgmma_persistent(const T* A, const T* B, float* C, int M, int N, int K) {
  static_assert((BLOCK == 384 || BLOCK == 512) && (BN == 128 || BN == 256), "3 or 4 warpgroups");
  static_assert(UG == 2 || UG == 4 || UG == 8, "chunks in flight on the unaligned path");
  constexpr int PRODUCERS = BLOCK / 128 - 2, PT = 128 * PRODUCERS;  // producer threads
  // Registers as in step 5: the producers keep PRODUCER_REGS, the consumers get the rest. The
  // loop over tiles needs a few more producer registers than step 5's 56 and 128 (UG = 2, 8) to
  // stay free of spills; the consumers are compiled within the launch's 168 anyway.
  constexpr int LAUNCH_REGS = 65536 / BLOCK / 8 * 8;
  constexpr int PRODUCER_REGS = UG <= 2 ? 64 : UG <= 4 ? 96 : 152;
  constexpr int CONSUMER_REGS = (LAUNCH_REGS * BLOCK - PT * PRODUCER_REGS) / 256 / 8 * 8;
  // The tile (BM x BN) and what one consumer computes of it (WM rows, MW wgmmas of m64 a k16).
  constexpr int BM = PINGPONG ? 16384 / BN : 128, WM = PINGPONG ? BM : 64, MW = WM / 64;
  constexpr int ACC = MW * BN / 2;                // accumulators a consumer thread holds
  constexpr int BK = 64;                          // one 128-byte row of 16-bit elements
  constexpr int A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2, STAGE = A_BYTES + B_BYTES;
  constexpr int GROUP = 2048 / BM;                // tile rows walked together (L2 reuse)
  constexpr int READERS = PINGPONG ? 4 : 8;       // consumer warps that read a slice
  extern __shared__ unsigned char smem_raw[];
  // The swizzle is read off address bits 4-9: align the stages to 1024 bytes.
  const unsigned raw = smem_addr(smem_raw);
  unsigned char* smem = smem_raw + ((1024 - raw % 1024) % 1024);
  const unsigned base = smem_addr(smem);
  auto full = reinterpret_cast<unsigned long long*>(smem + STAGES * STAGE);
  auto empty = full + STAGES;
  auto turn = empty + STAGES;  // ping-pong: turn[c] completes when the other's main loop ends
  // EPI: each consumer warp's 16 x 32 staging slab for C, rows of EPI_LD floats (32 + 8: the
  // float2 writes of a half warp then hit 32 different banks), after the barriers' 256 bytes.
  constexpr int EPI_LD = 40;
  float* const slabs = reinterpret_cast<float*>(smem + STAGES * STAGE + 256);

  const int tiles_n = (N + BN - 1) / BN, tiles_m = (M + BM - 1) / BM, tiles = tiles_n * tiles_m;
  const int slices = (K + BK - 1) / BK;
  // Tile order (step 5's): GROUP tile rows at a time, down a column of them, then the next.
  auto coords = [&](int id, int& bm, int& bn) {
    const int group = id / (GROUP * tiles_n), first = group * GROUP;
    const int rows = min(GROUP, tiles_m - first), in_group = id % (GROUP * tiles_n);
    bm = (first + in_group % rows) * BM;
    bn = in_group / rows * BN;
  };

  const int tid = threadIdx.x, wg = tid / 128;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], PT);                   // every producer thread arrives once a slice
      mbar_init(&empty[s], READERS);             // lane 0 of each warp that reads the slice
    }
    mbar_init(&turn[0], 1);
    mbar_init(&turn[1], 1);
  }
  __syncthreads();

  if (wg < PRODUCERS) {
    // ------- producer: slice g of the block (over all its tiles) into stage g % STAGES -------
    setmaxnreg_dec<PRODUCER_REGS>();
    const int p = tid;  // 0 .. PT - 1
    const bool vec = K % 8 == 0 && N % 8 == 0;  // 16-byte aligned rows: cp.async
    // Thread p copies chunk lc (16 bytes) of 128-byte rows lr, lr + RPP, ... (step 5's).
    constexpr int RPP = PT / 8, A_PASSES = BM / RPP, B_PASSES = BK / RPP, PANELS = BN / 64;
    static_assert(A_PASSES % UG == 0 && B_PASSES * PANELS % UG == 0, "whole groups of chunks");
    const int lc = p % 8, lr = p / 8;
    const unsigned dst = lr * 128 + ((lc ^ (lr % 8)) << 4);
    const long long a_step = (long long)RPP * K * 2, b_step = (long long)RPP * N * 2;  // bytes
    int s = 0;
    unsigned phase = 0;  // the ring's position: the stage and parity of the next slice

    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      int bm, bn;
      coords(tile, bm, bn);
      const bool inner_mn = bm + BM <= M && bn + BN <= N;  // no edge in this tile but K's
      const long long a_off = (long long)(bm + lr) * K + lc * 8;
      const long long b_off = (long long)lr * N + bn + lc * 8;

      auto load = [&](int st, int k0) {
        const unsigned sa = base + st * STAGE + dst, sb = sa + A_BYTES;
        if (vec && inner_mn && k0 + BK <= K) {
          const char* a = reinterpret_cast<const char*>(A + a_off + k0);
#pragma unroll
          for (int i = 0; i < A_PASSES; ++i, a += a_step) cp_async16(sa + i * RPP * 128, a);
          const char* b = reinterpret_cast<const char*>(B + b_off + (long long)k0 * N);
#pragma unroll
          for (int i = 0; i < B_PASSES; ++i, b += b_step)
#pragma unroll
            for (int j = 0; j < PANELS; ++j)
              cp_async16(sb + i * RPP * 128 + j * BK * 128, b + j * 128);
        } else if (vec) {  // an edge tile: chunks past M, N or K are zero-filled
#pragma unroll 1
          for (int i = 0; i < A_PASSES; ++i) {
            const int gr = bm + lr + RPP * i, gc = k0 + lc * 8;
            const bool ok = gr < M && gc < K;
            cp_async16(sa + i * RPP * 128, ok ? A + (long long)gr * K + gc : A, ok ? 16 : 0);
          }
#pragma unroll 1
          for (int i = 0; i < B_PASSES; ++i)
#pragma unroll
            for (int j = 0; j < PANELS; ++j) {
              const int gr = k0 + lr + RPP * i, gc = bn + j * 64 + lc * 8;
              const bool ok = gr < K && gc < N;
              cp_async16(sb + i * RPP * 128 + j * BK * 128, ok ? B + (long long)gr * N + gc : B,
                         ok ? 16 : 0);
            }
        } else {  // rows not 16-byte aligned: aligned 16-byte loads, shifted into place
          const unsigned short* a16 = reinterpret_cast<const unsigned short*>(A);
          const unsigned short* b16 = reinterpret_cast<const unsigned short*>(B);
#pragma unroll 1
          for (int i0 = 0; i0 < A_PASSES; i0 += UG) {
            Window w[UG];
#pragma unroll
            for (int u = 0; u < UG; ++u) {
              const int gr = bm + lr + RPP * (i0 + u), gc = k0 + lc * 8;
              const int nv = gr < M ? max(0, min(8, K - gc)) : 0;
              w[u] = window_load(a16, (long long)gr * K + gc, nv, (long long)M * K);
            }
#pragma unroll
            for (int u = 0; u < UG; ++u) {
              unsigned r[4];
              window_words(w[u], r);
              st_shared16(sa + (i0 + u) * RPP * 128, r);
            }
          }
#pragma unroll 1
          for (int c0 = 0; c0 < B_PASSES * PANELS; c0 += UG) {
            Window w[UG];
#pragma unroll
            for (int u = 0; u < UG; ++u) {
              const int i = (c0 + u) / PANELS, j = (c0 + u) % PANELS;
              const int gr = k0 + lr + RPP * i, gc = bn + j * 64 + lc * 8;
              const int nv = gr < K ? max(0, min(8, N - gc)) : 0;
              w[u] = window_load(b16, (long long)gr * N + gc, nv, (long long)K * N);
            }
#pragma unroll
            for (int u = 0; u < UG; ++u) {
              const int i = (c0 + u) / PANELS, j = (c0 + u) % PANELS;
              unsigned r[4];
              window_words(w[u], r);
              st_shared16(sb + i * RPP * 128 + j * BK * 128, r);
            }
          }
        }
      };

      for (int t = 0; t < slices; ++t) {
        mbar_wait(&empty[s], phase ^ 1);  // the consumers are done with slice g - STAGES
        load(s, t * BK);
        if (vec) {
          cp_async_mbar_arrive(&full[s]);  // arrives when this thread's copies have landed
        } else {                           // st.shared: fence, then arrive (release)
          fence_proxy_async();
          mbar_arrive(&full[s]);
        }
        if (++s == STAGES) {
          s = 0;
          phase ^= 1;
        }
      }
    }
  } else {
    // ------- consumers: cooperative, rows 64 c .. 64 c + 63 of every tile of the block;
    //         ping-pong, the whole of every other tile (the block's tiles c, c + 2, ...) -------
    setmaxnreg_inc<CONSUMER_REGS>();
    const int c = wg - PRODUCERS, lane = tid % 32, warp = tid / 32 % 4;
    float acc[ACC];
    for (int j = PINGPONG ? c : 0; (int)blockIdx.x + j * (int)gridDim.x < tiles;
         j += PINGPONG ? 2 : 1) {
      int bm, bn;
      coords(blockIdx.x + j * gridDim.x, bm, bn);
      // The ring position of this tile's first slice: every tile of the block has `slices`.
      const unsigned g = (unsigned)j * (unsigned)slices;
      int s = g % STAGES, prev = 0;
      unsigned phase = g / STAGES & 1;
      // Ping-pong: the other consumer's main loop on the block's tile j - 1 has waited on all
      // of its slices, so every slice before this tile's has landed: this consumer's parity
      // waits cannot see a phase two behind.
      if (PINGPONG && j > 0) mbar_wait(&turn[c], (j - 1) / 2 & 1);

      for (int t = 0; t < slices; ++t) {
        mbar_wait(&full[s], phase);
        fence_proxy_async();  // the copies were generic-proxy writes; wgmma reads async
        const unsigned sa = base + s * STAGE + (PINGPONG ? 0 : c * 64 * 128);
        const unsigned sb = base + s * STAGE + A_BYTES;
        wgmma_fence_operands<ACC>(acc);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
          const unsigned long long db = wgmma_desc(sb + kk * 16 * 128, BK * 128, 1024);
#pragma unroll
          for (int m = 0; m < MW; ++m) {
            const unsigned long long da = wgmma_desc(sa + m * 64 * 128 + kk * 32, 16, 1024);
            wgmma_tile<BN>(acc + m * (BN / 2), da, db, t > 0 || kk > 0, T());
          }
        }
        wgmma_commit();
        wgmma_fence_operands<ACC>(acc);
        wgmma_wait<1>();  // slice g - 1's wgmmas are done: its stage may be refilled
        if (t > 0 && lane == 0) mbar_arrive(&empty[prev]);
        prev = s;
        if (++s == STAGES) {
          s = 0;
          phase ^= 1;
        }
      }
      // Ping-pong: the other consumer may start on its tile while these wgmmas drain.
      if (PINGPONG && tid % 128 == 0) mbar_arrive(&turn[c ^ 1]);
      wgmma_wait<0>();
      wgmma_fence_operands<ACC>(acc);
      if (lane == 0) mbar_arrive(&empty[prev]);  // the tile's last slice

      // Accumulator layout (per warp, as mma.sync's m16n8): acc[m BN / 2 + 4 j + 2 h + e] is row
      // 64 m + 16 warp + lane / 4 + 8 h of the consumer's rows, column 8 j + 2 (lane % 4) + e.
      if (EPI && N % 4 == 0 && bm + BM <= M && bn + BN <= N) {
        // Staged: 32 columns at a time through the warp's slab, so that each 16-byte store of a
        // warp writes 4 whole 128-byte rows of C (instead of 8 quarter rows a float2 store).
        float* const slab = slabs + (c * 4 + warp) * 16 * EPI_LD;
#pragma unroll
        for (int m = 0; m < MW; ++m) {
          const int rows = bm + (PINGPONG ? m * 64 : c * 64) + warp * 16;
#pragma unroll
          for (int j0 = 0; j0 < BN / 8; j0 += 4) {
#pragma unroll
            for (int jj = 0; jj < 4; ++jj)
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                const float* v = acc + m * (BN / 2) + 4 * (j0 + jj) + 2 * h;
                *reinterpret_cast<float2*>(slab + (lane / 4 + 8 * h) * EPI_LD + 8 * jj +
                                           2 * (lane % 4)) = make_float2(v[0], v[1]);
              }
            __syncwarp();
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              const int r = lane / 8 + 4 * i;
              const float4 x = *reinterpret_cast<const float4*>(slab + r * EPI_LD + 4 * (lane % 8));
              *reinterpret_cast<float4*>(C + (long long)(rows + r) * N + bn + 8 * j0 +
                                         4 * (lane % 8)) = x;
            }
            __syncwarp();
          }
        }
        continue;
      }
      const bool pairs = N % 2 == 0;
#pragma unroll
      for (int m = 0; m < MW; ++m) {
        const int row0 = bm + (PINGPONG ? m * 64 : c * 64) + warp * 16 + lane / 4;
#pragma unroll
        for (int jj = 0; jj < BN / 8; ++jj) {
          const int col = bn + 8 * jj + 2 * (lane % 4);
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = row0 + 8 * h;
            if (r >= M) continue;
            const float* v = acc + m * (BN / 2) + 4 * jj + 2 * h;
            float* dst = C + (long long)r * N + col;
            if (pairs && col + 1 < N) {
              *reinterpret_cast<float2*>(dst) = make_float2(v[0], v[1]);
            } else {
              if (col < N) dst[0] = v[0];
              if (col + 1 < N) dst[1] = v[1];
            }
          }
        }
      }
    }
  }
}
