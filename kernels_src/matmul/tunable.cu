// Steps 3 to 7 and past them as one tunable file: a warp-tiled SIMT SGEMM whose block tile,
// warp tile, thread tile, pipeline (depth, and registers or cp.async) and global load width are
// template parameters, instead of a ladder of copies that each fix them. warptile.cu is one of
// its points (BM=128, BN=128, BK=16, WM=64, WN=32, TM=8, STAGES=2, ASYNC=0, VEC=4 at 256
// threads, with its 2 blocks per SM); the rest of the space is what that file's "Known limits"
// left untried: thread tiles larger than 8x8, cp.async and more than two stages, other block and
// warp shapes.
//
// The layout, from the outside in:
//  - Block tile BM x BN of C per block, over K in k-tiles of BK. Grid: ceil(N / BN) x
//    ceil(M / BM) blocks, blockIdx.x along N.
//  - Warp tile WM x WN: the block's (BM / WM) x (BN / WN) warps, so BLOCK = that many x 32 (a
//    requirement below; the block size is the ordinary BLOCK tunable, 128 to 512).
//  - Thread tile TM x TN, TN = WM * WN / (32 TM) derived (the 32 lanes cover the warp tile
//    once). The lanes sit LM x LN = (WM / TM) x (WN / TN) in the warp tile, and a lane's TM rows
//    and TN columns are not contiguous: they are TM/4 x TN/4 sub-tiles of 4 x 4 (the "warp
//    sub-iterations" of the SGEMM write-ups, CUTLASS's SIMT lane layout), lane (lr, lc)'s
//    sub-tile (p, q) at rows p*4*LM + lr*4 .. +3 and columns q*4*LN + lc*4 .. +3 of the warp
//    tile. At each k a lane reads TM/4 float4s of A and TN/4 of B from shared memory; in each
//    such read the warp's lanes read LM (resp. LN) neighbouring float4s, broadcast to the lanes
//    that share one: at most 8 distinct float4s within 128 bytes, no bank conflict, for any LM,
//    LN. That is why TM and TN are multiples of 4.
//  - Shared memory: A's k-tile transposed, As[k][m] (row stride BM + 4: a transposing store
//    then puts the rows of one warp's store 4 banks apart, conflict-free at BK = 8 and 2-way at
//    BK = 16, and keeps each row 16-byte aligned for the float4 reads); B's k-tile as it is,
//    Bs[k][n].
//
// The tunables (the product of their values is capped at 4096 points by kernlab, which is why
// TN is derived and the lists are short):
//  - BM, BN (64, 128, 256), BK (8, 16): the block tile. Bigger tiles reuse each global load for
//    more FMAs but make fewer blocks (at 4096^3, 128 x 128 makes 1024 blocks, 3.9 waves of 2 per
//    SM on 132 SMs; 1024^3 makes 64, fewer than the SMs). BK = 16 halves the barriers and the
//    per-k-tile overhead against BK = 8 (warptile's 1.02x) but doubles a stage's shared memory.
//  - WM, WN (32, 64) and TM (8, 16): the warp and thread tiles. A thread does TM * TN FMAs per k
//    for (TM + TN) / 4 shared loads: 8 x 8 (warptile) is 64 FMAs for 4 loads, 8 x 16 or 16 x 8
//    is 128 for 6. cuBLAS's own FP32 kernels on sm_80/sm_90 are named "128x128x8 ... stage3
//    ... warpsize 2x2": 4 warps of 64 x 64 over a 128 x 128 tile, 128 accumulators a thread, 3
//    stages. 8 x 4 and 16 x 4 (TN derived 4) serve the small tiles.
//  - STAGES (1..4) and ASYNC (0, 1), the pipeline:
//      ASYNC = 0, STAGES = 1: plain (load a k-tile through registers, barrier, compute,
//        barrier: steps 3-5);
//      ASYNC = 0, STAGES = 2: double buffering through registers (the next k-tile's global loads
//        are issued before the compute on this one and stored to the other stage after it; one
//        barrier per k-tile: steps 6-7);
//      ASYNC = 1, STAGES = 2..4: cp.async (LDGSTS) straight into a ring of STAGES stages, no
//        staging registers and no shared stores, STAGES - 1 k-tiles in flight while one is
//        computed on; one barrier per k-tile.
//    Shared memory per block is STAGES * BK * (BM + 4 + BN) * 4 bytes, within the 48 KiB of
//    static shared memory (kernlab sets no larger dynamic limit): 128 x 128 x 8 fits 4 stages,
//    128 x 128 x 16 two.
//  - VEC (1, 2, 4): floats per global load, 4/8/16-byte accesses. A wide access is taken only
//    where it is aligned and wholly inside the matrix (A: K % VEC == 0; B: N % VEC == 0; the
//    pointer VEC*4-byte aligned; the whole vector before the row's end); anywhere else the same
//    VEC elements go one at a time. With ASYNC, VEC applies to B; A is copied one float per
//    cp.async because its tile is transposed on the way (a 16-byte copy cannot scatter): 8
//    copies per thread per k-tile at 128 x 128 x 8 with 128 threads, against 1024 FMAs.
//  - REGS and MINB (derived): __launch_bounds__(BLOCK, MINB), MINB = 65536 / (BLOCK * REGS): a
//    register budget per thread, REGS, chosen by class from ptxas' reports of the whole space
//    (kernlab --resources; none of the points spilled before the staged C epilogue below, which
//    costs seven cp.async points with TM = 16, BK = 8 and 3 stages at the 128-register budget
//    (six of 512 threads, one of 256) 12-20 bytes of spill):
//      128 accumulators: 255 (2 blocks per SM at 128 threads, 1 at 256);
//      32 accumulators: 128;
//      64 accumulators: 168 at 128 threads (3 blocks per SM; at 128 most of them spilled; 255
//        for cp.async 16 x 4 at BK = 16, VEC = 2, which spilled 8 bytes at 168), 128
//        at 512 (the most there is), and at 256 threads 128 (2 blocks per SM, warptile's cap:
//        0.94x as fast without it) where ptxas fits that without spilling, else 255. It fits for
//        the plain pipeline, for cp.async at TM = 8 or VEC = 4, and for register double
//        buffering at VEC = 4, BK = 16 with TM = 16 or at most 16 staging registers (warptile's
//        point); it spilled (8 to 120 bytes) for the others.
//    A first version derived the cap from an estimate of the registers; ptxas' needs at the
//    128-register boundary turned out too irregular for that (VEC = 4 spilling where VEC = 1
//    fitted, for one), hence the table.
//
// Requirements, in the order of the header: the block's threads are its warps; the tiles divide
// (WM | BM, WN | BN; the lanes tile the warp: TN = WM WN / (32 TM) a multiple of 4, LM = WM / TM
// and LN = WN / TN whole); TM * TN <= 128 accumulators; an estimate of the registers
// (accumulators, fragments, the staging registers of ASYNC = 0, 24 for addresses) within the
// 65536 of an SM and at most 224; shared memory <= 48 KiB; the loads of a k-tile divide evenly
// among the threads (every element of a stage is written by exactly one thread, every k-tile);
// ASYNC with 2-4 stages, registers with 1-2; the plain pipeline (a ladder step, never the
// fastest) at VEC = 4 only; and two exclusions where ptxas spilled at the only budget there is:
// one-float register-path loads at 512 threads (128 registers), and at 128 accumulators with
// BK = 16 (255 registers). Blocks of 64 threads are left out: kernlab's `--block all` is 128 to
// 1024, and two-warp blocks do not compete at the sizes that matter here.
//
// Boundaries, walked through for the edge tiles (any M, N, K >= 1):
//  - A k-tile may run past K (the last one when K % BK != 0) and a block tile past M or N (the
//    last row/column of blocks). Every element of a stage is written every k-tile: in range it
//    is the matrix element, out of range 0 (the checked loads' "? A[..] : 0.0f"; cp.async's
//    src-size 0, which reads nothing and zero-fills the 4 bytes). A zero in As past K meets a
//    zero in Bs past K, and a row past M or a column past N only feeds accumulators whose C
//    element is never stored, so each stored element is the sum of exactly its in-range
//    products; the validation's entries (k/4) make every partial sum exact in any order.
//  - Which loads are checked is decided per k-tile, the same for the whole block: unchecked
//    (WIDE or NARROW) only if the block tile is inside M and N (m0 + BM <= M, n0 + BN <= N) and
//    the k-tile inside K (k0 + BK <= K), where every piece is in range by construction; WIDE
//    also needs the rows aligned for VEC (a_vec, b_vec: the pointer and K resp. N). Anything
//    else is CHECKED: row < M - m0, column < N - n0, k < K - k0 for each piece (each element of
//    a VEC-wide piece on its own unless the whole piece is inside and aligned). A global address
//    is formed only for a piece that passed: an out-of-range cp.async reads from the tile's
//    corner (A[m0 K + k0], B[k0 N + n0], always valid: m0 < M, n0 < N, k0 < K) with src-size 0.
//  - Example, M x N x K = 4095 x 4097 x 1023 with BM = BN = 128, BK = 8: grid 33 x 32 blocks.
//    The last column of blocks (n0 = 4096) keeps one valid column, n = 4096; its other B loads
//    are zero. The last row of blocks (m0 = 3968) has 127 valid rows. K = 1023 makes 128
//    k-tiles, the last (k0 = 1016) with 7 valid k: A's column 1023 and B's row 1023 come in as
//    0. K and N odd: no row of A or B is 8-byte aligned, so a_vec and b_vec are false, the
//    inner tiles take NARROW (one float at a time, unchecked), the edge tiles CHECKED, and C is
//    stored element by element.
//  - 1 x 1 x 1: one block, one k-tile, CHECKED, whose only valid element is (0, 0); every other
//    piece is zero, and only the thread owning row 0, column 0 stores (m < M, n + f < N).
//  - C is stored as a float4 only if C is 16-byte aligned and N % 4 == 0 (then n, a multiple of
//    4, starts an aligned vector) and n + 3 < N. Otherwise it goes through shared memory (the
//    epilogue's comment) and each warp stores whole runs of a row, column l + 32 j by lane l,
//    while n < N; where the warps' staging rows do not fit in the k-tile memory, element by
//    element while n + f < N. A row m >= M stores nothing.
//  - The cp.async ring: before the loop, k-tiles 0 .. STAGES-2 are issued, one commit group
//    each (an empty group where K has fewer k-tiles). At iteration kt, STAGES - 1 + kt groups
//    have been committed; cp.async.wait_group STAGES-2 leaves at most STAGES - 2 of them
//    pending, so groups 0 .. kt (k-tiles 0 .. kt) are complete for this thread, and the barrier
//    after it makes every thread's copies visible. The same barrier proves that every thread
//    has finished computing k-tile kt - 1, whose stage ((kt - 1) mod STAGES = (kt + STAGES - 1)
//    mod STAGES) is then refilled with k-tile kt + STAGES - 1. A group is committed every
//    iteration, empty or not, so the count holds to the end; no copy is outstanding at exit
//    (the last real group is waited for by the last iteration).
//  - Registers, two stages (warptile's scheme): the stores into stage s^1 at iteration j come
//    after the barrier that ended iteration j - 1, the last reads of s^1; the barrier after them
//    precedes the first read of s^1 at iteration j + 1. `more` is the same in every thread, so
//    the barrier is uniform.
//
// Measured (NVIDIA H200, 2026-11-28, every point, `kernlab tune --strategy exhaustive`, cuBLAS
// in the same run): at 4096 x 4096 x 1024 the best is 128 x 128 x 16, WM = 64, WN = 32, TM = 8,
// cp.async, 2 stages, VEC = 2 at 256 threads, 727.4 us against cuBLAS's 685.1 (0.94x). At
// 4095 x 4097 x 1023 the element-wise C stores of the first version cost 12-20% against the
// aligned shape (N odd alone: 734 -> 886 us for the aligned best; K odd alone 3.5%, M odd 1.6%;
// cuBLAS loses 1% to N odd): a warp's stores were 4 floats apart over 8 rows, each
// instruction touching 8 row segments for 32 floats. The staged epilogue took that shape's best
// from 817.6 us (0.90x cuBLAS) to 798.4 (0.92x: 256 x 64 x 16, WM = 32, WN = 64, TM = 8,
// cp.async, 2 stages, VEC = 2, 256 threads), and the docs' bayes tune of 100 points found the
// same point (797.7 us, 0.92x). At the aligned shape, where the staging is not taken, its code
// still moves single points by 0.87x-1.13x (ptxas schedules the main loop differently); the
// median point moved 0.1% and the best went from 734.7 to 727.4 us. At the awkward shape the
// staging is not a win for every point either (0.88x-1.11x; a point with 16 lanes along N
// already stored 64 consecutive bytes a row), but the space's best is 2.7% faster with it.
/* kernlab
family:     matmul
entry:      tunable<BLOCK, BM, BN, BK, WM, WN, TM, TN, STAGES, ASYNC, VEC, MINB>
blocks:     128 256 512
tune:       BM = 64, 128, 256; BN = 64, 128, 256; BK = 8, 16; WM = 32, 64; WN = 32, 64; TM = 8, 16; STAGES = 1..4; ASYNC = 0, 1; VEC = 1, 2, 4
params:     TN = WM * WN / (32 * TM); REGS = TM * TN >= 128 ? 255 : TM * TN <= 32 ? 128 : BLOCK <= 128 ? (ASYNC && TM == 16 && BK == 16 && VEC == 2 ? 255 : 168) : BLOCK >= 512 ? 128 : (ASYNC ? TM == 8 || VEC == 4 : STAGES == 1 || VEC == 4 && BK == 16 && (TM == 16 || (BM + BN) * BK / BLOCK <= 16)) ? 128 : 255; MINB = max(1, min(4, 65536 / (BLOCK * REGS)))
require:    BLOCK == (BM / WM) * (BN / WN) * 32; BM % WM == 0 && BN % WN == 0; WM * WN % (32 * TM) == 0 && WM % TM == 0; WM * WN / (32 * TM) % 4 == 0 && WN % (WM * WN / (32 * TM)) == 0; WM * WN / 32 <= 128; WM * WN / 32 + TM + WM * WN / (32 * TM) + (ASYNC ? 0 : (BM * BK + BK * BN) / BLOCK) + 24 <= min(224, 65536 / BLOCK); STAGES * BK * (BM + 4 + BN) * 4 <= 49152; BM * BK % (BLOCK * (ASYNC ? 1 : VEC)) == 0 && BK * BN % (BLOCK * VEC) == 0; ASYNC ? STAGES >= 2 : STAGES <= 2; STAGES > 1 || VEC == 4; ASYNC || VEC > 1 || BLOCK < 512; ASYNC || VEC > 1 || BK == 8 || WM * WN / 32 < 128
block_dims: BLOCK, 1
grid_dims:  ceil_div(N, BN), ceil_div(M, BM)
summary:    warp-tiled SGEMM: tunable block/warp/thread tiles, registers or cp.async with 1-4 shared stages, 1/2/4-float loads
order:      8
*/

namespace tmm {

// How a k-tile is loaded: every piece in range and every row aligned for VEC-wide accesses
// (WIDE), every piece in range (NARROW: one float at a time, no checks), or pieces may be out of
// range (CHECKED: each checked, wide only where aligned and wholly inside).
enum mode_kind { WIDE, NARROW, CHECKED };

// The shared-memory address of a generic pointer into shared memory, for cp.async's operand.
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// cp.async of BYTES (4, 8 or 16) from global to shared memory. Only the first src_bytes are
// read; the rest of the BYTES are zero-filled (src_bytes = 0: nothing is read, and the callers
// still pass a valid address). 16-byte copies bypass L1 (.cg); 4 and 8 exist only as .ca.
template <int BYTES>
__device__ __forceinline__ void cp_async(void* dst, const float* src, int src_bytes) {
  const unsigned d = smem_addr(dst);
  const unsigned long long s = __cvta_generic_to_global(src);
  if constexpr (BYTES == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(s), "r"(src_bytes)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(d), "l"(s), "n"(BYTES),
                 "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
}

// VEC floats p[0 .. VEC-1] into v, as one 4*VEC-byte load (p must be that aligned).
template <int VEC>
__device__ __forceinline__ void load_wide(float (&v)[VEC], const float* p) {
  if constexpr (VEC == 4) {
    const float4 x = *reinterpret_cast<const float4*>(p);
    v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
  } else if constexpr (VEC == 2) {
    const float2 x = *reinterpret_cast<const float2*>(p);
    v[0] = x.x, v[1] = x.y;
  } else {
    v[0] = *p;
  }
}

}  // namespace tmm

template <int BLOCK, int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int ASYNC,
          int VEC, int MINB>
__global__ void __launch_bounds__(BLOCK, MINB)
    tunable(const float* A, const float* B, float* C, int M, int N, int K) {
  constexpr int PAD = 4, AS = BM + PAD;      // row stride of the transposed A tile
  constexpr int LM = WM / TM, LN = WN / TN;  // the warp's lanes along M and N
  constexpr int WARPS_N = BN / WN;
  static_assert(LM * LN == 32 && TM % 4 == 0 && TN % 4 == 0, "lanes must tile the warp tile");
  static_assert((BM / WM) * WARPS_N * 32 == BLOCK, "one warp per warp tile");
  static_assert(STAGES * BK * (AS + BN) * 4 <= 48 * 1024, "static shared memory");
  // The pieces of a k-tile each thread loads. A: vectors of AV consecutive k (AV = VEC through
  // registers; 1 with cp.async, which transposes one float at a time), AV_R = BK / AV per tile
  // row; thread t's are tile rows t / AV_R + q * (BLOCK / AV_R), q < NA, all at column
  // t % AV_R * AV (BLOCK is a multiple of AV_R <= 16). B: vectors of VEC consecutive n, B_VR =
  // BN / VEC per tile row; thread t's q-th is vector i = t + q * BLOCK: row i / B_VR, column
  // i % B_VR * VEC. Every element of both tiles is one thread's, once (the loads divide evenly).
  constexpr int AV = ASYNC ? 1 : VEC, AV_R = BK / AV, NA = BM * BK / AV / BLOCK;
  constexpr int B_VR = BN / VEC, NB = BK * BN / VEC / BLOCK;
  // B's q-th piece, i = t + q * BLOCK, spelled so that the offsets are a row walk plus constants:
  // BLOCK and B_VR are powers of two, so either a round of the block covers B_KSTEP whole tile
  // rows (B_QPR = 1) or a tile row takes B_QPR rounds (B_KSTEP = 1).
  constexpr int B_QPR = BLOCK >= B_VR ? 1 : B_VR / BLOCK;
  constexpr int B_KSTEP = BLOCK >= B_VR ? BLOCK / B_VR : 1;
  static_assert(BLOCK % AV_R == 0 && NA * AV * BLOCK == BM * BK, "A loads divide evenly");
  static_assert(NB * VEC * BLOCK == BK * BN, "B loads divide evenly");

  // One array for both tiles, so that the C epilogue below can reuse all of it.
  constexpr int SMEM = STAGES * BK * (AS + BN);
  __shared__ __align__(16) float smem[SMEM];
  auto& As = *reinterpret_cast<float(*)[STAGES][BK][AS]>(smem);
  auto& Bs = *reinterpret_cast<float(*)[STAGES][BK][BN]>(smem + STAGES * BK * AS);

  const int t = threadIdx.x, warp = t / 32, lane = t % 32;
  const int wm0 = warp / WARPS_N * WM, wn0 = warp % WARPS_N * WN;  // the warp tile in the block
  const int lr = lane / LN, lc = lane % LN;                        // the lane in the warp tile
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;            // m0 < M, n0 < N
  const unsigned long long pa = reinterpret_cast<unsigned long long>(A);
  const unsigned long long pb = reinterpret_cast<unsigned long long>(B);
  const unsigned long long pc = reinterpret_cast<unsigned long long>(C);
  const bool a_vec = pa % (4 * VEC) == 0 && K % VEC == 0;  // every A vector is aligned
  const bool b_vec = pb % (4 * VEC) == 0 && N % VEC == 0;
  const bool c_vec = pc % 16 == 0 && N % 4 == 0;
  // A block tile wholly inside M and N needs checks only in a k-tile that runs past K.
  const bool inside_mn = m0 + BM <= M && n0 + BN <= N;

  const int ar = t / AV_R, ak = t % AV_R * AV;  // thread's first A piece: tile row, column
  const int br = t / B_VR, bn = t % B_VR * VEC;  // its first B piece (br = 0 if B_QPR > 1)
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  // The FMAs on one stage: per k, the lane's TM/4 float4s of A and TN/4 of B, an outer product.
  auto compute = [&](int s) {
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int p = 0; p < TM / 4; ++p) {
        const float4 x = *reinterpret_cast<const float4*>(&As[s][k][wm0 + p * 4 * LM + lr * 4]);
        a[p * 4 + 0] = x.x, a[p * 4 + 1] = x.y, a[p * 4 + 2] = x.z, a[p * 4 + 3] = x.w;
      }
#pragma unroll
      for (int q = 0; q < TN / 4; ++q) {
        const float4 x = *reinterpret_cast<const float4*>(&Bs[s][k][wn0 + q * 4 * LN + lc * 4]);
        b[q * 4 + 0] = x.x, b[q * 4 + 1] = x.y, b[q * 4 + 2] = x.z, b[q * 4 + 3] = x.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
    }
  };

  // Offsets below are from the k-tile's corner in each matrix, A + (m0 K + k0) and
  // B + (k0 N + n0), both valid elements (m0 < M, n0 < N, k0 < K); mr = M - m0 rows, nr = N - n0
  // columns and kr = K - k0 k's are left from there. WIDE and NARROW (no checks) only when the
  // block tile is inside M and N and the k-tile inside K: then every piece is in range.
  if constexpr (!ASYNC) {
    // Through registers: global loads into ra/rb, stored into a stage after the compute.
    float ra[NA][AV], rb[NB][VEC];
    auto load = [&](int k0, const int mode) {  // mode: a constant at each call (inlined)
      const float* At = A + (m0 * K + k0);
      const float* Bt = B + (k0 * N + n0);
      if (mode != tmm::CHECKED) {
        // Every piece in range: walk pointers; the wide loads wherever the rows are aligned.
        const float* pa = At + (ar * K + ak);
#pragma unroll
        for (int q = 0; q < NA; ++q, pa += (BLOCK / AV_R) * K) {
          if (mode == tmm::WIDE) {
            tmm::load_wide<AV>(ra[q], pa);
          } else {
#pragma unroll
            for (int j = 0; j < AV; ++j) ra[q][j] = pa[j];
          }
        }
        const float* pb = Bt + (br * N + bn);
#pragma unroll
        for (int q = 0; q < NB; ++q) {
          if (q > 0 && q % B_QPR == 0) pb += B_KSTEP * N;
          const float* p = pb + q % B_QPR * BLOCK * VEC;
          if (mode == tmm::WIDE) {
            tmm::load_wide<VEC>(rb[q], p);
          } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) rb[q][j] = p[j];
          }
        }
      } else {
        const int mr = M - m0, nr = N - n0, kr = K - k0;
#pragma unroll
        for (int q = 0; q < NA; ++q) {
          const int r = ar + q * (BLOCK / AV_R);
          if (a_vec && r < mr && ak + AV - 1 < kr) {
            tmm::load_wide<AV>(ra[q], At + (r * K + ak));
          } else {
#pragma unroll
            for (int j = 0; j < AV; ++j)
              ra[q][j] = r < mr && ak + j < kr ? At[r * K + ak + j] : 0.0f;
          }
        }
#pragma unroll
        for (int q = 0; q < NB; ++q) {
          const int kb = br + q / B_QPR * B_KSTEP, nn = bn + q % B_QPR * BLOCK * VEC;
          if (b_vec && kb < kr && nn + VEC - 1 < nr) {
            tmm::load_wide<VEC>(rb[q], Bt + (kb * N + nn));
          } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j)
              rb[q][j] = kb < kr && nn + j < nr ? Bt[kb * N + nn + j] : 0.0f;
          }
        }
      }
    };
    auto load_tile = [&](int k0) {
      if (!inside_mn || k0 + BK > K)
        load(k0, tmm::CHECKED);
      else if (VEC > 1 && a_vec && b_vec)
        load(k0, tmm::WIDE);
      else
        load(k0, tmm::NARROW);
    };
    auto store = [&](int s) {
#pragma unroll
      for (int q = 0; q < NA; ++q)
#pragma unroll
        for (int j = 0; j < AV; ++j) As[s][ak + j][ar + q * (BLOCK / AV_R)] = ra[q][j];
#pragma unroll
      for (int q = 0; q < NB; ++q) {
        const int kb = br + q / B_QPR * B_KSTEP, nn = bn + q % B_QPR * BLOCK * VEC;
        if constexpr (VEC == 4)
          *reinterpret_cast<float4*>(&Bs[s][kb][nn]) =
              make_float4(rb[q][0], rb[q][1], rb[q][2], rb[q][3]);
        else if constexpr (VEC == 2)
          *reinterpret_cast<float2*>(&Bs[s][kb][nn]) = make_float2(rb[q][0], rb[q][1]);
        else
          Bs[s][kb][nn] = rb[q][0];
      }
    };
    if constexpr (STAGES == 1) {
      for (int k0 = 0; k0 < K; k0 += BK) {
        load_tile(k0);
        store(0);
        __syncthreads();
        compute(0);
        __syncthreads();
      }
    } else {
      load_tile(0);
      store(0);
      __syncthreads();
      int s = 0;
      for (int k0 = 0; k0 < K; k0 += BK) {
        const bool more = k0 + BK < K;  // the same in every thread: the barrier is uniform
        if (more) load_tile(k0 + BK);
        compute(s);
        if (more) {
          store(s ^ 1);
          __syncthreads();
          s ^= 1;
        }
      }
    }
  } else {
    // cp.async into a ring of STAGES stages. A one float per copy, transposed on the way; a
    // warp's 32 copies are 32 / BK tile rows of BK consecutive floats. A checked copy out of
    // range reads nothing (src-size 0: four zero bytes land) from the tile's corner, a valid
    // address.
    auto issue = [&](int s, int k0, const int mode) {  // mode: a constant at each call
      const float* At = A + (m0 * K + k0);
      const float* Bt = B + (k0 * N + n0);
      if (mode != tmm::CHECKED) {
        // Every piece in range: walk pointers (one 64-bit multiply-add per piece).
        const float* pa = At + (ar * K + ak);
#pragma unroll
        for (int q = 0; q < NA; ++q, pa += (BLOCK / BK) * K)
          tmm::cp_async<4>(&As[s][ak][ar + q * (BLOCK / BK)], pa, 4);
        const float* pb = Bt + (br * N + bn);
#pragma unroll
        for (int q = 0; q < NB; ++q) {
          if (q > 0 && q % B_QPR == 0) pb += B_KSTEP * N;
          const int kb = br + q / B_QPR * B_KSTEP, nn = bn + q % B_QPR * BLOCK * VEC;
          const float* p = pb + q % B_QPR * BLOCK * VEC;
          if (mode == tmm::WIDE) {
            tmm::cp_async<4 * VEC>(&Bs[s][kb][nn], p, 4 * VEC);
          } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) tmm::cp_async<4>(&Bs[s][kb][nn + j], p + j, 4);
          }
        }
      } else {
        const int mr = M - m0, nr = N - n0, kr = K - k0;
#pragma unroll
        for (int q = 0; q < NA; ++q) {
          const int r = ar + q * (BLOCK / BK), off = r * K + ak;
          const bool ok = r < mr && ak < kr;
          tmm::cp_async<4>(&As[s][ak][r], At + (ok ? off : 0), ok ? 4 : 0);
        }
#pragma unroll
        for (int q = 0; q < NB; ++q) {
          const int kb = br + q / B_QPR * B_KSTEP, nn = bn + q % B_QPR * BLOCK * VEC;
          const int off = kb * N + nn;
          if (b_vec && kb < kr && nn + VEC - 1 < nr) {
            tmm::cp_async<4 * VEC>(&Bs[s][kb][nn], Bt + off, 4 * VEC);
          } else {
#pragma unroll
            for (int j = 0; j < VEC; ++j) {
              const bool ok = kb < kr && nn + j < nr;
              tmm::cp_async<4>(&Bs[s][kb][nn + j], Bt + (ok ? off + j : 0), ok ? 4 : 0);
            }
          }
        }
      }
    };
    auto issue_tile = [&](int s, int k0) {
      if (!inside_mn || k0 + BK > K)
        issue(s, k0, tmm::CHECKED);
      else if (VEC > 1 && b_vec)  // A goes one float at a time whatever its alignment
        issue(s, k0, tmm::WIDE);
      else
        issue(s, k0, tmm::NARROW);
    };
    const int KT = (K + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
      if (s < KT) issue_tile(s, s * BK);
      tmm::cp_async_commit();
    }
    int rs = 0, ws = STAGES - 1;  // the stage computed on, the stage refilled
    for (int kt = 0; kt < KT; ++kt) {
      tmm::cp_async_wait<STAGES - 2>();  // this thread's copies of k-tile kt have landed
      __syncthreads();  // everyone's have; everyone is done with k-tile kt - 1 (stage ws)
      if (kt + STAGES - 1 < KT) issue_tile(ws, (kt + STAGES - 1) * BK);
      tmm::cp_async_commit();
      compute(rs);
      rs = rs == STAGES - 1 ? 0 : rs + 1;
      ws = ws == STAGES - 1 ? 0 : ws + 1;
    }
  }

  // C: the lane's sub-tile (p, q) element (e, f) is row wm0 + p*4*LM + lr*4 + e, column
  // wn0 + q*4*LN + lc*4 + f of the block tile; acc[p*4 + e][q*4 + f].
  // Rows of C that are not float4-aligned (N % 4 != 0): through shared memory, one accumulator
  // row i at a time. The warp's lanes put their TN values of row i (LM rows of the warp tile,
  // lr, times WN columns) into the warp's SW-float rows of the tile memory, then store those LM
  // rows with lane l writing columns l, l + 32, ...: each store instruction writes 32
  // consecutive floats of one row, where the element-wise stores below put a warp's 32 stores
  // 4 floats apart over LM rows. Taken only where the warps' rows fit in the k-tile memory.
  constexpr int SW = WN + 4, C_STAGE = (BLOCK / 32) * LM * SW;
  if constexpr (C_STAGE <= SMEM) {
    if (!c_vec) {
      __syncthreads();  // every warp is done computing on the last stage
      float* st = smem + warp * LM * SW;
#pragma unroll
      for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int q = 0; q < TN / 4; ++q)
          *reinterpret_cast<float4*>(&st[lr * SW + q * 4 * LN + lc * 4]) =
              make_float4(acc[i][q * 4], acc[i][q * 4 + 1], acc[i][q * 4 + 2], acc[i][q * 4 + 3]);
        __syncwarp();
#pragma unroll
        for (int r = 0; r < LM; ++r) {
          const int m = m0 + wm0 + i / 4 * 4 * LM + r * 4 + i % 4;
#pragma unroll
          for (int c = lane; c < WN; c += 32) {
            const int n = n0 + wn0 + c;
            if (m < M && n < N) C[m * N + n] = st[r * SW + c];
          }
        }
        __syncwarp();  // the row's reads are done before the next row's writes
      }
      return;
    }
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int m = m0 + wm0 + i / 4 * 4 * LM + lr * 4 + i % 4;
    if (m >= M) continue;
#pragma unroll
    for (int q = 0; q < TN / 4; ++q) {
      const int n = n0 + wn0 + q * 4 * LN + lc * 4;
      const float* v = &acc[i][q * 4];
      if (c_vec && n + 3 < N) {
        *reinterpret_cast<float4*>(&C[m * N + n]) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int f = 0; f < 4; ++f)
          if (n + f < N) C[m * N + n + f] = v[f];
      }
    }
  }
}
