// Step 1, a block per row: BLOCK threads share a row, so a warp reads 32 consecutive floats of it
// (coalesced), and the launch has ROWS * BLOCK threads instead of ROWS. Each pass is a
// block-strided loop (thread t takes columns t, t + BLOCK, ...; any COLS, longer or shorter than
// the block), and the row's maximum and sum, which every thread needs, are combined through
// shared memory: each thread leaves its partial result in red[t], a tree of halving steps with a
// __syncthreads() between them folds them into red[0], and every thread reads it from there.
// The reduction is the classic shared-memory tree of the reduce family; the next step replaces
// it with warp shuffles.
//
// Each thread's partial sum is compensated (Kahan, as in every variant; family.toml).
/* kernlab
family:    softmax
entry:     block_per_row<BLOCK, T>
blocks:    128 256 512 1024
grid_dims: ROWS
summary:   a block per row: block-wide max, then block-wide sum, through shared memory
order:     1
*/

__device__ __forceinline__ void kahan_add(float& sum, float& comp, float v) {
  const float y = v - comp;
  const float t = sum + y;
  comp = (t - sum) - y;
  sum = t;
}

// Folds the BLOCK values of red into red[0] with `op`; every thread must call it.
template <int BLOCK, typename OP>
__device__ __forceinline__ float block_reduce(float* red, float v, OP op) {
  const int t = threadIdx.x;
  red[t] = v;
  __syncthreads();
#pragma unroll
  for (int s = BLOCK / 2; s > 0; s >>= 1) {
    if (t < s) red[t] = op(red[t], red[t + s]);
    __syncthreads();
  }
  const float r = red[0];
  __syncthreads();  // everyone has read red[0] before red is written again
  return r;
}

struct max_op {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct sum_op {
  __device__ float operator()(float a, float b) const { return a + b; }
};

template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK) block_per_row(const T* x, T* y, int rows, int cols) {
  static_assert((BLOCK & (BLOCK - 1)) == 0, "the tree halves BLOCK: a power of two");
  __shared__ float red[BLOCK];
  const int t = threadIdx.x;
  const T* xr = x + static_cast<long long>(blockIdx.x) * cols;  // the grid is ROWS blocks
  T* yr = y + static_cast<long long>(blockIdx.x) * cols;

  // xr[0] is a neutral start for the maximum (COLS >= 1), and the value of a thread with no
  // column of its own (COLS < BLOCK).
  float m = xr[0];
  for (int c = t; c < cols; c += BLOCK) m = fmaxf(m, xr[c]);
  m = block_reduce<BLOCK>(red, m, max_op());

  float sum = 0.0f, comp = 0.0f;
  for (int c = t; c < cols; c += BLOCK) kahan_add(sum, comp, expf(xr[c] - m));
  const float total = block_reduce<BLOCK>(red, sum - comp, sum_op());

  for (int c = t; c < cols; c += BLOCK) yr[c] = expf(xr[c] - m) / total;
}
