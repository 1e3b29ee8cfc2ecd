// Step 1, the seed's starting point: one thread per symbol, the definition written piecewise with
// if/else (the seed's formula), I and Q read as two 4-byte loads and the 8 soft bits stored one
// byte at a time. x = I * s uses __fmul_rn so that the compiler cannot fuse it into the next
// subtraction (8 - x as one FMA would skip the rounding of x that the definition has).
// `8 + x` for x < 0 equals `8 - |x|` exactly (a - b is a + (-b) in IEEE arithmetic).
/* kernlab
family:  qam256
entry:   qam256_baseline<BLOCK>
blocks:  128 256 512 1024
summary: one symbol per thread, piecewise if/else, 4-byte loads, byte stores
order:   1
*/

__device__ unsigned char soft_piecewise(float llr) {
  const float v = 128.0f - 8.0f * llr;
  if (v <= 0.0f) return 0;
  else if (v >= 255.0f) return 255;
  else return static_cast<unsigned char>(rintf(v));
}

// L of one axis: L0 = v, L2 = 8 - |L0|, L4 = 4 - |L2|, L6 = 2 - |L4|, each |.| as a branch.
__device__ void axis_piecewise(float v, float l[4]) {
  l[0] = v;
  if (l[0] >= 0.0f) l[1] = 8.0f - l[0];
  else l[1] = 8.0f + l[0];
  if (l[1] >= 0.0f) l[2] = 4.0f - l[1];
  else l[2] = 4.0f + l[1];
  if (l[2] >= 0.0f) l[3] = 2.0f - l[2];
  else l[3] = 2.0f + l[2];
}

template <unsigned BLOCK>
__global__ void qam256_baseline(const float2* in, unsigned char* out, unsigned long long n) {
  const unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * BLOCK + threadIdx.x;
  if (i >= n) return;
  const float* f = reinterpret_cast<const float*>(in);
  float li[4], lq[4];
  axis_piecewise(__fmul_rn(f[2 * i], kl::qam256::scale), li);
  axis_piecewise(__fmul_rn(f[2 * i + 1], kl::qam256::scale), lq);
  for (int k = 0; k < 4; ++k) {
    out[8 * i + 2 * k] = soft_piecewise(li[k]);
    out[8 * i + 2 * k + 1] = soft_piecewise(lq[k]);
  }
}
