// Step 5, a warp per row, the row on chip: step 4 gives a row a whole block, which a short row
// leaves mostly idle (1000 columns are 250 float4s for 128 threads or more) and whose two
// barriers every row pays. Here, as in step 2, a row belongs to one warp and a block holds
// BLOCK / 32 rows, and as in step 4 each lane keeps its columns in registers between the passes:
// ITEMS = 32 floats a lane, 1024 columns a warp, all loads issued before any is used; the
// maximum and the sum are butterflies of shuffles, with no shared memory and no barrier. Columns
// past 1024 (a longer row) are the tail, read from memory in each pass, so long rows belong to
// step 4; `kernlab tune` or a sweep over both tells where the two cross.
//
// Where COLS is a multiple of 4 and x and y are 16-byte aligned, lane l's columns are float4s
// (4l..4l+3, then 4(l + 32)...); otherwise single floats at a stride of 32. y is each exp times
// the reciprocal of the sum, as in step 4 (a division by the sum takes CUDA's slow path whenever
// the quotient is tiny). Each lane's partial sum is compensated (Kahan, as in every variant;
// family.toml). Blocks of 1024 are left out: 32 warps of 32 floats a lane do not fit the
// registers of an SM without spilling.
/* kernlab
family:     softmax
entry:      warp_row_on_chip<BLOCK, 32, T>
blocks:     128 256 512
block_dims: 32, BLOCK / 32
grid_dims:  (ROWS + BLOCK / 32 - 1) / (BLOCK / 32)
summary:    + a warp per row with the row in registers: read once, written once (columns past 1024 re-read)
order:      5
*/

__device__ __forceinline__ void kahan_add(float& sum, float& comp, float v) {
  const float y = v - comp;
  const float t = sum + y;
  comp = (t - sum) - y;
  sum = t;
}

// One row, one warp. VEC: lane l's slot 4k + i is column 4 (l + 32 k) + i; otherwise slot k is
// column l + 32 k. Either way the warp's slots cover columns [0, 32 * ITEMS) once.
template <int ITEMS, bool VEC>
__device__ __forceinline__ void softmax_row(const float* xr, float* yr, int cols) {
  static_assert(ITEMS % 4 == 0, "whole float4s");
  const int lane = threadIdx.x;
  auto column = [lane](int slot) { return VEC ? 4 * (lane + slot / 4 * 32) + slot % 4 : lane + slot * 32; };
  constexpr int on_chip = 32 * ITEMS;

  // xr[0] is a neutral start for the maximum and the value of an empty slot (COLS >= 1).
  const float first = xr[0];
  float v[ITEMS];
  if (VEC) {
#pragma unroll
    for (int k = 0; k < ITEMS / 4; ++k) {
      const int c = column(4 * k);
      const float4 q = c < cols ? reinterpret_cast<const float4*>(xr)[c / 4]
                                : make_float4(first, first, first, first);
      v[4 * k] = q.x;
      v[4 * k + 1] = q.y;
      v[4 * k + 2] = q.z;
      v[4 * k + 3] = q.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) v[k] = column(k) < cols ? xr[column(k)] : first;
  }

  float m = first;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) m = fmaxf(m, v[k]);
  for (int c = on_chip + lane; c < cols; c += 32) m = fmaxf(m, xr[c]);
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, offset));

  float sum = 0.0f, comp = 0.0f;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    v[k] = expf(v[k] - m);
    if (column(k) < cols) kahan_add(sum, comp, v[k]);
  }
  for (int c = on_chip + lane; c < cols; c += 32) kahan_add(sum, comp, expf(xr[c] - m));
  // a + b and b + a round alike, so every lane of the butterfly ends with the same total.
  float total = sum - comp;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) total += __shfl_xor_sync(0xffffffffu, total, offset);
  const float inv = 1.0f / total;

  if (VEC) {
#pragma unroll
    for (int k = 0; k < ITEMS / 4; ++k) {
      const int c = column(4 * k);
      if (c < cols)
        reinterpret_cast<float4*>(yr)[c / 4] =
            make_float4(v[4 * k] * inv, v[4 * k + 1] * inv, v[4 * k + 2] * inv, v[4 * k + 3] * inv);
    }
  } else {
#pragma unroll
    for (int k = 0; k < ITEMS; ++k)
      if (column(k) < cols) yr[column(k)] = v[k] * inv;
  }
  for (int c = on_chip + lane; c < cols; c += 32) yr[c] = expf(xr[c] - m) * inv;
}

template <int BLOCK, int ITEMS, typename T>
__global__ void __launch_bounds__(BLOCK) warp_row_on_chip(const T* x, T* y, int rows, int cols) {
  static_assert(BLOCK % 32 == 0 && sizeof(T) == sizeof(float), "whole warps; float32");
  const int row = blockIdx.x * (BLOCK / 32) + threadIdx.y;
  if (row >= rows) return;  // the whole warp: all its lanes have the same threadIdx.y
  const long long offset = static_cast<long long>(row) * cols;  // ROWS * COLS may pass 2^31
  const bool aligned = cols % 4 == 0 && reinterpret_cast<unsigned long long>(x) % 16 == 0 &&
                       reinterpret_cast<unsigned long long>(y) % 16 == 0;
  if (aligned)
    softmax_row<ITEMS, true>(x + offset, y + offset, cols);
  else
    softmax_row<ITEMS, false>(x + offset, y + offset, cols);
}
