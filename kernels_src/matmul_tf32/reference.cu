// The matmul_tf32 family's reference: C = A * B in double from the float32 inputs as they are
// (not rounded to TF32: the bound of the random mode covers that rounding), and beside each
// element the sum of its products' magnitudes. One thread per element of C, TILE x TILE threads a
// block, operands staged through shared memory in TILE-wide slices of K, zero past the edges.
template <int TILE>
__global__ void matmul_tf32_reference(const float* A, const float* B, double* C, int M, int N,
                                      int K, double* C_abs) {
  __shared__ double As[TILE][TILE];
  __shared__ double Bs[TILE][TILE];
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  double sum = 0.0, sum_abs = 0.0;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    const int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = row < M && ka < K ? (double)A[(long long)row * K + ka] : 0.0;
    Bs[threadIdx.y][threadIdx.x] = kb < K && col < N ? (double)B[(long long)kb * N + col] : 0.0;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) {
      const double p = As[threadIdx.y][k] * Bs[k][threadIdx.x];
      sum += p;
      sum_abs += fabs(p);
    }
    __syncthreads();
  }
  if (row < M && col < N) {
    C[(long long)row * N + col] = sum;
    C_abs[(long long)row * N + col] = sum_abs;
  }
}
