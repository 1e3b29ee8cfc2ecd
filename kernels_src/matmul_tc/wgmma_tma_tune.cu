// Step 7 of the tensor-core ladder: step 6's persistent kernel with the producer's cp.async
// replaced by the tensor memory accelerator (TMA). Step 6's producer is a whole warpgroup of
// 128 threads issuing one 16-byte cp.async per instruction (3072 a slice of 128 x 64 + 64 x 256),
// each with its own address and, at edge tiles, its own bound check. Here one elected thread
// arms the stage's `full` mbarrier with the stage's bytes (mbarrier.arrive.expect_tx) and
// issues 1 + BN / 64 copies (cp.async.bulk.tensor.2d): A's BM x 64 box and B's 64 x 64 boxes,
// one per 128-byte-swizzled panel. The host's tensor maps (`tensor_maps:` below) know the
// shapes and strides; a box past M, N or K arrives with zeros, so edge tiles need no masks in the
// loads (the epilogue still masks C) and the mbarrier still counts the whole box. Step 6's
// shared-memory layout is TMA's SWIZZLE_128B layout already, so the consumers are unchanged
// except that they no longer fence.proxy.async (the TMA writes through the async proxy, as
// wgmma reads). The producer warpgroup drops to 40 registers, the consumers may take 232.
// The GEMM (scheduler, producer, consumers, epilogue) is <kernlab/wgmma_tma_gemm_sm90.cuh>'s
// wgmma_tma_gemm, shared with step 8; this file is its __global__ wrapper.
// No unaligned path: the TMA copies rows that are 16-byte aligned, so at shapes where K or N is
// not a multiple of 8 the host cannot encode the maps and the row is skipped with that reason
// (step 8 pads such matrices).
// Tunables as step 6's: PINGPONG (cooperative 0 / ping-pong 1), EPI, BN, STAGES.
// H100 80GB HBM3 (results branch: 2026-11-27-h100-tc-tma/), bfloat16, the named point (cooperative,
// EPI = 1, BN = 256, 4 stages: the fastest of the 18 points at 4096^3 and at 8192^3), one
// process a variant, twice: 4096^3 at 795.7 and 793.0 TFLOP/s, 1.03x step 6 (769.0, 767.8) and
// 0.98x cuBLAS (808.9, 808.2), whose SM clock stayed at 1980 MHz where step 7's dipped to
// 1875-1890 (fastest samples: 828.6 and 823.6 against cuBLAS's 821.4 and 817.8); 8192^3 at 794.9
// and 794.3, 1.04x-1.05x step 6 and 1.03x-1.04x cuBLAS (768.1, 772.4), every kernel capped at
// 1650-1785 MHz (fastest samples, at full clock: 889.2 and 880.0 against cuBLAS's 871.7 and
// 872.3 and step 6's 853.1 and 849.8). In tables of one call: 0.99x-1.00x cuBLAS at 4096^3,
// 0.96x-1.04x at 8192^3 (the clock decides, as step 6 found); float16 at 4096^3 821.7, 1.01x.
// Nsight Compute at 4096^3: 174.0 us and 84.7% SM throughput (step 6: 178.6 us, 82.9%). Where it
// loses: K = 1024 (4096x4104x1024: 394.8, 1.16x step 6 but 0.70x cuBLAS's 565.9: 544 tiles take
// 5 rounds of 132, and the cooperative schedule overlaps no epilogue). Ping-pong, now cheap to
// feed, still lost at 4096^3 (780.8 at BN = 256 and 5 stages; <= 657.6 at BN = 128).
/* kernlab
family:       matmul_tc
target:       sm_90a
entry:        wgmma_tma<PINGPONG, EPI, BN, STAGES, T>
blocks:       384                     # 1 producer warpgroup (one thread issues), 2 consumers
dtypes:       bfloat16 float16
tune:         PINGPONG = 0, 1; EPI = 0, 1; BN = 128, 256; STAGES = 4, 5, 6
params:       BM = PINGPONG ? 16384 / BN : 128
require:      STAGES * ((PINGPONG ? 16384 / BN : 128) * 64 + 64 * BN) * 2 + 1024 + 256 + EPI * 20480 <= 232448
shared_bytes: STAGES * (BM * 64 + 64 * BN) * TSIZE + 1024 + 256 + EPI * 20480
grid_dims:    min(SM_COUNT, ceil_div(N, BN) * ceil_div(M, BM))
tensor_maps:  A[M][K] box [BM][64] swizzle 128; B[K][N] box [64][64] swizzle 128
summary:      + TMA: one thread loads a stage with 1 + BN / 64 tensor copies on an mbarrier
points:       wgmma_tma(PINGPONG=0,EPI=1,BN=256,STAGES=4) "+ TMA producer: one thread per stage issues 1 + BN/64 tensor copies that complete on the stage's mbarrier"
order:        7
*/
#include <kernlab/wgmma_tma_gemm_sm90.cuh>

template <int PINGPONG, int EPI, int BN, int STAGES, typename T>
__global__ void __launch_bounds__(384, 1)  // 1 block per SM: 168 registers at launch
    wgmma_tma(const T* A, const T* B, float* C, int M, int N, int K,
              const __grid_constant__ kl_tensor_map map_a,
              const __grid_constant__ kl_tensor_map map_b) {
  extern __shared__ unsigned char smem_raw[];
  wgmma_tma_gemm<PINGPONG, EPI, BN, STAGES, T>(map_a, map_b, C, M, N, K, smem_raw);
}
