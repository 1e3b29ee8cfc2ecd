// The persistent, TMA-fed wgmma GEMM of the matmul_tc ladder (steps 7 and 8), as one __device__
// function template that a thin __global__ wrapper calls: C (M x N, float32, row-major) = A * B,
// A and B given as tensor maps (`tensor_maps: A[M][K] box [BM][64] swizzle 128; B[K][N] box [64]
// [64] swizzle 128`, 16-bit elements), the rest of step 6's kernel (wgmma_persistent_tune.cu)
// unchanged:
// - A block is 384 threads (launched with __launch_bounds__(384, 1), one block per SM): warpgroup
//   0 the producer, warpgroups 1 and 2 the consumers (wgmma m64nBNk16 from shared memory).
// - Tiles: BM x BN (BM = 128 cooperative, 16384 / BN ping-pong), walked tile += gridDim.x in
//   step 5's grouped order (16 tile rows down a column, then the next).
// - Stages: STAGES ring slots of A's BM x 64 slice (BM rows of 128 bytes) and B's 64 x BN slice
//   (BN / 64 panels of 64 rows x 128 bytes), 128-byte swizzled (16-byte chunk c of row r at
//   c ^ r % 8), each slot 1024-byte aligned: exactly what one TMA box of A and BN / 64 boxes of
//   B write with CU_TENSOR_MAP_SWIZZLE_128B, and what the wgmma descriptors name.
// - Producer: one elected thread per stage waits on `empty`, arms `full` (count 1) with the
//   stage's bytes (mbarrier.arrive.expect_tx) and issues 1 + BN / 64 TMA copies that complete
//   on it. The ring (stage, parity) runs across the block's tiles. A box past M, N or K arrives
//   with zeros there, so no load has a mask and K needs no multiple of 64; the TMA still counts
//   the whole box's bytes. The warpgroup keeps 40 registers (setmaxnreg.dec); the consumers get
//   the rest (232).
// - Consumers: step 6's loop (scale-d 0 on a tile's first wgmma, one slice's wgmmas in flight,
//   `empty` released per slice) without its fence.proxy.async: the TMA writes and wgmma reads
//   are both async-proxy accesses, ordered by the mbarrier. Epilogue (EPI = 1): step 6's 16 x 32
//   shared slab per warp and its 16-byte stores when N % 4 == 0, for edge tiles too (masked;
//   step 6 stages whole tiles only), and for any other N (step 8) masked 4-byte stores of 32
//   consecutive columns of a row; EPI = 0: step 6's unstaged float2 / float stores.
// Shared memory the caller must give (dynamic, any alignment):
//   STAGES * (BM * 64 + 64 * BN) * 2 + 1024 + 256 + EPI * 20480 bytes.
#pragma once

#include <kernlab/tma_sm90.cuh>

template <int BN>
__device__ __forceinline__ void kl_wgmma_tile(float* d, unsigned long long da,
                                              unsigned long long db, int scale_d,
                                              __nv_bfloat16 t) {
  if constexpr (BN == 256) wgmma_m64n256k16(d, da, db, scale_d, t);
  else wgmma_m64n128k16(d, da, db, scale_d, t);
}
template <int BN>
__device__ __forceinline__ void kl_wgmma_tile(float* d, unsigned long long da,
                                              unsigned long long db, int scale_d, __half t) {
  if constexpr (BN == 256) wgmma_m64n256k16(d, da, db, scale_d, t);
  else wgmma_m64n128k16(d, da, db, scale_d, t);
}

// Registers a thread of the producer warpgroup keeps, and what the consumers take.
constexpr int KL_TMA_PRODUCER_REGS = 40;
constexpr int KL_TMA_CONSUMER_REGS = (168 * 384 - 128 * KL_TMA_PRODUCER_REGS) / 256 / 8 * 8;

template <int PINGPONG, int EPI, int BN, int STAGES, typename T>
__device__ __forceinline__ void wgmma_tma_gemm(const kl_tensor_map& map_a,
                                               const kl_tensor_map& map_b, float* C, int M, int N,
                                               int K, unsigned char* smem_raw) {
  static_assert(BN == 128 || BN == 256, "m64n128 or m64n256");
  static_assert(sizeof(T) == 2, "16-bit elements: a 64-element row is one 128-byte swizzle row");
  // The tile (BM x BN) and what one consumer computes of it (WM rows, MW wgmmas of m64 a k16).
  constexpr int BM = PINGPONG ? 16384 / BN : 128, WM = PINGPONG ? BM : 64, MW = WM / 64;
  constexpr int ACC = MW * BN / 2;                // accumulators a consumer thread holds
  constexpr int BK = 64;                          // one 128-byte row of 16-bit elements
  constexpr int A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2, STAGE = A_BYTES + B_BYTES;
  constexpr int PANELS = BN / 64, PANEL_BYTES = BK * 128;
  constexpr int GROUP = 2048 / BM;                // tile rows walked together (L2 reuse)
  constexpr int READERS = PINGPONG ? 4 : 8;       // consumer warps that read a slice
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
  auto coords = [&](int id, int& bm, int& bn) {
    const int group = id / (GROUP * tiles_n), first = group * GROUP;
    const int rows = min(GROUP, tiles_m - first), in_group = id % (GROUP * tiles_n);
    bm = (first + in_group % rows) * BM;
    bn = in_group / rows * BN;
  };

  const int tid = threadIdx.x, wg = tid / 128;
  if (tid == 0) {
    tma_prefetch(map_a);
    tma_prefetch(map_b);
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);        // the producer's arrive.expect_tx; the TMA's bytes complete it
      mbar_init(&empty[s], READERS);  // lane 0 of each warp that reads the slice
    }
    mbar_init(&turn[0], 1);
    mbar_init(&turn[1], 1);
    mbar_init_fence();
  }
  __syncthreads();

  if (wg == 0) {
    // ------- producer: slice g of the block (over all its tiles) into stage g % STAGES -------
    setmaxnreg_dec<KL_TMA_PRODUCER_REGS>();
    if (tid != 0) return;
    int s = 0;
    unsigned phase = 0;  // the ring's position: the stage and parity of the next slice
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      int bm, bn;
      coords(tile, bm, bn);
#pragma unroll 1
      for (int t = 0; t < slices; ++t) {
        mbar_wait(&empty[s], phase ^ 1);  // the consumers are done with slice g - STAGES
        unsigned char* st = smem + s * STAGE;
        mbar_arrive_expect_tx(&full[s], STAGE);
        tma_load_2d(st, map_a, t * BK, bm, &full[s]);
#pragma unroll
        for (int j = 0; j < PANELS; ++j)
          tma_load_2d(st + A_BYTES + j * PANEL_BYTES, map_b, bn + 64 * j, t * BK, &full[s]);
        if (++s == STAGES) {
          s = 0;
          phase ^= 1;
        }
      }
    }
    return;
  }

  // ------- consumers: cooperative, rows 64 c .. 64 c + 63 of every tile of the block;
  //         ping-pong, the whole of every other tile (the block's tiles c, c + 2, ...) -------
  setmaxnreg_inc<KL_TMA_CONSUMER_REGS>();
  const int c = wg - 1, lane = tid % 32, warp = tid / 32 % 4;
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
      mbar_wait(&full[s], phase);  // the TMA's bytes have landed (async proxy, as wgmma's reads)
      const unsigned sa = base + s * STAGE + (PINGPONG ? 0 : c * 64 * 128);
      const unsigned sb = base + s * STAGE + A_BYTES;
      wgmma_fence_operands<ACC>(acc);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) {
        const unsigned long long db = wgmma_desc(sb + kk * 16 * 128, PANEL_BYTES, 1024);
#pragma unroll
        for (int m = 0; m < MW; ++m) {
          const unsigned long long da = wgmma_desc(sa + m * 64 * 128 + kk * 32, 16, 1024);
          kl_wgmma_tile<BN>(acc + m * (BN / 2), da, db, t > 0 || kk > 0, T());
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
    if (EPI) {
      // Staged: 32 columns at a time through the warp's slab. When N % 4 == 0 (rows of C 16-byte
      // aligned) C leaves in 16-byte stores, each of a warp writing 4 whole 128-byte rows of C
      // (instead of 8 quarter rows a float2 store), masked at the edges; otherwise (odd N, step
      // 8 only) in 4-byte stores of 32 consecutive columns of one row, masked, where unstaged
      // stores would write 8 rows a float. Slabs wholly past N are not written.
      float* const slab = slabs + (c * 4 + warp) * 16 * EPI_LD;
      const bool vec = N % 4 == 0;
#pragma unroll
      for (int m = 0; m < MW; ++m) {
        const int rows = bm + (PINGPONG ? m * 64 : c * 64) + warp * 16;
#pragma unroll
        for (int j0 = 0; j0 < BN / 8; j0 += 4) {
          const int col0 = bn + 8 * j0;  // the slab's first column
          if (col0 >= N) continue;       // the same for the whole warp
#pragma unroll
          for (int jj = 0; jj < 4; ++jj)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const float* v = acc + m * (BN / 2) + 4 * (j0 + jj) + 2 * h;
              *reinterpret_cast<float2*>(slab + (lane / 4 + 8 * h) * EPI_LD + 8 * jj +
                                         2 * (lane % 4)) = make_float2(v[0], v[1]);
            }
          __syncwarp();
          if (vec) {
            const int col = col0 + 4 * (lane % 8);  // N % 4 == 0: col < N means col + 3 < N
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              const int r = lane / 8 + 4 * i;
              const float4 x =
                  *reinterpret_cast<const float4*>(slab + r * EPI_LD + 4 * (lane % 8));
              if (rows + r < M && col < N)
                *reinterpret_cast<float4*>(C + (long long)(rows + r) * N + col) = x;
            }
          } else if (col0 + lane < N) {
#pragma unroll
            for (int r = 0; r < 16; ++r)
              if (rows + r < M) C[(long long)(rows + r) * N + col0 + lane] = slab[r * EPI_LD + lane];
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
