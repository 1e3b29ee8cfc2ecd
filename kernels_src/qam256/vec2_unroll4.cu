// Beyond the seed, step 2: eight symbols per thread, as four 16-byte loads issued before any of
// them is used (four requests in flight per thread instead of one), one block per 8 * BLOCK
// symbols. Each of the four is BLOCK pairs apart, so a warp's accesses stay contiguous. Same
// arithmetic as vec2_gridstride.
/* kernlab
family:  qam256
entry:   qam256_vec2_unroll4<BLOCK>
blocks:  128 256 512 1024
tile:    8 * BLOCK
bounds:  checked
summary: eight symbols per thread, four 16-byte loads in flight, 16-byte stores
order:   11
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
__global__ void qam256_vec2_unroll4(const float2* in, unsigned char* out, unsigned long long n) {
  const float4* in2 = reinterpret_cast<const float4*>(in);
  ulonglong2* out2 = reinterpret_cast<ulonglong2*>(out);
  const unsigned long long pairs = n / 2;
  const unsigned long long base = static_cast<unsigned long long>(blockIdx.x) * (4 * BLOCK) + threadIdx.x;
  float4 s[4];
#pragma unroll
  for (int k = 0; k < 4; ++k)
    if (base + k * BLOCK < pairs) s[k] = in2[base + k * BLOCK];
#pragma unroll
  for (int k = 0; k < 4; ++k)
    if (base + k * BLOCK < pairs)
      out2[base + k * BLOCK] = make_ulonglong2(axis(s[k].x, 0) | axis(s[k].y, 8),
                                               axis(s[k].z, 0) | axis(s[k].w, 8));
  // An odd n: the last symbol belongs to the block whose tile holds it.
  if (n % 2 == 1 && threadIdx.x == 0 && (n - 1) / (8ull * BLOCK) == blockIdx.x) {
    const float2 t = in[n - 1];
    reinterpret_cast<unsigned long long*>(out)[n - 1] = axis(t.x, 0) | axis(t.y, 8);
  }
}
