// The trusted GPU reference of the `matmul` family: C = A * B in double precision, with the sum
// of the products' magnitudes beside each element (the scale of the random-mode error bound).
//
// kernlab compiles this file with NVRTC at run time (its text is built into the host program;
// host/CMakeLists.txt), because a CPU reference for 4096^3 takes minutes. It is kept as plain as
// a tiled kernel can be: every product is formed exactly in double (two floats' product has at
// most 48 significant bits) and summed in k order, so for exact-mode inputs the result is exact
// and for random inputs it is far more accurate than any float32 variant. tests/test_gpu_matmul.cpp
// checks it against the CPU reference.
#pragma once

namespace kl {

// One thread per element of C, TILE x TILE threads per block, operands staged through shared
// memory in TILE-wide slices of K (zero-filled past the edges).
template <int TILE>
__global__ void matmul_reference(const float* A, const float* B, double* C, double* C_abs,
                                 int M, int N, int K) {
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

}  // namespace kl
