// The trusted reference of the `softmax` family: one thread per row, in double precision.
//
// kernlab compiles this file with NVRTC and runs it once per configuration, before any variant;
// its y is double (family.toml's [reference] type = "float64"), and every variant's float y is
// compared with it in float32 ulps at its value. It is kept as plain as a kernel can be: the
// three passes of the definition (the row's maximum, the sum of exp(x - max), the quotients),
// each element widened to double before anything is done with it. x - max is then exact (for
// floats whose exponents differ by less than 29, as here), exp is CUDA's double exp (within an
// ulp of double), and the sum of up to 2^20 terms in double is off by at most about
// 2^20 * 2^-53 = 2^-33 relative: the reference's own error is a few thousandths of a float32 ulp.
//
// Row offsets are 64-bit: ROWS * COLS may pass 2^31.

template <typename T>
__global__ void softmax_reference(const T* x, double* y, int rows, int cols) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const T* xr = x + static_cast<long long>(row) * cols;
  double* yr = y + static_cast<long long>(row) * cols;
  double m = static_cast<double>(xr[0]);
  for (int c = 1; c < cols; ++c) m = fmax(m, static_cast<double>(xr[c]));
  double s = 0.0;
  for (int c = 0; c < cols; ++c) s += exp(static_cast<double>(xr[c]) - m);
  for (int c = 0; c < cols; ++c) yr[c] = exp(static_cast<double>(xr[c]) - m) / s;
}
