// CPU emulation of the scan family's kernels and reference (see run_scan.sh and scan_prelude.hpp):
// every variant at every block size it has, int32 and float32, exact and random inputs (the
// family's: whole numbers in [-8, 8], eighths in [-4, 4]), at n = 1, 7, a tile - 1, a tile, a tile
// + 1 and a few tiles and a bit, blocks started in a shuffled order a few at a time, status stores
// seen at once or late; the look-back kernels also with every inclusive prefix but tile 0's held
// back, so that each tile walks back to tile 0 through aggregates alone (more than 32 tiles:
// several windows). Each result is compared exactly with a sequential 64-bit scan; the buffers
// are exactly n elements (AddressSanitizer catches a read or write past them), the workspace
// exactly family.toml's size, and afterwards every tile must have published its inclusive
// prefix and the counter must equal the grid.
#include "scan_prelude.hpp"
#include "scan_kernels.hpp"

#include <cmath>
#include <string>

template <typename T> struct wide_of;
template <> struct wide_of<int> { using type = long long; };
template <> struct wide_of<float> { using type = double; };

template <typename T> T* alloc(std::size_t n) {  // exactly n elements, 256-byte aligned
  void* p = nullptr;
  if (posix_memalign(&p, 256, std::max<std::size_t>(n, 1) * sizeof(T)) != 0) std::abort();
  return static_cast<T*>(p);
}

// The family's generators: exact = whole numbers in [-8, 8]; random = k / 8, k in [-32, 32]
// (int32: its integer part).
template <typename T> std::vector<T> inputs(long long n, bool random, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<T> v(n);
  for (auto& x : v) {
    const int k = static_cast<int>(rng() % (random ? 65 : 17)) - (random ? 32 : 8);
    x = static_cast<T>(random ? k / 8.0 : k);  // int32: truncated towards zero
  }
  return v;
}

int g_runs = 0;

template <typename T, typename K>
int check(const std::string& name, K kernel, unsigned block, long long tile, long long n,
          int status_mode, unsigned resident, unsigned seed, bool random) {
  using W = typename wide_of<T>::type;
  const std::vector<T> x = inputs<T>(n, random, seed);
  T* in = alloc<T>(n);
  T* out = alloc<T>(n);
  std::copy(x.begin(), x.end(), in);
  std::memset(out, 0x7f, n * sizeof(T));
  const std::size_t words = 32 + (n + 127) / 128;
  auto* ws = alloc<unsigned long long>(words);
  std::memset(ws, 0, words * 8);
  const unsigned grid = static_cast<unsigned>((n + tile - 1) / tile);
  g_status.start(status_mode, ws + 32);
  launch(kernel, grid, block, resident, seed, static_cast<const T*>(in), out, ws, n);
  g_status.finish();
  ++g_runs;

  int bad = 0;
  W run = 0, want = 0;
  long long wrong = 0, first = -1;
  for (long long i = 0; i < n; ++i) {
    run += static_cast<W>(x[i]);
    if (out[i] != static_cast<T>(run)) {
      if (first < 0) first = i, want = run;
      ++wrong;
    }
  }
  const unsigned counter = static_cast<unsigned>(ws[0]);
  long long unpublished = 0;
  for (unsigned t = 0; t < grid; ++t) unpublished += (ws[32 + t] >> 32) != 2;
  if (wrong || counter != grid || unpublished) {
    bad = 1;
    std::fprintf(stderr,
                 "WRONG %s block %u %s n=%lld mode %d resident %u seed %u %s: %lld wrong (first "
                 "%lld: got %g want %g), counter %u of %u, %lld tiles without a prefix\n",
                 name.c_str(), block, T(0.5) == 0 ? "int32" : "float32", n, status_mode,
                 resident, seed, random ? "random" : "exact", wrong, first,
                 first >= 0 ? static_cast<double>(out[first]) : 0.0, static_cast<double>(want),
                 counter, grid, unpublished);
  }
  std::free(in);
  std::free(out);
  std::free(ws);
  return bad;
}

// n = 1, 7, tile - 1, tile, tile + 1 and 3 tiles + 5, each once: the status modes in turn, exact
// and random inputs in turn, and a different block order each time.
template <typename T, typename K>
int sizes(const std::string& name, K kernel, unsigned block, long long tile,
          std::vector<int> modes, unsigned seed) {
  int bad = 0, k = 0;
  for (long long n : {1LL, 7LL, tile - 1, tile, tile + 1, 3 * tile + 5}) {
    if (n < 1) continue;
    bad += check<T>(name, kernel, block, tile, n, modes[k % modes.size()], 3, seed + k, k % 2);
    ++k;
  }
  return bad;
}

template <unsigned BLOCK, typename T> int chained() {
  int bad = 0;
  bad += sizes<T>("hillis_steele", hillis_steele<BLOCK, T>, BLOCK, BLOCK, {0, 1}, BLOCK);
  bad += sizes<T>("blelloch", blelloch<BLOCK, T>, BLOCK, 2 * BLOCK, {1, 0}, BLOCK + 7);
  return bad;
}

// A look-back kernel: the sizes; with `long_runs`, also 70 tiles with every prefix but tile 0's
// held back (tile 69 looks back over three windows), and 40 tiles with late stores.
template <typename T, typename K>
int lookback(const std::string& name, K kernel, unsigned block, long long tile,
             bool long_runs = false) {
  int bad = sizes<T>(name, kernel, block, tile, {0, 1, 2}, block + static_cast<unsigned>(tile));
  if (long_runs) {
    bad += check<T>(name, kernel, block, tile, 70 * tile - 3, 2, 4, 99, false);
    bad += check<T>(name, kernel, block, tile, 40 * tile + 1, 1, 6, 98, true);
  }
  return bad;
}

template <typename T> int reference() {
  int bad = 0;
  for (long long n : {1LL, 2LL, 7LL, 1000LL, 4099LL, 100003LL})
    for (unsigned grid : {1u, 3u, 7u})
      for (unsigned block : {32u, 1024u}) {
        const std::vector<T> x = inputs<T>(n, n % 2, static_cast<unsigned>(n + grid));
        T* in = alloc<T>(n);
        T* out = alloc<T>(n);
        std::copy(x.begin(), x.end(), in);
        std::memset(out, 0x7f, n * sizeof(T));
        launch(scan_reference<T>, grid, block, 1, 5, static_cast<const T*>(in), out,
               static_cast<unsigned long long*>(nullptr), n);
        typename wide_of<T>::type run = 0;
        long long wrong = 0;
        for (long long i = 0; i < n; ++i) {
          run += x[i];
          wrong += out[i] != static_cast<T>(run);
        }
        if (wrong) {
          ++bad;
          std::fprintf(stderr, "WRONG reference n=%lld grid %u block %u: %lld wrong\n", n, grid,
                       block, wrong);
        }
        std::free(in);
        std::free(out);
        ++g_runs;
      }
  return bad;
}

template <typename T> int all() {
  int bad = reference<T>();
  std::fprintf(stderr, "reference: %d wrong\n", bad);
  bad += chained<128, T>() + chained<256, T>() + chained<512, T>() + chained<1024, T>();
  std::fprintf(stderr, "chained: %d wrong so far\n", bad);
  bad += lookback<T>("decoupled_lookback", decoupled_lookback<128, 32, T>, 128, 4096, true);
  bad += lookback<T>("decoupled_lookback", decoupled_lookback<256, 16, T>, 256, 4096);
  bad += lookback<T>("decoupled_lookback", decoupled_lookback<512, 8, T>, 512, 4096);
  bad += lookback<T>("decoupled_lookback", decoupled_lookback<1024, 4, T>, 1024, 4096);
  std::fprintf(stderr, "decoupled_lookback: %d wrong so far\n", bad);
  // lookback_tunable: every VEC, LOADS from 1 to 16, every hint, every block.
  bad += lookback<T>("lookback_tunable[1,1,0]", lookback_tunable<128, 1, 1, 0, T>, 128, 128, true);
  bad += lookback<T>("lookback_tunable[1,16,1]", lookback_tunable<256, 1, 16, 1, T>, 256, 4096);
  bad += lookback<T>("lookback_tunable[2,2,2]", lookback_tunable<128, 2, 2, 2, T>, 128, 512);
  bad += lookback<T>("lookback_tunable[2,8,0]", lookback_tunable<512, 2, 8, 0, T>, 512, 8192);
  bad += lookback<T>("lookback_tunable[4,1,1]", lookback_tunable<1024, 4, 1, 1, T>, 1024, 4096);
  bad += lookback<T>("lookback_tunable[4,8,2]", lookback_tunable<256, 4, 8, 2, T>, 256, 8192);
  std::fprintf(stderr, "lookback_tunable: %d wrong so far\n", bad);
  return bad;
}

int main() {
  int bad = all<int>();
  std::fprintf(stderr, "int32 done: %d wrong\n", bad);
  bad += all<float>();
  std::printf("scan emulation: %d launches, %d wrong\n", g_runs, bad);
  return bad != 0;
}
