// Beyond the seed, steps 2 and 3 as one tunable file: 2 * UNROLL symbols per thread, as UNROLL
// 16-byte loads issued before any of them is used (UNROLL requests in flight per thread instead
// of one), one block per 2 * UNROLL * BLOCK symbols. Each of the loads is BLOCK pairs apart, so a
// warp's accesses stay contiguous. Same arithmetic as vec2_gridstride.
//
// STREAM = 1 adds streaming cache hints. Every byte is read once and written once, so nothing is
// worth keeping in L1 or L2: __ldcs / __stcs (ld.global.cs, st.global.cs, "evict first") tell the
// caches so, leaving L2 to the writes on their way to memory, as a copy engine's traffic would be.
//
// The named points are the ladder's steps, each the separate file it was (their sm_90 machine
// code is the deleted files', instruction for instruction, at every block): vec2_unroll4 (step
// 2: four loads in flight, plain loads and stores) and vec2_stream (step 3: vec2_unroll4 with the
// streaming hints). The other points (1, 2 or 8 loads in flight, with or without the hints) are
// for `kernlab tune --variant vec2_unroll`; the default job leaves them out.
/* kernlab
family:  qam256
entry:   qam256_vec2_unroll<BLOCK, UNROLL, STREAM>
blocks:  128 256 512 1024
tune:    UNROLL = 1, 2, 4, 8; STREAM = 0, 1
grid_dims: ceil_div(N, 2 * UNROLL * BLOCK)
summary: 2 * UNROLL symbols per thread, UNROLL 16-byte loads in flight, 16-byte stores; STREAM: evict-first
points:  vec2_unroll4(UNROLL=4, STREAM=0) "eight symbols per thread, four 16-byte loads in flight, 16-byte stores"
points:  vec2_stream(UNROLL=4, STREAM=1) "as vec2_unroll4, with evict-first (streaming) loads and stores"
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

template <unsigned BLOCK, unsigned UNROLL, unsigned STREAM>
__global__ void qam256_vec2_unroll(const float2* in, unsigned char* out, unsigned long long n) {
  const float4* in2 = reinterpret_cast<const float4*>(in);
  ulonglong2* out2 = reinterpret_cast<ulonglong2*>(out);
  const unsigned long long pairs = n / 2;
  const unsigned long long base =
      static_cast<unsigned long long>(blockIdx.x) * (UNROLL * BLOCK) + threadIdx.x;
  float4 s[UNROLL];
#pragma unroll
  for (unsigned k = 0; k < UNROLL; ++k)
    if (base + k * BLOCK < pairs) {
      if constexpr (STREAM)
        s[k] = __ldcs(in2 + base + k * BLOCK);
      else
        s[k] = in2[base + k * BLOCK];
    }
#pragma unroll
  for (unsigned k = 0; k < UNROLL; ++k)
    if (base + k * BLOCK < pairs) {
      const ulonglong2 v = make_ulonglong2(axis(s[k].x, 0) | axis(s[k].y, 8),
                                           axis(s[k].z, 0) | axis(s[k].w, 8));
      if constexpr (STREAM)
        __stcs(out2 + base + k * BLOCK, v);
      else
        out2[base + k * BLOCK] = v;
    }
  // An odd n: the last symbol belongs to the block whose tile holds it.
  if (n % 2 == 1 && threadIdx.x == 0 && (n - 1) / (2ull * UNROLL * BLOCK) == blockIdx.x) {
    const float2 t = in[n - 1];
    reinterpret_cast<unsigned long long*>(out)[n - 1] = axis(t.x, 0) | axis(t.y, 8);
  }
}
