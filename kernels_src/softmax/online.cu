// Step 3, online softmax (Milakov and Gimelshein, 2018): the maximum and the sum in one pass.
// Steps 0 to 2 read the row once for its maximum m and again for sum exp(x - m). Here each lane
// keeps a running maximum m and the sum s of exp(x - m) over the elements it has seen, relative
// to that running maximum; when an element v passes m, the sum so far is rescaled to the new
// maximum (s * exp(m - v)) before v's own term, exp(0) = 1, is added. Either way one exp per
// element: exp(-|v - m|) is exp(m - v) for a new maximum and exp(v - m) otherwise. The lanes'
// (m, s) pairs are then merged with the same butterfly of shuffles as step 2: the pair with the
// smaller maximum is rescaled to the larger. The row is read twice instead of three times (the
// second pass writes y); the launch is step 2's, a warp per row.
//
// Each lane's running sum is compensated (Kahan, as in every variant; family.toml): the
// compensation is rescaled with the sum.
/* kernlab
family:     softmax
entry:      online<BLOCK, T>
blocks:     128 256 512 1024
block_dims: 32, BLOCK / 32
grid_dims:  (ROWS + BLOCK / 32 - 1) / (BLOCK / 32)
summary:    + online softmax: running max and rescaled sum in one pass, then the write pass
order:      3
*/

__device__ __forceinline__ void kahan_add(float& sum, float& comp, float v) {
  const float y = v - comp;
  const float t = sum + y;
  comp = (t - sum) - y;
  sum = t;
}

// s, a sum of exp(x - m), made a sum of exp(x - to) for a larger maximum to. __fmul_rn is never
// contracted into an FMA with the addition that follows, so a lane and its partner round the
// merged sum identically (a * e + b and b * f + a would not) and every lane ends with the same
// total.
__device__ __forceinline__ float rescaled(float s, float m, float to) {
  return m == to ? s : __fmul_rn(s, expf(m - to));
}

template <int BLOCK, typename T>
__global__ void __launch_bounds__(BLOCK) online(const T* x, T* y, int rows, int cols) {
  static_assert(BLOCK % 32 == 0, "whole warps");
  const int row = blockIdx.x * (BLOCK / 32) + threadIdx.y;
  if (row >= rows) return;  // the whole warp: all its lanes have the same threadIdx.y
  const int lane = threadIdx.x;
  const T* xr = x + static_cast<long long>(row) * cols;  // ROWS * COLS may pass 2^31
  T* yr = y + static_cast<long long>(row) * cols;

  // (m = xr[0], s = 0) is the empty sum, valid whatever m is: a lane with no column of its own
  // (COLS < 32) merges as nothing, and no -infinity (whose difference with itself is NaN) is
  // ever needed.
  float m = xr[0], sum = 0.0f, comp = 0.0f;
  for (int c = lane; c < cols; c += 32) {
    const float v = xr[c];
    const float e = expf(-fabsf(v - m));
    const bool up = v > m;
    const float scale = up ? e : 1.0f;  // a new maximum: the sum so far times exp(m - v)
    sum = __fmul_rn(sum, scale);
    comp = __fmul_rn(comp, scale);
    kahan_add(sum, comp, up ? 1.0f : e);
    m = fmaxf(m, v);
  }
  float total = sum - comp;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float m_other = __shfl_xor_sync(0xffffffffu, m, offset);
    const float total_other = __shfl_xor_sync(0xffffffffu, total, offset);
    const float to = fmaxf(m, m_other);
    total = rescaled(total, m, to) + rescaled(total_other, m_other, to);
    m = to;
  }

  for (int c = lane; c < cols; c += 32) yr[c] = expf(xr[c] - m) / total;
}
