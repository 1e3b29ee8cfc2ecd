// Step 8 of the tensor-core ladder: any shape through the TMA, by copying A and B into aligned
// scratch first, in the same launch. At shapes whose K or N is not a multiple of 8 (4095 x 4097
// x 1023) no row of A or B is 16-byte aligned: step 7's tensor maps cannot be encoded, and steps
// 5 and 6 fall back to aligned register loads shifted into place, their producer waiting on
// them (0.57x-0.70x cuBLAS). Here the kernel runs in two phases:
// 1. Every thread of the grid copies its share of A (M x K) into Ap (M x Kp, Kp = K rounded up
//    to 8) and of B into Bp (K x Np): grid-stride over Ap's and Bp's 16-byte chunks, so that the
//    stores are whole aligned 16-byte vectors and a warp writes 512 consecutive bytes. Chunk c
//    of a row is the row's elements 8c .. 8c + 7, read from the one or two aligned 16-byte blocks
//    that hold them and shifted into place (step 5's window loads), the elements past the row's
//    end replaced by zeros: the pad columns are written, not assumed. When the rows are already
//    16-byte aligned (K or N a multiple of 8) that matrix's copy is a plain 16-byte copy.
//    CU chunks are in flight a thread.
// 2. A grid barrier: each thread fences its writes (fence.proxy.async.global: generic-proxy
//    stores that the TMA, an async-proxy reader, will read; then __syncthreads), thread 0 of each
//    block adds 1 to `arrivals` (scratch, zeroed before every launch) after a __threadfence and
//    spins on an acquire load until it reads gridDim.x, then fences the proxies again.
// 3. Step 7's GEMM (<kernlab/wgmma_tma_gemm_sm90.cuh>), its tensor maps on Ap and Bp: the pad
//    columns of Ap are zeros and Bp's rows past K arrive as the TMA's zeros, so they add nothing.
// The grid barrier needs every block of the grid resident at once: the grid is
// min(RESIDENT_BLOCKS, tiles), and one block fits an SM (384 threads of 168 registers, and
// ~213 KiB of shared memory), so RESIDENT_BLOCKS is the SM count and each block has an SM of its
// own. That holds while the kernel has the GPU to itself (the usual case, and kernlab's); if
// other work held SMs, the late blocks would start when it finished, still no deadlock as long
// as it finishes without this kernel. It would hang where fewer SMs than the occupancy
// calculator counted can take blocks (an MPS client limited to a share of the SMs, a green
// context): a cooperative launch would check that, kernlab's launch does not.
// The price: the copy reads A and B and writes Ap and Bp (kernlab zeroes the scratch before each
// launch, inside the timed region, too), and the GEMM starts only when the last block's copy is
// done; at aligned shapes it is pure cost against step 7.
// H100 80GB HBM3 (results branch: 2026-11-27-h100-tc-tma/), bfloat16, the named point (cooperative,
// BN = 256, 4 stages, CU = 4): 4095x4097x1023 at 282.8 TFLOP/s in a table (cuBLAS 141.5: 2.00x;
// step 6 80.9) and 283.3 and 282.8 one process a variant (cuBLAS 143.5, 143.9: 1.97x), float16
// 280.1 (1.98x). Nsight Compute: the kernel itself 113.3 us of the row's ~121 (the rest are the
// scratch memsets). The first version, with step 6's unstaged epilogue (N odd: 4-byte stores that
// each touch 8 rows of C), ran 171.6; staging edge and odd-N tiles took it to 283. Ping-pong at
// BN = 128 is 2% faster there (119.3 us against 121.6) but 14% slower at 4096^3, so it is not
// the named point. The price at aligned shapes: 4096^3 557.9-562.3, 0.71x step 7 (kernel 216.0
// us against step 7's 174.0: 42 us to copy 64 MiB in and out and meet at the barrier; the row's
// other ~30 us are the memsets of the 64 MiB of scratch), 8192^3 687.4-717.6 (0.87x step 7),
// 4096x4104x1024 316.3 (0.80x step 7).
/* kernlab
family:       matmul_tc
target:       sm_90a
entry:        wgmma_tma_padded<PINGPONG, BN, STAGES, CU, T>
blocks:       384                     # 1 producer warpgroup (one thread issues), 2 consumers
dtypes:       bfloat16 float16
tune:         PINGPONG = 0, 1; BN = 128, 256; STAGES = 4, 5, 6; CU = 2, 4
params:       BM = PINGPONG ? 16384 / BN : 128
require:      STAGES * ((PINGPONG ? 16384 / BN : 128) * 64 + 64 * BN) * 2 + 1024 + 256 + 20480 <= 232448
shared_bytes: STAGES * (BM * 64 + 64 * BN) * TSIZE + 1024 + 256 + 20480
grid_dims:    min(RESIDENT_BLOCKS, ceil_div(N, BN) * ceil_div(M, BM))
scratch:      T Ap[M * (ceil_div(K, 8) * 8)]; T Bp[K * (ceil_div(N, 8) * 8)]; int32 arrivals[1]
tensor_maps:  Ap[M][ceil_div(K, 8) * 8] box [BM][64] swizzle 128; Bp[K][ceil_div(N, 8) * 8] box [64][64] swizzle 128
summary:      + any shape: A and B copied into 16-byte-aligned scratch, a grid barrier, then the TMA GEMM
points:       wgmma_tma_padded(PINGPONG=0,BN=256,STAGES=4,CU=4) "+ any shape: A and B padded into aligned scratch in the same launch, a grid barrier, then step 7's TMA GEMM"
order:        8
*/
#include <kernlab/wgmma_tma_gemm_sm90.cuh>

__device__ __forceinline__ void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
}
__device__ __forceinline__ int ld_acquire_gpu(const int* p) {
  int v;
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// dst (rows x cp, cp = ceil_div(cols, 8) * 8, 16-byte rows) = src (rows x cols) and zeros, 16-bit
// elements; this thread copies dst's 16-byte chunks first, first + stride, ...
template <int CU>
__device__ __forceinline__ void pad_rows(const unsigned short* __restrict__ src,
                                         uint4* __restrict__ dst, int rows, int cols,
                                         unsigned first, unsigned stride) {
  const unsigned cpr = (unsigned)(cols + 7) / 8, chunks = (unsigned)rows * cpr;
  if (cols % 8 == 0) {  // aligned rows: a plain 16-byte copy
    const uint4* s = reinterpret_cast<const uint4*>(src);
#pragma unroll 1
    for (unsigned i = first; i < chunks; i += CU * stride) {
      uint4 v[CU];
#pragma unroll
      for (int u = 0; u < CU; ++u)
        if (i + u * stride < chunks) v[u] = __ldg(s + i + u * stride);
#pragma unroll
      for (int u = 0; u < CU; ++u)
        if (i + u * stride < chunks) dst[i + u * stride] = v[u];
    }
    return;
  }
  const long long total = (long long)rows * cols;  // src's elements
#pragma unroll 1
  for (unsigned i = first; i < chunks; i += CU * stride) {
    uint4 v0[CU], v1[CU];
    int sh[CU], nv[CU];
#pragma unroll
    for (int u = 0; u < CU; ++u) {
      const unsigned idx = i + u * stride, row = idx / cpr, cc = idx - row * cpr;
      const long long g = (long long)row * cols + 8 * cc;  // the chunk's first element in src
      nv[u] = idx < chunks ? min(8, cols - 8 * (int)cc) : 0;
      const long long lo = g & ~7ll;  // the aligned block (8 elements) that holds element g
      sh[u] = (int)(g - lo);
      v0[u] = v1[u] = make_uint4(0u, 0u, 0u, 0u);
      if (nv[u] <= 0) continue;
      if (lo + 16 <= total) {
        v0[u] = __ldg(reinterpret_cast<const uint4*>(src + lo));
        if (sh[u] + nv[u] > 8) v1[u] = __ldg(reinterpret_cast<const uint4*>(src + lo + 8));
      } else {  // the buffer's last block: element by element
        unsigned e[8];
#pragma unroll
        for (int k = 0; k < 8; ++k) e[k] = k < nv[u] ? src[g + k] : 0u;
        v0[u] = make_uint4(e[0] | e[1] << 16, e[2] | e[3] << 16, e[4] | e[5] << 16,
                           e[6] | e[7] << 16);
        sh[u] = 0;
      }
    }
#pragma unroll
    for (int u = 0; u < CU; ++u) {
      if (i + u * stride >= chunks) continue;
      unsigned x[8] = {v0[u].x, v0[u].y, v0[u].z, v0[u].w, v1[u].x, v1[u].y, v1[u].z, v1[u].w};
      const int q = sh[u] >> 1;  // whole words to skip, then a half word if sh is odd
#pragma unroll
      for (int k = 0; k < 6; ++k) x[k] = q & 2 ? x[k + 2] : x[k];
#pragma unroll
      for (int k = 0; k < 7; ++k) x[k] = q & 1 ? x[k + 1] : x[k];
      const unsigned shift = (sh[u] & 1) * 16;
      unsigned r[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        unsigned w = __funnelshift_r(x[j], x[j + 1], shift);
        if (2 * j + 1 >= nv[u]) w &= 0xFFFFu;
        if (2 * j >= nv[u]) w = 0u;
        r[j] = w;
      }
      dst[i + u * stride] = make_uint4(r[0], r[1], r[2], r[3]);
    }
  }
}

template <int PINGPONG, int BN, int STAGES, int CU, typename T>
__global__ void __launch_bounds__(384, 1)  // 1 block per SM: 168 registers at launch
    wgmma_tma_padded(const T* A, const T* B, float* C, int M, int N, int K, T* Ap, T* Bp,
                     int* arrivals, const __grid_constant__ kl_tensor_map map_a,
                     const __grid_constant__ kl_tensor_map map_b) {
  extern __shared__ unsigned char smem_raw[];
  // Phase 1: A -> Ap, B -> Bp, rows padded with zeros to a multiple of 8 elements.
  const unsigned first = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
  pad_rows<CU>(reinterpret_cast<const unsigned short*>(A), reinterpret_cast<uint4*>(Ap), M, K,
               first, stride);
  pad_rows<CU>(reinterpret_cast<const unsigned short*>(B), reinterpret_cast<uint4*>(Bp), K, N,
               first, stride);
  // Phase 2: the grid barrier (every block is resident: the header's grid_dims).
  fence_proxy_async_global();  // this thread's generic stores, before the TMA's reads of them
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    atomicAdd(arrivals, 1);
    while (ld_acquire_gpu(arrivals) < (int)gridDim.x) {
    }
    fence_proxy_async_global();  // thread 0 is the producer thread that issues the TMA copies
  }
  __syncthreads();
  // Phase 3: step 7's GEMM from the padded copies.
  wgmma_tma_gemm<PINGPONG, 1, BN, STAGES, T>(map_a, map_b, C, M, N, K, smem_raw);
}
