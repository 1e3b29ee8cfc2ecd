// Step 0, the starting point: one thread per element of C, every operand read from global
// memory. threadIdx.x runs along a row of C, so a warp reads one element of A (a broadcast) and
// 32 consecutive elements of B, and writes 32 consecutive elements of C: coalesced, but each
// element of A and B is fetched again by every thread that needs it (K loads of each per
// output), and the caches are all that stands between the kernel and DRAM.
/* kernlab
family:     matmul
entry:      naive<BLOCK>
blocks:     128 256 512 1024
block_dims: 32, BLOCK / 32
grid_dims:  (N + 31) / 32, (M + BLOCK / 32 - 1) / (BLOCK / 32)
summary:    one thread per element of C, operands from global memory
order:      0
*/

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) naive(const float* A, const float* B, float* C, int M,
                                               int N, int K) {
  const int row = blockIdx.y * (BLOCK / 32) + threadIdx.y;
  const int col = blockIdx.x * 32 + threadIdx.x;
  if (row >= M || col >= N) return;
  float sum = 0.0f;
  for (int k = 0; k < K; ++k) sum += A[row * K + k] * B[k * N + col];
  C[row * N + col] = sum;
}
