// Step 5 of the tensor-core ladder: Hopper's warpgroup MMA (wgmma) fed by a warp-specialised
// producer. Step 4 (mma.sync, 8 warps of 64 x 64) stalls on ldmatrix and on its own MMA
// latency, and every thread both copies and computes. Here the roles split by warpgroup: the
// first (or the first two, at BLOCK = 512) only copy, the last two only compute, each a 64 x BN
// half of the block's 128 x BN tile with wgmma.mma_async m64nBNk16, A and B read by the tensor
// cores straight from shared memory (no ldmatrix, no fragments in registers), the next slice's
// wgmmas issued while the last ones run.
// - Layout: each stage holds A's 128 x 64 slice K-major and B's 64 x BN slice N-major (panels of
//   64 columns), both in 128-byte rows with the 128-byte swizzle (16-byte chunk c of row r at
//   chunk c ^ r % 8), the canonical layout wgmma's matrix descriptors name; it is also free of
//   bank conflicts for the producer's 16-byte stores.
// - Copies: TMA needs a tensor map built on the host, which kernlab's launch cannot pass, so the
//   producer issues 16-byte cp.async into the swizzled layout. Each thread copies one chunk
//   column of rows 8 apart, so its swizzled chunk is one constant and, in tiles with no edge,
//   a copy costs one 64-bit add (the other offsets are constants); edge tiles zero-fill with
//   src-size 0.
//   Each thread then arms cp.async.mbarrier.arrive.noinc on the stage's `full` mbarrier, which
//   fires when its copies land. Rows that are not 16-byte aligned (K or N not a multiple of 8)
//   take two aligned 16-byte loads per chunk, shifted into place and stored with st.shared,
//   then fence.proxy.async and an ordinary arrive.
// - Hand-over: the consumers wait on `full`, fence.proxy.async (the copies were generic-proxy
//   writes, wgmma reads through the async proxy), issue the slice's four k16 wgmmas, commit,
//   wait until the previous slice's group is done and release that slice's `empty` mbarrier.
// - Registers: setmaxnreg drops the producers to what the unaligned path needs (56..128, by
//   UG) and raises the consumers with the rest of the launch's share (168 a thread at 384
//   threads, 128 at 512); ptxas compiles the consumers within the launch's share regardless.
// - Order of the tiles: groups of 16 tile rows are walked column by column, so a wave of 132
//   blocks shares its A rows and B columns in L2.
// H100, bfloat16 (results branch: 2026-11-26-h100-tc-wgmma/): the named point did 744-754 TFLOP/s at
// 4096^3 and 755-847 at 8192^3 (0.92x-1.09x the cuBLAS of the same call), 2.7x-3.0x step 4;
// Nsight Compute puts the tensor cores' SM throughput at 78% and 89%. At 4095x4097x1023 (odd K
// and N: the unaligned path) it is 82 TFLOP/s, 0.57x cuBLAS, the producer waiting on its loads
// (SM 21%); BN = 128, UG = 4 at 512 threads (two producers) is the best there, 0.70x.
// The named point wgmma_cp_async is BN = 256, 4 stages (192 KiB of shared memory), one producer
// warpgroup; at 512 threads (two producers) BN is 128 (ptxas caps a 512-thread block at 128
// registers, too few for m64n256's 128 accumulators).
/* kernlab
family:       matmul_tc
target:       sm_90a
entry:        wgmma_cp_async<BLOCK, BN, STAGES, UG, T>
blocks:       384 512                 # 1 or 2 producer warpgroups, then 2 consumers
dtypes:       bfloat16 float16
tune:         BN = 128, 256; STAGES = 3, 4, 5, 6; UG = 2, 4, 8
require:      STAGES * (128 * 64 + 64 * BN) * 2 + 1024 + 256 <= 232448; BLOCK == 384 || BN == 128; BLOCK == 384 || UG <= 4
shared_bytes: STAGES * (128 * 64 + 64 * BN) * TSIZE + 1024 + 256
grid_dims:    ceil_div(N, BN), ceil_div(M, 128)
summary:      + wgmma from swizzled shared memory, a cp.async producer warpgroup, mbarrier stages
points:       wgmma_cp_async(BN=256,STAGES=4,UG=8) "+ wgmma m64n256k16 from 128B-swizzled shared memory, cp.async producer warpgroup, 4 mbarrier stages"
order:        5
*/
#include <kernlab/wgmma_sm90.cuh>

template <int BN>
__device__ __forceinline__ void wgmma_tile(float* d, unsigned long long da,
                                           unsigned long long db, __nv_bfloat16 t) {
  if constexpr (BN == 256) wgmma_m64n256k16(d, da, db, 1, t);
  else wgmma_m64n128k16(d, da, db, 1, t);
}
template <int BN>
__device__ __forceinline__ void wgmma_tile(float* d, unsigned long long da,
                                           unsigned long long db, __half t) {
  if constexpr (BN == 256) wgmma_m64n256k16(d, da, db, 1, t);
  else wgmma_m64n128k16(d, da, db, 1, t);
}

// Unaligned rows: 8 consecutive 16-bit elements p[g .. g + 8), the first nv (0..8) valid and the
// rest read as 0, from the one or two aligned 16-byte blocks that hold them (two wide loads
// instead of eight narrow ones), then shifted into four words. Near the buffer's end (total
// elements), where the second block would pass it, the elements are read one by one.
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

template <int BLOCK, int BN, int STAGES, int UG, typename T>
__global__ void __launch_bounds__(BLOCK, 1)  // 1 block per SM: 168 (128) registers at launch
    wgmma_cp_async(const T* A, const T* B, float* C, int M, int N, int K) {
  static_assert((BLOCK == 384 || BLOCK == 512) && (BN == 128 || BN == 256), "3 or 4 warpgroups");
  static_assert(UG == 2 || UG == 4 || UG == 8, "chunks in flight on the unaligned path");
  constexpr int PRODUCERS = BLOCK / 128 - 2, PT = 128 * PRODUCERS;  // producer threads
  // Registers: a thread starts with the launch's share (168 at 384 threads, 128 at 512); the
  // producers keep PRODUCER_REGS and hand the rest to the consumers (setmaxnreg.inc blocks until
  // the pool has them, so the sum must stay within what the block was given).
  // UG chunks of the unaligned path in flight take 8 registers each: 56 registers for 2, 96 for
  // 4, 128 for 8 (none spill). The consumers are compiled within the launch's share anyway.
  constexpr int LAUNCH_REGS = 65536 / BLOCK / 8 * 8;
  constexpr int PRODUCER_REGS = UG <= 2 ? 56 : UG <= 4 ? 96 : 128;
  constexpr int CONSUMER_REGS = (LAUNCH_REGS * BLOCK - PT * PRODUCER_REGS) / 256 / 8 * 8;
  constexpr int BM = 128, BK = 64;                // BK: one 128-byte row of 16-bit elements
  constexpr int A_BYTES = BM * BK * 2, B_BYTES = BK * BN * 2, STAGE = A_BYTES + B_BYTES;
  constexpr int GROUP = 16;                       // tile rows walked together (L2 reuse)
  extern __shared__ unsigned char smem_raw[];
  // The swizzle is read off address bits 4-9: align the stages to 1024 bytes.
  const unsigned raw = smem_addr(smem_raw);
  unsigned char* smem = smem_raw + ((1024 - raw % 1024) % 1024);
  const unsigned base = smem_addr(smem);
  auto full = reinterpret_cast<unsigned long long*>(smem + STAGES * STAGE);
  auto empty = full + STAGES;

  // Tile order: GROUP tile rows at a time, down a column of them, then the next column.
  const int tiles_n = gridDim.x, tiles_m = gridDim.y;
  const int id = blockIdx.y * tiles_n + blockIdx.x;
  const int group = id / (GROUP * tiles_n), first = group * GROUP;
  const int rows = min(GROUP, tiles_m - first), in_group = id % (GROUP * tiles_n);
  const int bm = (first + in_group % rows) * BM, bn = in_group / rows * BN;

  const int tid = threadIdx.x, wg = tid / 128;
  const int slices = (K + BK - 1) / BK;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], PT);  // every producer thread arrives once per slice
      mbar_init(&empty[s], 8);   // lane 0 of each consumer warp
    }
  }
  __syncthreads();

  if (wg < PRODUCERS) {
    // ---------------- producer: copies slice t into stage t % STAGES ----------------
    setmaxnreg_dec<PRODUCER_REGS>();
    const int p = tid;  // 0 .. PT - 1
    const bool vec = K % 8 == 0 && N % 8 == 0;  // 16-byte aligned rows: cp.async
    // Thread p copies chunk lc (16 bytes) of 128-byte rows lr, lr + RPP, ...: of A's rows and of
    // each 64-column panel of B's rows. RPP is a multiple of 8, so every row it touches has the
    // same row % 8, and the swizzled chunk (lc ^ row % 8) is one constant.
    constexpr int RPP = PT / 8, A_PASSES = BM / RPP, B_PASSES = BK / RPP, PANELS = BN / 64;
    static_assert(A_PASSES % UG == 0 && B_PASSES * PANELS % UG == 0, "whole groups of chunks");
    const int lc = p % 8, lr = p / 8;
    const unsigned dst = lr * 128 + ((lc ^ (lr % 8)) << 4);
    const bool inner_mn = bm + BM <= M && bn + BN <= N;  // no edge in this tile but K's
    const long long a_off = (long long)(bm + lr) * K + lc * 8;
    const long long b_off = (long long)lr * N + bn + lc * 8;
    const long long a_step = (long long)RPP * K * 2, b_step = (long long)RPP * N * 2;  // bytes

    auto load = [&](int s, int k0) {
      const unsigned sa = base + s * STAGE + dst, sb = sa + A_BYTES;
      if (vec && inner_mn && k0 + BK <= K) {
        // The common case: no checks, and per pass one 64-bit add; the other offsets (passes in
        // shared memory, panels in both) are constants the copy instruction can carry.
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
        // UG chunks at a time: their loads in flight together, then shifted and stored.
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
      const int s = t % STAGES;
      mbar_wait(&empty[s], (t / STAGES & 1) ^ 1);  // the consumers are done with slice t - STAGES
      load(s, t * BK);
      if (vec) {
        cp_async_mbar_arrive(&full[s]);  // arrives when this thread's copies have landed
      } else {                           // st.shared: fence, then arrive (release)
        fence_proxy_async();
        mbar_arrive(&full[s]);
      }
    }
  } else {
    // ---------------- consumers: warpgroup c computes rows 64 c .. 64 c + 63 ----------------
    setmaxnreg_inc<CONSUMER_REGS>();
    const int c = wg - PRODUCERS, lane = tid % 32, warp = tid / 32 % 4;
    float acc[BN / 2];
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) acc[i] = 0.0f;

    for (int t = 0; t < slices; ++t) {
      const int s = t % STAGES;
      mbar_wait(&full[s], t / STAGES & 1);
      fence_proxy_async();  // the copies were generic-proxy writes; wgmma reads async
      const unsigned sa = base + s * STAGE + c * 64 * 128, sb = base + s * STAGE + A_BYTES;
      wgmma_fence_operands<BN / 2>(acc);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) {
        const unsigned long long da = wgmma_desc(sa + kk * 32, 16, 1024);
        const unsigned long long db = wgmma_desc(sb + kk * 16 * 128, BK * 128, 1024);
        wgmma_tile<BN>(acc, da, db, T());
      }
      wgmma_commit();
      wgmma_fence_operands<BN / 2>(acc);
      wgmma_wait<1>();  // slice t - 1's wgmmas are done: its stage may be refilled
      if (t > 0 && lane == 0) mbar_arrive(&empty[(t - 1) % STAGES]);
    }
    wgmma_wait<0>();
    wgmma_fence_operands<BN / 2>(acc);

    // Accumulator layout (per warp, as mma.sync's m16n8): acc[4 j + 2 h + e] is row
    // 16 warp + lane / 4 + 8 h, column 8 j + 2 (lane % 4) + e.
    const int row0 = bm + c * 64 + warp * 16 + lane / 4;
    const bool pairs = N % 2 == 0;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j) {
      const int col = bn + 8 * j + 2 * (lane % 4);
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = row0 + 8 * h;
        if (r >= M) continue;
        float* dst = C + (long long)r * N + col;
        if (pairs && col + 1 < N) {
          *reinterpret_cast<float2*>(dst) = make_float2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
        } else {
          if (col < N) dst[0] = acc[4 * j + 2 * h];
          if (col + 1 < N) dst[1] = acc[4 * j + 2 * h + 1];
        }
      }
    }
  }
}
