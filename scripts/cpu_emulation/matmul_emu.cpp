// CPU emulation of kernels_src/matmul/tunable.cu (see run.sh): every block's threads are OS
// threads, __syncthreads a std::barrier, shared memory static arrays poisoned with NaN per
// block, cp.async a per-thread queue landing at issue (mode 0) or at the wait that completes
// it (mode 1). Built with ThreadSanitizer (a stage read and written without a barrier between
// is a data race) and with AddressSanitizer + UBSan (a read past a matrix, a signed overflow).
// Exact inputs (multiples of 1/4), C poisoned with NaN, compared element by element.
#include "matmul_prelude.hpp"
#include "matmul_kernel.hpp"
#include <string>

using kfn = void (*)(const float*, const float*, float*, int, int, int);
struct cfg { int block, bm, bn; kfn f; std::string name; };
#define CFG(BL, BM, BN, BK, WM, WN, TM, TN, ST, AS, V, MB) \
  {BL, BM, BN, &tunable<BL, BM, BN, BK, WM, WN, TM, TN, ST, AS, V, MB>, #BL "," #BM "," #BN "," #BK "," #WM "," #WN "," #TM "," #TN "," #ST "," #AS "," #V},
static cfg cfgs[] = {
#include "configs.inc"
};

static float* alloc(size_t n, size_t offset_floats) {
  // 256-byte aligned plus an offset (in floats), to exercise the misaligned-pointer paths.
  // Exactly n floats after the offset, so that the sanitizer's redzone starts at the end.
  void* p = nullptr;
  if (posix_memalign(&p, 256, (n + offset_floats) * 4)) abort();
  return (float*)p + offset_floats;
}

static int run(const cfg& c, int M, int N, int K, int off) {
  float* A = alloc((size_t)M * K, off);
  float* B = alloc((size_t)K * N, off);
  float* C = alloc((size_t)M * N, off);
  for (int i = 0; i < M * K; ++i) A[i] = (float)((i * 7 + 3) % 9 - 4) / 4;
  for (int i = 0; i < K * N; ++i) B[i] = (float)((i * 5 + 1) % 11 - 5) / 4;
  for (int i = 0; i < M * N; ++i) C[i] = NAN;
  const int gx = (N + c.bn - 1) / c.bn, gy = (M + c.bm - 1) / c.bm;
  gridDim = {(unsigned)gx, (unsigned)gy, 1};
  blockDim = {(unsigned)c.block, 1, 1};
  for (int by = 0; by < gy; ++by)
    for (int bx = 0; bx < gx; ++bx) {
      std::barrier<> bar(c.block);
      g_bar = &bar;
      std::vector<std::unique_ptr<std::barrier<>>> warp_bars;
      for (int w = 0; w < c.block / 32; ++w) warp_bars.push_back(std::make_unique<std::barrier<>>(32));
      g_warp_bars = &warp_bars;
      std::vector<std::thread> ts;
      for (int t = 0; t < c.block; ++t)
        ts.emplace_back([&, t] {
          threadIdx = {(unsigned)t, 0, 0};
          blockIdx = {(unsigned)bx, (unsigned)by, 0};
          c.f(A, B, C, M, N, K);
          // Copies never waited for (empty groups are fine): the kernel exited with data in
          // flight, which the pipeline's invariant says cannot happen.
          size_t pending = t_open.size();
          for (auto& g : t_groups) pending += g.size();
          if (pending) { fprintf(stderr, "cp.async copies outstanding at exit: %zu\n", pending); abort(); }
          t_groups.clear(); t_open.clear();
        });
      for (auto& th : ts) th.join();
    }
  int bad = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += (double)A[m * K + k] * B[k * N + n];
      if (!(C[m * N + n] == (float)s)) {
        if (bad < 3) fprintf(stderr, "  C[%d][%d] = %g, want %g\n", m, n, C[m * N + n], s);
        ++bad;
      }
    }
  free(A - off); free(B - off); free(C - off);
  return bad;
}

int main(int argc, char** argv) {
  const int modes[] = {0, 1};
  struct shape { int M, N, K; } shapes[] = {{1, 1, 1}, {3, 5, 7}, {17, 33, 9}, {64, 64, 16},
                                           {65, 129, 31}, {130, 67, 40}, {129, 258, 24},
                                           {257, 130, 19}, {128, 256, 32}};
  int fails = 0, runs = 0;
  const int only = argc > 1 ? atoi(argv[1]) : -1;
  for (size_t i = 0; i < sizeof(cfgs) / sizeof(cfgs[0]); ++i) {
    if (only >= 0 && (int)i != only) continue;
    for (int mode : modes) {
      g_cp_mode = mode;
      for (auto s : shapes)
        for (int off : {0, 1}) {
          if (off && (s.M * s.N > 20000)) continue;
          const int bad = run(cfgs[i], s.M, s.N, s.K, off);
          ++runs;
          if (bad) {
            ++fails;
            fprintf(stderr, "WRONG cfg %s mode %d shape %dx%dx%d off %d: %d wrong\n",
                    cfgs[i].name.c_str(), mode, s.M, s.N, s.K, off, bad);
          }
        }
    }
    fprintf(stderr, "cfg %zu (%s) done\n", i, cfgs[i].name.c_str());
  }
  printf("%d runs, %d wrong\n", runs, fails);
  return fails != 0;
}
