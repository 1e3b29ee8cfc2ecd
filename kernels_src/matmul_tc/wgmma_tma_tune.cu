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
