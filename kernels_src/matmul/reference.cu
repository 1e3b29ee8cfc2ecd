// The trusted reference of the matmul family: C = A * B in double precision, and beside each
// element the sum of its products' magnitudes (the scale of the random-mode bound, family.toml's
// [compare.random]). Every product of two floats is exact in double (at most 48 significant
// bits) and the sum runs in k order, so exact-mode results are exact and random ones far more
// accurate than any float32 variant. One thread per element of C, TILE x TILE threads a block,
// the operands staged through shared memory in TILE-wide slices of K, zero past the edges.
template <int TILE>
__global__ void matmul_reference(const float* A, const float* B, double* C, int M, int N, int K,
                                 double* C_abs) {
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
