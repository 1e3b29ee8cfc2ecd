// Step 4b of the tensor-core ladder (after step 4, mma_warp64): the same mma.sync + ldmatrix
// consumers, fed by a warp-specialised cp.async producer through an mbarrier ring.
// Step 4 stalls on its __syncthreads every K slice (one block of 8 warps per SM: each barrier
// stops the whole SM) and spends consumer issue slots on cp.async address arithmetic. Here the
// roles split by warpgroup: the first (4 warps) only copies, the next 2 x WN warps only compute,
// each a 64 x 64 part of the block's 128 x 64 WN tile with ldmatrix + mma.sync.m16n8k16.
// - Registers: 9 or more warps on an SM put 3 on some sub-partition, which caps a thread at 168
//   registers at launch (65536 / 384), too few for 128 accumulators and two fragment sets (ptxas
//   spilled 1.3 KB). setmaxnreg drops the producers to PREG and raises the consumers to the
//   rest (216 at PREG = 64, 232 at 40, 240 at 24); ptxas compiles each side's code within its
//   share. The producer's needs 64 not to spill, and the lane index is read where it is used
//   (%laneid), not kept live across the main loop.
// - Ring: STAGES slices of BK = 64 in shared memory, each with a `full` mbarrier (the producer
//   threads arm cp.async.mbarrier.arrive.noinc, which fires when their copies have landed) and an
//   `empty` one (lane 0 of every consumer warp arrives once the slice's last fragments are in
//   registers). No __syncthreads in the main loop: a consumer warp waits only on its own data.
// - Layout: 128-byte rows (64 16-bit elements) with the 128-byte XOR swizzle, no padding:
//   chunk c of row r at chunk c ^ r % 8; A's slice is 128 rows of K, B's is WN panels of 64 rows
//   x 64 columns. ldmatrix's 8 row addresses then fall in 8 different bank groups. A lane's
//   swizzled chunk for k16 step q (A) or n16 pair q (B) is 2q ^ (lane / 16 ^ lane % 8), the same
//   four offsets for both operands, so a fragment address is a stage base plus one of four
//   per-lane registers plus a constant.
// - Fragments of the next k16 step (across slices too) are loaded before the current MMAs, as in
//   step 4.
// - Copies: 16-byte cp.async with zero-fill (src-size 0) past M, N, K; rows that are not 16-byte
//   aligned (K or N not a multiple of 8) are gathered element by element into 16-byte st.shared
//   and announced with an ordinary (release) arrive: slow, exact.
// - WN = 4: 128 x 256 tiles, one block per SM; WN = 2: 128 x 128 tiles, two blocks per SM.
//   Tiles are walked in groups of 16 tile rows for L2. PERSIST = 1: one block per resident slot,
//   each walking tiles blockIdx.x, + gridDim.x, ..., the ring (stage, parities) carried across
//   tiles, so the producer loads the next tile while the consumers write C.
// H100 80GB HBM3, bfloat16 (results branch: 2026-11-27-h100-tc-mma-ws/): the named point ran
// 482.7-484.1 TFLOP/s at 4096^3 (0.60x the cuBLAS of the same call, 801-807; 1.86x-1.87x step
// 4) and 515.4-519.6 at 8192^3 (0.59x-0.67x of cuBLAS, which ranged 766-874 between calls;
// 1.83x-1.86x step 4); float16 484.0 and 519.5 (0.60x, 0.59x). Nsight Compute at 4096^3: tensor
// (HMMA) pipe active 78.3% (step 4: 42.0%), issue active 27.9%, shared-memory wavefronts 51%
// of peak; 81.8% at 8192^3. `kernlab tune --strategy exhaustive` put every WN = 4 point within
// 2% of each other (PERSIST = 1 slightly ahead); WN = 2 was 2-10% slower. Unaligned rows
// (4095x4097x1023) are 46 TFLOP/s, 0.33x cuBLAS (1.08x step 4).
// The numbers above are of PREG = 40; with the named point's PREG = 64 (no spill), one call
// each on an H100 (results branch: 2026-11-27-h100-tc-final/): 481.12 TFLOP/s at 4096^3 (0.602x
// cuBLAS's 798.77; PREG = 40 481.20) and 514.11 at 8192^3 (0.591x of 870.23; PREG = 40 520.52).
// The named point mma_ws: WN = 4 (128 x 256), 4 stages (192 KiB), PREG = 64, persistent: the
// least producer registers with no spill anywhere (PREG = 40 spilled 104 bytes in the producer,
// which ptxas compiles within PREG; the consumers still get 216).
/* kernlab
family:       matmul_tc
target:       sm_90a                  # setmaxnreg
entry:        mma_ws<BLOCK, WN, STAGES, PREG, T>   # PERSIST only sizes the grid
blocks:       256 384
dtypes:       bfloat16 float16
tune:         WN = 2, 4; STAGES = 3, 4; PREG = 24, 40, 64; PERSIST = 0, 1
require:      BLOCK == 128 + 64 * WN; STAGES * (128 * 64 + 64 * 64 * WN) * 2 + 384 <= 232448; WN == 4 || STAGES * (128 * 64 + 64 * 64 * WN) * 2 + 384 <= 115712
shared_bytes: STAGES * (128 * 64 + 64 * 64 * WN) * TSIZE + 384   # + 128 to align, + the mbarriers
grid_dims:    PERSIST ? min(RESIDENT_BLOCKS, ceil_div(N, 64 * WN) * ceil_div(M, 128)) : ceil_div(N, 64 * WN) * ceil_div(M, 128)
summary:      + warp-specialised cp.async producer, mbarrier ring, 128B-swizzled shared memory (step 4b)
points:       mma_ws(WN=4,STAGES=4,PREG=64,PERSIST=1) "+ cp.async producer warpgroup, mbarrier ring, 128B swizzle, 8 mma.sync consumer warps of 64x64, persistent"
order:        4                       # step 4b: listed after mma_warp64 (same order, then by name)
*/
#include <kernlab/wgmma_sm90.cuh>

template <int BLOCK, int WN, int STAGES, int PREG, typename T>
__global__ void __launch_bounds__(BLOCK, WN == 4 ? 1 : 2)
    mma_ws(const T* A, const T* B, float* C, int M, int N, int K) {
  static_assert(BLOCK == 128 + 64 * WN, "a producer warpgroup, then 2 x WN consumer warps");
  // Registers: 9 or more warps per SM put 3 on some SM sub-partition, which caps a thread at
  // 168 (65536 / 384) at launch, too few for 128 accumulators and two fragment sets. setmaxnreg
  // moves the producer warpgroup's share to the consumers.
  constexpr int MINB = WN == 4 ? 1 : 2;
  constexpr int LAUNCH_REGS = 65536 / (BLOCK * MINB) / 8 * 8;
  constexpr int CONSUMER_REGS = (LAUNCH_REGS * BLOCK - 128 * PREG) / (64 * WN) / 8 * 8;
  constexpr int PW = 4;
  constexpr int CW = 2 * WN;                       // consumer warps
  constexpr int BM = 128, BN = 64 * WN, BK = 64;  // BK: one 128-byte row of 16-bit elements
  constexpr int A_BYTES = BM * BK * 2, STAGE = A_BYTES + BK * BN * 2;
  constexpr int GROUP = 16;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  const unsigned raw = smem_addr(smem_raw);
  unsigned char* smem = smem_raw + ((128 - raw % 128) % 128);
  const unsigned base = smem_addr(smem);
  auto full = reinterpret_cast<unsigned long long*>(smem + STAGES * STAGE);
  auto empty = full + STAGES;

  // Tiles: GROUP tile rows at a time, down a column of them, then the next column (L2 reuse).
  // The grid is one block per tile, or (PERSIST) as many as are resident, each taking tiles
  // blockIdx.x, + gridDim.x, ...; the ring's stage and parities run on across its tiles.
  const int tiles_n = (N + BN - 1) / BN, tiles_m = (M + BM - 1) / BM, tiles = tiles_n * tiles_m;
  auto origin = [&](int id, int& bm, int& bn) {
    const int group = id / (GROUP * tiles_n), first = group * GROUP;
    const int rows = min(GROUP, tiles_m - first), in_group = id % (GROUP * tiles_n);
    bm = (first + in_group % rows) * BM;
    bn = in_group / rows * BN;
  };

  const int tid = threadIdx.x, warp = tid / 32;
  // The lane is read where it is used (%laneid), not kept: a value live from here to the
  // consumers' epilogue was the one register ptxas spilled (4 bytes, reloaded at every tile).
  const auto lane_id = [] {
    unsigned l;
    asm volatile("mov.u32 %0, %%laneid;\n" : "=r"(l));
    return static_cast<int>(l);
  };
  const int slices = (K + BK - 1) / BK;
  constexpr int PT = 32 * PW;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], PT);
      mbar_init(&empty[s], CW);
    }
  }
  __syncthreads();

  if (warp < PW) {
    setmaxnreg_dec<PREG>();
    // ---------------- producer: slice t into stage t % STAGES ----------------
    const int p = tid;
    const bool vec = K % 8 == 0 && N % 8 == 0;
    // Thread p copies chunk lc of rows lr, lr + RPP, ...; RPP * 2 is a multiple of 8, so the
    // swizzled chunk of even passes is one constant and of odd passes another.
    constexpr int RPP = PT / 8, A_PASSES = BM / RPP, B_PASSES = BK / RPP;
    const int lc = p % 8, lr = p / 8;
    const unsigned d0 = lr * 128 + ((lc ^ (lr % 8)) << 4);
    const unsigned d1 = (lr + RPP) * 128 + ((lc ^ ((lr + RPP) % 8)) << 4);
    const long long a_step = (long long)RPP * K * 2, b_step = (long long)RPP * N * 2;  // bytes
    int s = 0, phase = 0;  // the ring's stage and the parity of its current pass
#pragma unroll 1
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    int bm, bn;
    origin(tile, bm, bn);
    const bool inner_mn = bm + BM <= M && bn + BN <= N;
    const long long a_off = (long long)(bm + lr) * K + lc * 8;
    const long long b_off = (long long)lr * N + bn + lc * 8;
#pragma unroll 1
    for (int t = 0; t < slices; ++t) {
      const int k0 = t * BK;
      mbar_wait(&empty[s], phase ^ 1);
      const unsigned sa = base + s * STAGE, sb = sa + A_BYTES;
      if (vec && inner_mn && k0 + BK <= K) {
        const char* a = reinterpret_cast<const char*>(A + a_off + k0);
#pragma unroll
        for (int i = 0; i < A_PASSES; ++i, a += a_step)
          cp_async16(sa + (i & 1 ? d1 : d0) + (i & ~1) * RPP * 128, a);
        const char* b = reinterpret_cast<const char*>(B + b_off + (long long)k0 * N);
#pragma unroll
        for (int i = 0; i < B_PASSES; ++i, b += b_step)
#pragma unroll
          for (int j = 0; j < WN; ++j)
            cp_async16(sb + (i & 1 ? d1 : d0) + (i & ~1) * RPP * 128 + j * BK * 128, b + j * 128);
        cp_async_mbar_arrive(&full[s]);
      } else if (vec) {
#pragma unroll 1
        for (int i = 0; i < A_PASSES; ++i) {
          const int gr = bm + lr + RPP * i, gc = k0 + lc * 8;
          const bool ok = gr < M && gc < K;
          cp_async16(sa + (i & 1 ? d1 : d0) + (i & ~1) * RPP * 128,
                     ok ? A + (long long)gr * K + gc : A, ok ? 16 : 0);
        }
#pragma unroll 1
        for (int i = 0; i < B_PASSES; ++i)
#pragma unroll
          for (int j = 0; j < WN; ++j) {
            const int gr = k0 + lr + RPP * i, gc = bn + j * 64 + lc * 8;
            const bool ok = gr < K && gc < N;
            cp_async16(sb + (i & 1 ? d1 : d0) + (i & ~1) * RPP * 128 + j * BK * 128,
                       ok ? B + (long long)gr * N + gc : B, ok ? 16 : 0);
          }
        cp_async_mbar_arrive(&full[s]);
      } else {  // rows not 16-byte aligned: element by element, 8 to a 16-byte store
        const unsigned short* a16 = reinterpret_cast<const unsigned short*>(A);
        const unsigned short* b16 = reinterpret_cast<const unsigned short*>(B);
#pragma unroll 1
        for (int i = 0; i < A_PASSES; ++i) {
          const int gr = bm + lr + RPP * i, gc = k0 + lc * 8;
          unsigned e[8];
#pragma unroll
          for (int u = 0; u < 8; ++u)
            e[u] = gr < M && gc + u < K ? a16[(long long)gr * K + gc + u] : 0u;
          const unsigned w[4] = {e[0] | e[1] << 16, e[2] | e[3] << 16, e[4] | e[5] << 16,
                                 e[6] | e[7] << 16};
          st_shared16(sa + (i & 1 ? d1 : d0) + (i & ~1) * RPP * 128, w);
        }
#pragma unroll 1
        for (int i = 0; i < B_PASSES; ++i)
#pragma unroll 1
          for (int j = 0; j < WN; ++j) {
            const int gr = k0 + lr + RPP * i, gc = bn + j * 64 + lc * 8;
            unsigned e[8];
#pragma unroll
            for (int u = 0; u < 8; ++u)
              e[u] = gr < K && gc + u < N ? b16[(long long)gr * N + gc + u] : 0u;
            const unsigned w[4] = {e[0] | e[1] << 16, e[2] | e[3] << 16, e[4] | e[5] << 16,
                                   e[6] | e[7] << 16};
            st_shared16(sb + (i & 1 ? d1 : d0) + (i & ~1) * RPP * 128 + j * BK * 128, w);
          }
        mbar_arrive(&full[s]);  // release: the stores are visible to the waiting consumers
      }
      if (++s == STAGES) s = 0, phase ^= 1;
    }
    }
  } else {
    // ---------------- consumers: warp (wm, wn) computes a 64 x 64 part ----------------
    setmaxnreg_inc<CONSUMER_REGS>();
    const int wm = (warp - PW) / WN, wn = (warp - PW) % WN;
    const int lane = lane_id();
    const unsigned u = (lane / 16) ^ (lane % 8);
    unsigned aoff[4], boff[4];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const unsigned x = ((2 * q) ^ u) << 4;
      aoff[q] = (wm * 64 + lane % 16) * 128 + x;
      boff[q] = A_BYTES + wn * BK * 128 + (lane % 16) * 128 + x;
    }

    unsigned a[2][4][4], b[2][8][2];
    auto fragments = [&](int set, unsigned sbase, int q) {  // k16 step q of the stage at sbase
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const unsigned addr = sbase + aoff[q] + i * 16 * 128;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(a[set][i][0]), "=r"(a[set][i][1]), "=r"(a[set][i][2]),
                       "=r"(a[set][i][3])
                     : "r"(addr));
      }
#pragma unroll
      for (int jq = 0; jq < 4; ++jq) {
        const unsigned addr = sbase + boff[jq] + q * 16 * 128;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(b[set][2 * jq][0]), "=r"(b[set][2 * jq][1]),
                       "=r"(b[set][2 * jq + 1][0]), "=r"(b[set][2 * jq + 1][1])
                     : "r"(addr));
      }
    };

    const T zero = zero_of<T>();
    int s = 0, phase = 0;
#pragma unroll 1
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    int bm, bn;
    origin(tile, bm, bn);
    float acc[4][8][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

    mbar_wait(&full[s], phase);
    fragments(0, base + s * STAGE, 0);
#pragma unroll 1
    for (int t = 0; t < slices; ++t) {
      const unsigned sbase = base + s * STAGE;
      const int s1 = s + 1 == STAGES ? 0 : s + 1, phase1 = s1 == 0 ? phase ^ 1 : phase;
#pragma unroll
      for (int q = 0; q < BK / 16; ++q) {
        const int set = q % 2;
        if (q + 1 < BK / 16) {
          fragments(set ^ 1, sbase, q + 1);
        } else if (t + 1 < slices) {  // the next slice's first fragments
          mbar_wait(&full[s1], phase1);
          fragments(set ^ 1, base + s1 * STAGE, 0);
        }
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int j = 0; j < 8; ++j) mma16816(acc[i][j], a[set][i], b[set][j], zero);
      }
      // Every fragment of slice t has been read into registers (the MMAs above consumed them).
      if (lane_id() == 0) mbar_arrive(&empty[s]);
      s = s1;
      phase = phase1;
    }

    const bool pairs = N % 2 == 0;
    const int el = lane_id();
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const int row = bm + wm * 64 + i * 16 + el / 4;
        const int col = bn + wn * 64 + j * 8 + el % 4 * 2;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = row + h * 8;
          if (r >= M) continue;
          float* dst = C + (long long)r * N + col;
          if (pairs && col + 1 < N) {
            *reinterpret_cast<float2*>(dst) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
          } else {
            if (col < N) dst[0] = acc[i][j][2 * h];
            if (col + 1 < N) dst[1] = acc[i][j][2 * h + 1];
          }
        }
      }
    }
  }
}
