// CPU emulation of kernels_src/reduce/reduce_tunable.cu (see run.sh): blocks one after another,
// their threads as OS threads, warp shuffles through per-warp barriers, the hinted loads as
// plain loads. Checks the result (exact) and that the workspace's counter is zero afterwards,
// twice in a row, for every op and dtype, several n and grid sizes.
#include "reduce_prelude.hpp"
#include <kernlab/reduce.cuh>
#include "reduce_kernel.hpp"
#include <string>
#include <functional>

template <typename T> T make(long i) {
  if constexpr (sizeof(T) == 4 && T(0.5) == 0) return (T)((i * 2654435761u) >> 3);  // int: sums wrap
  else return (T)((long)((i * 7919) % 255) - 127) / 256;
}
template <unsigned BLOCK, int VEC, int U, int ACC, int HINT, typename T, typename OP>
int run(unsigned n, unsigned resident) {
  const unsigned TILE = VEC * U * BLOCK, tiles = (n + TILE - 1) / TILE;
  const unsigned grid = std::max(1u, std::min(tiles, resident));
  std::vector<T> in((size_t)tiles * TILE, OP::identity());
  for (unsigned i = 0; i < n; ++i) in[i] = make<T>(i);
  OP op;
  T ref = OP::identity();
  for (unsigned i = 0; i < n; ++i) ref = op(ref, in[i]);
  std::vector<uint64_t> ws((16 + grid * sizeof(T) + 7) / 8 + 1, 0);
  int bad = 0;
  for (int rep = 0; rep < 2; ++rep) {
    T out = T(-12345);
    gridDim = {grid, 1, 1}; blockDim = {BLOCK, 1, 1};
    for (unsigned b = 0; b < grid; ++b) {
      std::barrier<> bar(BLOCK); g_bar = &bar;
      g_warp_bars.clear();
      for (unsigned w = 0; w < BLOCK / 32; ++w) g_warp_bars.emplace_back(new std::barrier<>(32));
      std::vector<std::thread> ts;
      for (unsigned t = 0; t < BLOCK; ++t)
        ts.emplace_back([&, t, b] { threadIdx = {t, 0, 0}; blockIdx = {b, 0, 0};
          reduce_tunable<BLOCK, VEC, U, ACC, HINT, T, OP>(in.data(), &out, n, ws.data()); });
      for (auto& th : ts) th.join();
    }
    const bool ws_zero = ws[0] == 0 && ws[1] == 0;  // the counter; partials may stay
    if (std::memcmp(&out, &ref, sizeof(T)) || !ws_zero) {
      ++bad;
      fprintf(stderr, "WRONG B%u V%d U%d A%d H%d n=%u grid=%u rep %d: got %g want %g ws_zero %d\n",
              BLOCK, VEC, U, ACC, HINT, n, grid, rep, (double)out, (double)ref, ws_zero);
    }
  }
  return bad;
}
template <unsigned BLOCK, int VEC, int U, int ACC>
int all() {
  int bad = 0;
  for (unsigned n : {1u, 2u, 1000u, 4097u, 65539u})
    for (unsigned res : {1u, 3u, 7u}) {
      bad += run<BLOCK, VEC, U, ACC, 0, int, kl::sum<int>>(n, res);
      bad += run<BLOCK, VEC, U, ACC, 1, float, kl::sum<float>>(n, res);
      bad += run<BLOCK, VEC, U, ACC, 0, int, kl::min<int>>(n, res);
      bad += run<BLOCK, VEC, U, ACC, 1, int, kl::max<int>>(n, res);
      bad += run<BLOCK, VEC, U, ACC, 0, float, kl::max<float>>(n, res);
      bad += run<BLOCK, VEC, U, ACC, 1, float, kl::min<float>>(n, res);
    }
  fprintf(stderr, "B%u V%d U%d A%d: %d wrong\n", BLOCK, VEC, U, ACC, bad);
  return bad;
}
int main() {
  int bad = 0;
  bad += all<128, 4, 4, 2>();
  bad += all<256, 1, 16, 4>();
  bad += all<128, 2, 8, 4>();
  bad += all<512, 4, 1, 1>();
  bad += all<1024, 4, 8, 4>();
  bad += all<128, 4, 2, 2>();
  printf("%d wrong\n", bad);
  return bad != 0;
}
