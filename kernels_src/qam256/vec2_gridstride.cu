// Beyond the seed, step 1: two symbols per thread and iteration, with 16-byte accesses (one
// float4 load holds two (I, Q) pairs, one ulonglong2 store their 16 soft bits), over a resident
// grid that strides through the data: half the memory instructions of branch_free, and no block
// launched only to finish a ragged tail. The rounding and clamp are one instruction:
// __float2uint_rn rounds half to even and saturates (negative and NaN give 0), then min 255.
// An odd n leaves one symbol, done by the first thread with an 8-byte access.
/* kernlab
family:  qam256
entry:   qam256_vec2_gridstride<BLOCK>
blocks:  128 256 512 1024
grid_dims: min(RESIDENT_BLOCKS, ceil_div(N, 2 * BLOCK))
summary: two symbols per thread per step, 16-byte loads and stores, resident grid-stride loop
order:   10
*/

__device__ __forceinline__ unsigned long long soft(float llr) {
  return min(__float2uint_rn(128.0f - 8.0f * llr), 255u);
}

__device__ __forceinline__ unsigned long long axis(float v, int shift) {
  const float l0 = __fmul_rn(v, kl::qam256::scale);
  const float l2 = 8.0f - fabsf(l0);
  const float l4 = 4.0f - fabsf(l2);
  const float l6 = 2.0f - fabsf(l4);
  return soft(l0) << shift | soft(l2) << (shift + 16) | soft(l4) << (shift + 32) |
         soft(l6) << (shift + 48);
}

template <unsigned BLOCK>
__global__ void qam256_vec2_gridstride(const float2* in, unsigned char* out, unsigned long long n) {
  const float4* in2 = reinterpret_cast<const float4*>(in);
  ulonglong2* out2 = reinterpret_cast<ulonglong2*>(out);
  const unsigned long long pairs = n / 2;
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * BLOCK;
  for (unsigned long long p = static_cast<unsigned long long>(blockIdx.x) * BLOCK + threadIdx.x;
       p < pairs; p += stride) {
    const float4 s = in2[p];
    out2[p] = make_ulonglong2(axis(s.x, 0) | axis(s.y, 8), axis(s.z, 0) | axis(s.w, 8));
  }
  if (n % 2 == 1 && blockIdx.x == 0 && threadIdx.x == 0) {
    const float2 s = in[n - 1];
    reinterpret_cast<unsigned long long*>(out)[n - 1] = axis(s.x, 0) | axis(s.y, 8);
  }
}
