// Step 0, the starting point: one thread per row, the three passes of the definition one after
// the other. The thread finds its row's maximum, sums exp(x - max) over the row, then writes
// exp(x - max) / sum for every element. Subtracting the maximum keeps every exponent <= 0, so
// nothing overflows whatever the inputs; the row is read three times and exp is computed twice.
//
// The lesson is the memory access: at a given step the 32 threads of a warp read 32 different
// rows, COLS floats apart, so every load touches its own 32-byte sector, and with 4096 rows
// there are only 4096 threads to hide the latency. The later steps put many threads on a row.
//
// Accuracy (every variant of this family does the same; family.toml explains max_ulp): the sum
// is compensated (Kahan), so its error does not grow with the row's length. A plain float sum
// of 10^5 terms in one thread is off by over a thousand ulps, which no useful max_ulp allows.
/* kernlab
family:    softmax
entry:     thread_per_row<BLOCK, T>
blocks:    32 64 128 256 512 1024
grid_dims: (ROWS + BLOCK - 1) / BLOCK
summary:   one thread per row: max, sum of exp, then the quotients (three passes)
order:     0
*/

// sum + v, with the rounding error carried in comp (Kahan): sum - comp is the running total.
// No multiplications, so NVRTC's FMA contraction cannot change it, and without fast-math the
// compiler may not reassociate it away.
__device__ __forceinline__ void kahan_add(float& sum, float& comp, float v) {
  const float y = v - comp;
  const float t = sum + y;
  comp = (t - sum) - y;
  sum = t;
}

template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK) thread_per_row(const T* x, T* y, int rows, int cols) {
  const int row = blockIdx.x * BLOCK + threadIdx.x;
  if (row >= rows) return;
  const T* xr = x + static_cast<long long>(row) * cols;  // ROWS * COLS may pass 2^31
  T* yr = y + static_cast<long long>(row) * cols;

  float m = xr[0];  // COLS >= 1
  for (int c = 1; c < cols; ++c) m = fmaxf(m, xr[c]);

  float sum = 0.0f, comp = 0.0f;
  for (int c = 0; c < cols; ++c) kahan_add(sum, comp, expf(xr[c] - m));
  const float total = sum - comp;  // >= 1: the maximum's own term is exp(0) = 1

  for (int c = 0; c < cols; ++c) yr[c] = expf(xr[c] - m) / total;
}
