// Step 3, the seed's divergence step: no branch at all. |.| is fabsf, the clamp is fmaxf/fminf
// and the rounding rintf, all single instructions, so the 32 lanes of a warp never part ways
// (the seed: all lanes active instead of about 15, for only 5% less time: the kernel is bound by
// memory, not by issue). Memory as in coalesced. 128 - 8 * L may become one FMA: exact, since
// 8 * L is.
/* kernlab
family:  qam256
entry:   qam256_branch_free<BLOCK>
blocks:  128 256 512 1024
summary: one symbol per thread, arithmetic form (fabsf, fminf/fmaxf), 8-byte load, 64-bit store
order:   3
*/

__device__ __forceinline__ unsigned long long soft(float llr) {
  const float v = fminf(fmaxf(rintf(128.0f - 8.0f * llr), 0.0f), 255.0f);
  return static_cast<unsigned long long>(static_cast<unsigned>(v));
}

// The 4 soft bits of one axis, at bit offsets shift, shift + 16, shift + 32, shift + 48.
__device__ __forceinline__ unsigned long long axis(float v, int shift) {
  const float l0 = __fmul_rn(v, kl::qam256::scale);
  const float l2 = 8.0f - fabsf(l0);
  const float l4 = 4.0f - fabsf(l2);
  const float l6 = 2.0f - fabsf(l4);
  return soft(l0) << shift | soft(l2) << (shift + 16) | soft(l4) << (shift + 32) |
         soft(l6) << (shift + 48);
}

template <unsigned BLOCK>
__global__ void qam256_branch_free(const float2* in, unsigned char* out, unsigned long long n) {
  const unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * BLOCK + threadIdx.x;
  if (i >= n) return;
  const float2 s = in[i];
  reinterpret_cast<unsigned long long*>(out)[i] = axis(s.x, 0) | axis(s.y, 8);
}
