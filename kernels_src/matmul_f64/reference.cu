// The trusted reference of the matmul_f64 family: C = A * B in double, one fused multiply-add per
// term in k order, and beside each element the sum of its products' magnitudes (the scale of the
// random-mode bound, family.toml's [compare.random]). Exact-mode inputs make every product and
// every partial sum exact in double, so those results are exact; random ones round like any
// double kernel's (family.toml says why the bound allows for both). One thread per element of C,
// TILE x TILE threads a block, the operands staged through shared memory in TILE-wide slices of
// K, zero past the edges.
template <int TILE>
__global__ void matmul_f64_reference(const double* A, const double* B, double* C, int M, int N,
                                     int K, double* C_abs) {
  __shared__ double As[TILE][TILE];
  __shared__ double Bs[TILE][TILE];
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  double sum = 0.0, sum_abs = 0.0;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    const int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = row < M && ka < K ? A[(long long)row * K + ka] : 0.0;
    Bs[threadIdx.y][threadIdx.x] = kb < K && col < N ? B[(long long)kb * N + col] : 0.0;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) {
      const double a = As[threadIdx.y][k], b = Bs[k][threadIdx.x];
      sum = fma(a, b, sum);
      sum_abs = fma(fabs(a), fabs(b), sum_abs);
    }
    __syncthreads();
  }
  if (row < M && col < N) {
    C[(long long)row * N + col] = sum;
    C_abs[(long long)row * N + col] = sum_abs;
  }
}
