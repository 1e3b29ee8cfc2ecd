// Step 4, the row on chip: every step before reads the row from memory at least twice (once for
// the maximum and the sum, once more to write y), which a row that stays in L2 hides and a large
// matrix does not: at 65536 x 4096 (1 GiB each way) the second read goes to DRAM. Here a block
// takes a row and keeps it in registers between the passes: each thread loads its ITEMS columns
// once, all loads issued before any is used, then the block's maximum, the block's sum of
// exp(x - m) (each exp kept in the register of its x) and the quotients follow without touching
// x again. The row is read once and written once, the least any softmax can move.
//
// ITEMS = 4096 / BLOCK: a block holds 4096 columns whatever its size (32 registers a thread at
// 128 threads, 4 at 1024). Columns past that (a longer row) are the tail, read from memory in
// each pass as step 1 does. Where COLS is a multiple of 4 and x and y are 16-byte aligned, a
// thread's columns are float4s (thread t holds columns 4t..4t+3, then 4(t + BLOCK)..., so a warp
// loads 512 consecutive bytes in one instruction); otherwise single floats at a stride of BLOCK.
//
// y is each exp times the reciprocal of the sum (1 ulp at most, against half an ulp for a
// quotient), not a division: CUDA's IEEE division takes a slow path (a subroutine call) whenever
// the quotient would be tiny, and with exact inputs two thirds of a row's exp(x - max) underflow
// (x - max down to -256): on an H200 at 65536 x 4096 that made steps 1 to 3 issue-bound at about
// 0.3x of a copy (Nsight Compute: SM throughput 80-90%, DRAM 25-38%, warps stalled mostly on
// "not selected"), and random inputs, which never underflow, ran them 2.2x as fast.
//
// The block's maximum and sum go through warp shuffles and one shared slot per warp, which every
// thread then folds in the same order, so every thread has the same total. Each thread's partial
// sum is compensated (Kahan, as in every variant; family.toml).
/* kernlab
family:    softmax
entry:     row_on_chip<BLOCK, ITEMS, T>
blocks:    128 256 512 1024
params:    ITEMS = 4096 / BLOCK
grid_dims: ROWS
summary:   + the row held in registers: read once, written once (columns past 4096 re-read)
order:     4
*/

__device__ __forceinline__ void kahan_add(float& sum, float& comp, float v) {
  const float y = v - comp;
  const float t = sum + y;
  comp = (t - sum) - y;
  sum = t;
}

struct max_op {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct sum_op {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// v combined over the block with op; every thread gets the same value. part holds a slot per
// warp and is used by this one call only (no barrier is needed after it).
template <int BLOCK, typename OP>
__device__ __forceinline__ float block_all_reduce(float v, float* part, OP op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
  __syncthreads();
  float r = part[0];
#pragma unroll
  for (int w = 1; w < BLOCK / 32; ++w) r = op(r, part[w]);
  return r;
}

// One row. VEC: thread t's slot 4k + i is column 4 (t + k BLOCK) + i; otherwise slot k is column
// t + k BLOCK. Either way the slots of the block cover columns [0, BLOCK * ITEMS) once.
template <int BLOCK, int ITEMS, bool VEC>
__device__ __forceinline__ void softmax_row(const float* xr, float* yr, int cols) {
  static_assert(BLOCK % 32 == 0 && ITEMS % 4 == 0, "whole warps, whole float4s");
  __shared__ float max_part[BLOCK / 32], sum_part[BLOCK / 32];
  const int t = threadIdx.x;
  auto column = [t](int slot) { return VEC ? 4 * (t + slot / 4 * BLOCK) + slot % 4 : t + slot * BLOCK; };
  constexpr int on_chip = BLOCK * ITEMS;

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
  for (int c = on_chip + t; c < cols; c += BLOCK) m = fmaxf(m, xr[c]);
  m = block_all_reduce<BLOCK>(m, max_part, max_op());

  float sum = 0.0f, comp = 0.0f;
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    v[k] = expf(v[k] - m);
    if (column(k) < cols) kahan_add(sum, comp, v[k]);
  }
  for (int c = on_chip + t; c < cols; c += BLOCK) kahan_add(sum, comp, expf(xr[c] - m));
  const float total = block_all_reduce<BLOCK>(sum - comp, sum_part, sum_op());
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
  for (int c = on_chip + t; c < cols; c += BLOCK) yr[c] = expf(xr[c] - m) * inv;
}

template <int BLOCK, int ITEMS, typename T>
__global__ void __launch_bounds__(BLOCK) row_on_chip(const T* x, T* y, int rows, int cols) {
  static_assert(sizeof(T) == sizeof(float), "float32 (the family's one dtype)");
  const long long offset = static_cast<long long>(blockIdx.x) * cols;  // the grid is ROWS blocks
  const float* xr = x + offset;
  float* yr = y + offset;
  const bool aligned = cols % 4 == 0 && reinterpret_cast<unsigned long long>(x) % 16 == 0 &&
                       reinterpret_cast<unsigned long long>(y) % 16 == 0;
  if (aligned)
    softmax_row<BLOCK, ITEMS, true>(xr, yr, cols);
  else
    softmax_row<BLOCK, ITEMS, false>(xr, yr, cols);
}
