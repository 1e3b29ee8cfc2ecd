// Step 5 of the tensor-core ladder: Hopper's warpgroup MMA (wgmma) fed by a warp-specialised
// producer. Step 4 (mma.sync, 8 warps of 64 x 64) stalls on ldmatrix and on its own MMA
// latency, and every thread both copies and computes. Here a block of 3 warpgroups splits the
// roles: warpgroup 0 only copies, warpgroups 1 and 2 only compute, each a 64 x BN half of the
// block's 128 x BN tile with wgmma.mma_async m64nBNk16, A and B read by the tensor cores
// straight from shared memory (no ldmatrix, no fragments in registers), and the next wgmma
// issued while the last one runs.
// - Layout: each stage holds A's 128 x 64 slice K-major and B's 64 x BN slice N-major (panels of
//   64 columns), both in 128-byte rows with the 128-byte swizzle (16-byte chunk c of row r at
//   chunk c ^ r % 8), the canonical layout wgmma's matrix descriptors name; it is also free of
//   bank conflicts for the producer's 16-byte stores.
// - Copies: TMA needs a tensor map built on the host, which kernlab's launch cannot pass, so the
//   producer issues 16-byte cp.async into the swizzled layout (zero-filled past the edges). It
//   signals a stage STAGES - 1 slices later: cp.async.wait_group, then fence.proxy.async (the
//   copies were generic-proxy writes that the async proxy reads next), then an arrive on the
//   stage's `full` mbarrier. Rows that are not 16-byte aligned (K or N not a multiple of 8) take
//   an element-wise path into the same layout.
// - Hand-over: the consumers wait on `full`, issue the slice's four k16 wgmmas, commit, wait
//   until the previous slice's group is done and release that slice's `empty` mbarrier.
// - Registers: setmaxnreg gives the producer 40 and each consumer 232 (128 accumulators at BN =
//   256), from the 168 a thread gets at launch (384 threads, one block per SM).
// - Order of the tiles: groups of 16 tile rows are walked column by column, so a wave of 132
//   blocks shares its A rows and B columns in L2.
// The named point wgmma_cp_async is BN = 256, 4 stages (192 KiB of shared memory).
/* kernlab
family:       matmul_tc
target:       sm_90a
entry:        wgmma_cp_async<BLOCK, BN, STAGES, FENCE, T>
blocks:       384 512                 # 1 or 2 producer warpgroups, then 2 consumers
dtypes:       bfloat16 float16
tune:         BN = 128, 256; STAGES = 3, 4, 5, 6; FENCE = 0, 1
require:      STAGES * (128 * 64 + 64 * BN) * 2 + 1024 + 256 <= 232448; BLOCK == 384 || BN == 128
shared_bytes: STAGES * (128 * 64 + 64 * BN) * TSIZE + 1024 + 256
grid_dims:    ceil_div(N, BN), ceil_div(M, 128)
summary:      + wgmma from swizzled shared memory, a cp.async producer warpgroup, mbarrier stages
points:       wgmma_cp_async(BN=256,STAGES=4,FENCE=1) "+ wgmma m64n256k16 from 128B-swizzled shared memory, cp.async producer warpgroup, 4 mbarrier stages"
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

template <int BLOCK, int BN, int STAGES, int FENCE, typename T>
__global__ void __launch_bounds__(BLOCK, 1)  // 1 block per SM: 168 (128) registers at launch
    wgmma_cp_async(const T* A, const T* B, float* C, int M, int N, int K) {
  static_assert((BLOCK == 384 || BLOCK == 512) && (BN == 128 || BN == 256), "3 or 4 warpgroups");
  constexpr int PRODUCERS = BLOCK / 128 - 2, PT = 128 * PRODUCERS;  // producer threads
  // Registers: the producers keep 40, the consumers share the rest (65536 a block).
  constexpr int CONSUMER_REGS = (65536 - PT * 40) / 256 / 8 * 8;
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
    setmaxnreg_dec<40>();
    const int p = tid;  // 0 .. PT - 1
    const bool vec_a = K % 8 == 0, vec_b = N % 8 == 0;
    // A: 8 chunks of 16 bytes a row, PT / 8 rows a pass.
    const int ac = p % 8, ar = p / 8;
    const unsigned a_dst = ar * 128 + ((ac ^ (ar % 8)) << 4);
    // B: BN / 8 chunks a row (in BN / 64 panels of 8), PT * 8 / BN rows a pass.
    constexpr int A_RPP = PT / 8, A_PASSES = BM / A_RPP;
    constexpr int B_CPR = BN / 8, B_RPP = PT / B_CPR, B_PASSES = BK / B_RPP;
    const int bc = p % B_CPR, br = p / B_CPR;
    const int b_col = bn + bc * 8;

    // Row pointers and checks that do not change along K, computed once.
    const T* a_src = A + (long long)min(bm + ar, M - 1) * K + ac * 8;
    unsigned a_rows = 0;  // bit i: row bm + ar + A_RPP i is inside A
#pragma unroll
    for (int i = 0; i < A_PASSES; ++i) a_rows |= (bm + ar + A_RPP * i < M ? 1u : 0u) << i;
    const T* b_src = B + (long long)br * N + min(b_col, N - 1);
    const bool b_col_ok = b_col < N;
    const unsigned b_dst0 = (bc / 8) * (BK * 128) + br * 128;

    auto load = [&](int s, int k0) {
      const unsigned sa = base + s * STAGE, sb = sa + A_BYTES;
      // Opaque copies of K and N: the 24 addresses are recomputed for each slice instead of
      // being hoisted out of the slice loop into 48 registers the producer does not have.
      int k = K, n = N;
      asm volatile("" : "+r"(k), "+r"(n));
      if (vec_a) {
        const bool k_ok = k0 + ac * 8 < K;
        const T* src = a_src + k0;
#pragma unroll 4
        for (int i = 0; i < A_PASSES; ++i) {
          const bool ok = k_ok && (a_rows >> i & 1);
          asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sa + a_dst +
                                                                                  i * A_RPP * 128),
                       "l"(ok ? src + A_RPP * i * k : A), "r"(ok ? 16 : 0));
        }
      } else {
        const unsigned short* a16 = reinterpret_cast<const unsigned short*>(A);
#pragma unroll 1
        for (int i = 0; i < A_PASSES; ++i) {
          const int gr = bm + ar + A_RPP * i, gc = k0 + ac * 8;
          const unsigned short* row = a16 + (long long)gr * K;
          unsigned w[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const unsigned lo = gr < M && gc + 2 * e < K ? row[gc + 2 * e] : 0u;
            const unsigned hi = gr < M && gc + 2 * e + 1 < K ? row[gc + 2 * e + 1] : 0u;
            w[e] = lo | hi << 16;
          }
          asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(sa + a_dst + i * A_RPP * 128),
                       "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]));
        }
      }
      if (vec_b) {
        const T* src = b_src + (long long)k0 * n;
#pragma unroll 4  // fully unrolled, the addresses outgrow the producer's 40 registers
        for (int i = 0; i < B_PASSES; ++i) {
          const int r = br + B_RPP * i;
          const bool ok = b_col_ok && k0 + r < K;
          const unsigned dst = b_dst0 + B_RPP * i * 128 + (((bc % 8) ^ (r % 8)) << 4);
          asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(sb + dst),
                       "l"(ok ? src + B_RPP * i * n : B), "r"(ok ? 16 : 0));
        }
      } else {
        const unsigned short* b16 = reinterpret_cast<const unsigned short*>(B);
#pragma unroll 1
        for (int i = 0; i < B_PASSES; ++i) {
          const int r = br + B_RPP * i, gr = k0 + r;
          const unsigned short* row = b16 + (long long)gr * N;
          unsigned w[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const unsigned lo = gr < K && b_col + 2 * e < N ? row[b_col + 2 * e] : 0u;
            const unsigned hi = gr < K && b_col + 2 * e + 1 < N ? row[b_col + 2 * e + 1] : 0u;
            w[e] = lo | hi << 16;
          }
          const unsigned dst = b_dst0 + B_RPP * i * 128 + (((bc % 8) ^ (r % 8)) << 4);
          asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(sb + dst), "r"(w[0]),
                       "r"(w[1]), "r"(w[2]), "r"(w[3]));
        }
      }
    };

    for (int t = 0; t < slices; ++t) {
      const int s = t % STAGES;
      mbar_wait(&empty[s], (t / STAGES & 1) ^ 1);  // the consumers are done with slice t - STAGES
      load(s, t * BK);
      if (vec_a && vec_b) {
        cp_async_mbar_arrive(&full[s]);  // arrives when this thread's copies have landed
      } else {                           // st.shared too: wait, fence, arrive (release)
        cp_async_wait<0>();
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
      if (FENCE) fence_proxy_async();  // the copies were generic-proxy writes; wgmma reads async
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
