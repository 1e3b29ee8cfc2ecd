// The ceiling of mma.sync on this GPU: warps that do nothing but issue independent
// mma.sync.m16n8k16 (bfloat16 in, float32 accumulators) from registers, no memory traffic at
// all. Whatever a kernel built on mma.sync does (ldmatrix, cp.async, the epilogue) can only
// take it further from this figure; the wgmma kernels and cuBLAS are not bound by it.
// Build and run (on the GPU machine): nvcc -O3 -arch=sm_90 -o mma_sync_peak mma_sync_peak.cu
//   && ./mma_sync_peak
// Prints, per warps-per-SM and independent accumulators (ILP), TFLOP/s and the fraction of the
// dense 16-bit tensor-core peak at the SM clock the run saw (4096 FLOP per SM per clock).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                    \
  do {                                                                              \
    cudaError_t e_ = (x);                                                           \
    if (e_ != cudaSuccess) {                                                        \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,              \
                   cudaGetErrorString(e_));                                         \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

template <int ILP>
__global__ void mma_loop(float* out, int iters, unsigned seed) {
  unsigned a[4], b[2];
  for (int i = 0; i < 4; ++i) a[i] = seed * (threadIdx.x + i) | 0x3f803f80u;  // ~1.0 pairs
  for (int i = 0; i < 2; ++i) b[i] = (seed + i) ^ 0x3f803f80u;
  float d[ILP][4] = {};
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int j = 0; j < ILP; ++j)
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%0,%1,%2,%3};\n"
          : "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
  float s = 0;
  for (int j = 0; j < ILP; ++j) s += d[j][0] + d[j][1] + d[j][2] + d[j][3];
  if (s == 1234.5f) out[0] = s;  // keeps the loop; never true for these inputs in practice
}

template <int ILP>
void run(int sms, int warps_per_sm, int clock_khz) {
  const int block = 128, blocks = sms * warps_per_sm / 4, iters = 4096;
  float* out = nullptr;
  CHECK(cudaMalloc(&out, 4));
  cudaEvent_t t0, t1;
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));
  mma_loop<ILP><<<blocks, block>>>(out, 16, 1u);  // warm-up
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  float best = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    CHECK(cudaEventRecord(t0));
    mma_loop<ILP><<<blocks, block>>>(out, iters, 1u);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(t1));
    CHECK(cudaEventSynchronize(t1));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    if (ms < best) best = ms;
  }
  const double flops = 2.0 * 16 * 8 * 16 * ILP * double(iters) * blocks * (block / 32);
  const double tflops = flops / (best * 1e-3) / 1e12;
  const double peak = 4096.0 * sms * clock_khz * 1e3 / 1e12;
  std::printf("warps/SM %2d  ILP %d  %8.1f TFLOP/s  %5.1f%% of the %0.0f TFLOP/s dense peak at %d MHz\n",
              warps_per_sm, ILP, tflops, 100.0 * tflops / peak, peak, clock_khz / 1000);
  CHECK(cudaFree(out));
  CHECK(cudaEventDestroy(t0));
  CHECK(cudaEventDestroy(t1));
}

int main() {
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  int clock_khz = 0;
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  std::printf("%s, %d SMs, max SM clock %d MHz\n", p.name, p.multiProcessorCount, clock_khz / 1000);
  for (int w : {4, 8, 16, 32}) {
    run<2>(p.multiProcessorCount, w, clock_khz);
    run<4>(p.multiProcessorCount, w, clock_khz);
    run<8>(p.multiProcessorCount, w, clock_khz);
  }
  return 0;
}
