// Step 2, a warp per row: a block is more than a usual row needs (1000 columns give a
// 1024-thread block one iteration per pass, and its two trees cost 2 * (log2(BLOCK) + 2)
// barriers), so here a row belongs to one warp, and a block holds BLOCK / 32 rows: threadIdx.x
// is the lane (0..31, the column within a stride of 32), threadIdx.y the warp's row in the
// block. The row's maximum and sum are combined with __shfl_xor_sync, a butterfly that leaves
// the result in every lane: no shared memory, no __syncthreads, and the shuffles carry their
// own synchronisation. A warp whose row is past the last returns at once, as a whole, so every
// shuffle sees a full warp.
//
// Each lane's partial sum is compensated (Kahan, as in every variant; family.toml).
/* kernlab
family:     softmax
entry:      warp_per_row<BLOCK, T>
blocks:     128 256 512 1024
block_dims: 32, BLOCK / 32
grid_dims:  (ROWS + BLOCK / 32 - 1) / (BLOCK / 32)
summary:    a warp per row, BLOCK / 32 rows per block: max and sum with warp shuffles
order:      2
*/

__device__ __forceinline__ void kahan_add(float& sum, float& comp, float v) {
  const float y = v - comp;
  const float t = sum + y;
  comp = (t - sum) - y;
  sum = t;
}

template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK) warp_per_row(const T* x, T* y, int rows, int cols) {
  static_assert(BLOCK % 32 == 0, "whole warps");
  const int row = blockIdx.x * (BLOCK / 32) + threadIdx.y;
  if (row >= rows) return;  // the whole warp: all its lanes have the same threadIdx.y
  const int lane = threadIdx.x;
  const T* xr = x + static_cast<long long>(row) * cols;  // ROWS * COLS may pass 2^31
  T* yr = y + static_cast<long long>(row) * cols;

  float m = xr[0];  // neutral for the maximum, and the value of a lane with no column
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));

  float sum = 0.0f, comp = 0.0f;
  for (int c = lane; c < cols; c += 32) kahan_add(sum, comp, expf(xr[c] - m));
  float total = sum - comp;
  // a + b in one lane and b + a in its partner are the same float: every lane ends with the
  // same total, so the whole row is divided by one number.
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    total += __shfl_xor_sync(0xffffffffu, total, offset);

  for (int c = lane; c < cols; c += 32) yr[c] = expf(xr[c] - m) / total;
}
