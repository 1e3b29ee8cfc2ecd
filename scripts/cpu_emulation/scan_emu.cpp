// CPU emulation of the scan family's kernels and reference (see run_scan.sh and scan_prelude.hpp):
// the reference, and every kernel file run_scan.sh hands gen_scan.py (all of kernels_src/scan:
// hillis_steele, blelloch, decoupled_lookback, lookback_tunable, smem_lookback_tunable; and
// drafts named on its command line, e.g. warp_lookback.cu, staged_lookback.cu), each at the
// points its kernlab header allows (scan_points.hpp: every block with its params; of a tunable
// file, gen_scan.py's sample, every block with every pair of tunable values, or every point with
// -DSCAN_ALL_POINTS) and launched as its header says (grid_dims and shared_bytes evaluated for
// the point; RESIDENT_BLOCKS 2 to 6 in turn where grid_dims uses it, those blocks all started at
// once). int32 and float32, exact and random inputs (the family's: whole numbers in [-8, 8],
// eighths in [-4, 4]), at n = 1, 7, a tile - 1, a tile, a tile + 1 and 3 tiles + 5, with tiles
// as each file counts them (one status word each: by default a block's elements, the largest n
// of a one-block grid; warp_lookback's a warp's 32 * VEC * LOADS, and where a block has several
// tiles also a block's elements - 1 and + 1 and two blocks and a tile; where the grid is capped
// by RESIDENT_BLOCKS also 6 and 11 tiles and a bit, so that blocks loop over several tiles),
// blocks started in a shuffled order a few at a time (in index order for a kernel that takes its
// tile from blockIdx.x: smem_lookback's ORDER 1), status stores seen at once or late; the
// look-back kernels also with every inclusive prefix but tile 0's held back, so that each tile
// walks back to tile 0 through aggregates alone (each file's first point or two, LONG in
// scan_points.hpp, also with 70 such tiles, several windows, and 40 tiles with late stores).
// Each result is compared exactly with a sequential 64-bit scan; the buffers are exactly n
// elements (AddressSanitizer catches a read or write past them), the workspace exactly
// family.toml's size (32 + ceil_div(N, 128) words), the dynamic shared memory exactly the
// header's shared_bytes. Afterwards every tile must have published its inclusive prefix, with the
// right value; no other workspace word may have been written (words 1..31, the counter's high
// half, status words past the last tile); the counter must equal the grid (0 for ORDER 1 of
// smem_lookback; for staged_lookback grid * STAGES + tiles: each block claims STAGES - 1 tiles
// ahead, one a tile it scans and one past the end that stops it; another persistent kernel: at
// least the tile count); and the cp.async emulation must have found no misuse (a thread ending
// with copies in flight, a misaligned copy, one outside the block's shared memory).
#include "scan_prelude.hpp"
#include "scan_kernels.hpp"
#include "scan_points.hpp"

#include <chrono>
#include <cmath>
#include <functional>
#include <set>
#include <sstream>
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

double seconds() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

// Which points run (environment, for run_scan.sh): SCAN_ONLY = the files to run, comma-separated
// (default: all); SCAN_STRIDE = k: only every k-th point of each file (default 1); SCAN_LONG = 0:
// no long runs; SCAN_TYPES = int32, float32 or both (default); SCAN_VERBOSE = 1: each point's
// time.
std::string env(const char* name, const char* dflt) {
  const char* v = std::getenv(name);
  return v && *v ? v : dflt;
}
bool wanted(const std::string& file) {
  const std::string only = "," + env("SCAN_ONLY", "all") + ",";
  return only == ",all," || only.find("," + file + ",") != std::string::npos;
}
const int g_stride = std::max(1, std::atoi(env("SCAN_STRIDE", "1").c_str()));
const bool g_long = env("SCAN_LONG", "1") != "0";
const bool g_verbose = env("SCAN_VERBOSE", "0") != "0";

// A point's launch, from its header (scan_points.hpp) and the file's tile.
struct geometry {
  unsigned block;
  long long tile;  // elements a tile, which publishes one status word
  std::function<long long(long long n, long long resident_blocks)> grid;  // grid_dims
  bool persistent = false;        // grid_dims capped by RESIDENT_BLOCKS: all blocks at once
  long long counter_per_block = 1;  // the counter ends at grid * this + tiles * the next
  long long counter_per_tile = 0;   // (-1: at least the tile count)
  std::size_t shared_bytes = 0;  // dynamic shared memory a block
  bool in_order = false;  // blocks start in index order (the tile is blockIdx.x)
};

int g_runs = 0;

// One launch, checked. `resident`: blocks running at once (persistent: RESIDENT_BLOCKS, and the
// grid's blocks all run at once).
template <typename T, typename K>
int check(const std::string& name, K kernel, const geometry& g, long long n, int status_mode,
          unsigned resident, unsigned seed, bool random) {
  using W = typename wide_of<T>::type;
  const std::vector<T> x = inputs<T>(n, random, seed);
  T* in = alloc<T>(n);
  T* out = alloc<T>(n);
  std::copy(x.begin(), x.end(), in);
  std::memset(out, 0x7f, n * sizeof(T));
  const std::size_t words = 32 + (n + 127) / 128;  // family.toml's workspace
  auto* ws = alloc<unsigned long long>(words);
  std::memset(ws, 0, words * 8);
  const long long tiles = (n + g.tile - 1) / g.tile;
  const auto grid = static_cast<unsigned>(g.grid(n, resident));
  if (g.persistent) resident = grid;
  const long long expect_counter =
      g.counter_per_tile < 0 ? tiles : grid * g.counter_per_block + tiles * g.counter_per_tile;
  const long long errors_before = g_emu_errors.load();
  g_emu_printed = 0;
  g_dynamic_shared_bytes = g.shared_bytes;
  g_blocks_in_order = g.in_order;
  g_status.start(status_mode, ws + 32);
  launch(kernel, grid, g.block, resident, seed, static_cast<const T*>(in), out, ws, n);
  g_status.finish();
  g_dynamic_shared_bytes = 0;
  g_blocks_in_order = false;
  ++g_runs;
  const long long emu_errors = g_emu_errors.load() - errors_before;

  W run = 0, want = 0;
  long long wrong = 0, first = -1, unpublished = 0, bad_prefix = 0, first_bad_tile = -1;
  unsigned long long first_bad_word = 0;
  W first_bad_want = 0;
  const auto value = [](unsigned long long word) {
    const auto bits = static_cast<uint32_t>(word);
    T v;
    std::memcpy(&v, &bits, sizeof(T));
    return v;
  };
  for (long long i = 0; i < n; ++i) {
    run += static_cast<W>(x[i]);
    if (out[i] != static_cast<T>(run)) {
      if (first < 0) first = i, want = run;
      ++wrong;
    }
    if (i == n - 1 || (i + 1) % g.tile == 0) {  // the end of tile i / tile: its inclusive prefix
      const unsigned long long word = ws[32 + i / g.tile];
      if ((word >> 32) != 2) {
        ++unpublished;
      } else if (value(word) != static_cast<T>(run)) {
        if (first_bad_tile < 0)
          first_bad_tile = i / g.tile, first_bad_word = word, first_bad_want = run;
        ++bad_prefix;
      }
    }
  }
  long long stray = (ws[0] >> 32) != 0;  // words no variant writes
  for (std::size_t w = 1; w < 32; ++w) stray += ws[w] != 0;
  for (std::size_t w = 32 + tiles; w < words; ++w) stray += ws[w] != 0;
  const long long counter = static_cast<unsigned>(ws[0]);
  const bool counter_ok = g.counter_per_tile < 0 ? counter >= tiles : counter == expect_counter;
  const int bad = wrong || !counter_ok || unpublished || bad_prefix || stray || emu_errors;
  if (bad) {
    std::fprintf(stderr,
                 "WRONG %s block %u %s n=%lld grid %u tiles %lld mode %d resident %u seed %u %s: "
                 "%lld wrong (first %lld: got %g want %g), counter %lld (want %s%lld), %lld tiles "
                 "without a prefix, %lld with a wrong one",
                 name.c_str(), g.block, T(0.5) == 0 ? "int32" : "float32", n, grid, tiles,
                 status_mode, resident, seed, random ? "random" : "exact", wrong, first,
                 first >= 0 ? static_cast<double>(out[first]) : 0.0, static_cast<double>(want),
                 counter, g.counter_per_tile < 0 ? ">= " : "", expect_counter, unpublished,
                 bad_prefix);
    if (first_bad_tile >= 0)
      std::fprintf(stderr, " (first: tile %lld, flag %llu value %g, want %g)", first_bad_tile,
                   first_bad_word >> 32, static_cast<double>(value(first_bad_word)),
                   static_cast<double>(first_bad_want));
    std::fprintf(stderr, ", %lld stray workspace words, %lld emulation errors\n", stray,
                 emu_errors);
  }
  std::free(in);
  std::free(out);
  std::free(ws);
  return bad;
}

// n = 1, 7, a tile - 1, a tile, a tile + 1 and 3 tiles + 5; where a block has several tiles
// (warp_lookback: a warp's), also a block's elements - 1 and + 1 and 2 blocks + a tile + 6; for a
// persistent kernel also 11 tiles + 6 and 6 tiles + 2 (more tiles than blocks: each block loops,
// and the last vector is half full). Each once: the status modes in turn, exact and random inputs
// in turn, a different block order each time, and for a persistent kernel 2 to 6 blocks in turn.
template <typename T, typename K>
int sizes(const std::string& name, K kernel, const geometry& g, std::vector<int> modes,
          unsigned seed) {
  const long long t = g.tile;
  std::vector<long long> ns = {1, 7, t - 1, t, t + 1, 3 * t + 5};
  if (!g.persistent) {  // a block's elements: the largest n of a one-block grid
    long long lo = 1, hi = 1;
    while (hi < (1LL << 40) && g.grid(hi * 2, 3) == 1) hi *= 2;
    hi *= 2;
    while (hi - lo > 1) (g.grid((lo + hi) / 2, 3) == 1 ? lo : hi) = (lo + hi) / 2;
    if (lo > t)
      for (long long n : {lo - 1, lo + 1, 2 * lo + t + 6}) ns.push_back(n);
  } else {
    ns.insert(ns.end(), {11 * t + 6, 6 * t + 2});
  }
  int bad = 0, k = 0;
  for (long long n : ns) {
    if (n < 1) continue;
    const unsigned resident = g.persistent ? 2 + (seed + k) % 5 : 3;
    bad += check<T>(name, kernel, g, n, modes[k % modes.size()], resident, seed + k, k % 2);
    ++k;
  }
  return bad;
}

// A look-back kernel: the sizes; with `long_runs`, also 70 tiles with every prefix but tile 0's
// held back (tile 69 looks back over three windows), and 40 tiles with late stores (persistent
// kernels: 4 and 6 blocks).
template <typename T, typename K>
int lookback(const std::string& name, K kernel, const geometry& g, bool long_runs) {
  int bad = sizes<T>(name, kernel, g, {0, 1, 2}, g.block + static_cast<unsigned>(g.tile));
  if (long_runs && g_long) {
    bad += check<T>(name, kernel, g, 70 * g.tile - 3, 2, 4, 99, false);
    bad += check<T>(name, kernel, g, 40 * g.tile + 1, 1, 6, 98, true);
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

// What a file's header does not say. By default a tile is a block's, the largest n of a
// one-block grid (RESIDENT_BLOCKS unbounded), the kernel looks back (status modes 0, 1 and 2, the
// long runs), the counter ends at the grid (persistent: at least the tile count), and blocks
// start in a shuffled order.
template <class A> long long tile_of(const A&, const geometry& g) {
  long long lo = 1, hi = 2;
  while (hi < (1LL << 40) && g.grid(hi, 1LL << 40) == 1) hi *= 2;
  while (hi - lo > 1) (g.grid((lo + hi) / 2, 1LL << 40) == 1 ? lo : hi) = (lo + hi) / 2;
  return lo;
}
template <class A> bool chained(const A&) { return false; }
template <class A> void rules(const A&, geometry& g) {
  if (g.persistent) g.counter_per_block = 0, g.counter_per_tile = -1;  // -1: at least the tiles
}
#ifdef KL_HAVE_hillis_steele  // chained: each tile waits for its predecessor's inclusive prefix
bool chained(const kl_args_hillis_steele&) { return true; }
#endif
#ifdef KL_HAVE_blelloch
bool chained(const kl_args_blelloch&) { return true; }
#endif
#ifdef KL_HAVE_warp_lookback  // a tile is a warp's run
long long tile_of(const kl_args_warp_lookback& a, const geometry&) { return 32 * a.VEC * a.LOADS; }
#endif
#ifdef KL_HAVE_staged_lookback  // STAGES - 1 tiles claimed ahead, one a tile, one past the end
void rules(const kl_args_staged_lookback& a, geometry& g) {
  g.counter_per_block = a.STAGES, g.counter_per_tile = 1;
}
#endif
#ifdef KL_HAVE_smem_lookback  // ORDER 1: the tile is blockIdx.x, no counter, blocks in order
void rules(const kl_args_smem_lookback& a, geometry& g) {
  if (a.ORDER == 1) g.counter_per_block = 0, g.in_order = true;
}
#endif

// Each file's points (scan_points.hpp: KL_SAMPLE_, or KL_POINTS_ with -DSCAN_ALL_POINTS), every
// g_stride-th, launched as its header says.
#ifdef SCAN_ALL_POINTS
#define KL_LIST(entry) KL_POINTS_##entry
#else
#define KL_LIST(entry) KL_SAMPLE_##entry
#endif
struct file_run {
  const char* file;
  int k = 0, points = 0, bad = 0;
  double t0 = seconds();
};
template <typename T, typename K, typename A>
void run_point(file_run& f, const char* name, K kernel, const A& a, bool long_runs) {
  if (f.k++ % g_stride) return;
  const double t0 = seconds();
  geometry g{static_cast<unsigned>(a.BLOCK), 0,
             [a](long long n, long long r) { return kl_grid(a, n, r); }, kl_persistent(a), 1, 0,
             static_cast<std::size_t>(kl_shared(a, sizeof(T)))};
  g.tile = tile_of(a, g);
  rules(a, g);
  const auto b = static_cast<unsigned>(a.BLOCK);
  const int bad = chained(a) ? sizes<T>(name, kernel, g, {0, 1}, b)
                             : lookback<T>(name, kernel, g, long_runs);
  ++f.points;
  f.bad += bad;
  if (g_verbose)
    std::fprintf(stderr, "  %s block %u (tile %lld): %d wrong, %.1f s\n", name, b, g.tile, bad,
                 seconds() - t0);
}
#define KL_RUN_POINT(E, NAME, LONG, ...) \
  run_point<T>(f, NAME, E<__VA_ARGS__, T>, kl_args_##E{__VA_ARGS__}, LONG);
#define KL_RUN_FILE(E)                                                                         \
  if (wanted(#E)) {                                                                            \
    file_run f{#E};                                                                            \
    KL_LIST(E)(KL_RUN_POINT)                                                                   \
    bad += f.bad;                                                                              \
    std::fprintf(stderr, "%s %s: %d points, %d wrong (%.0f s)\n",                             \
                 T(0.5) == 0 ? "int32" : "float32", f.file, f.points, f.bad, seconds() - f.t0); \
  }

template <typename T> int files() {
  int bad = 0;
  KL_ENTRIES(KL_RUN_FILE)
  return bad;
}

int main() {
  const double t0 = seconds();
  int bad = 0;
  const std::string types = env("SCAN_TYPES", "int32,float32");
  const auto all = [&](auto zero) {
    using T = decltype(zero);
    const char* name = T(0.5) == 0 ? "int32" : "float32";
    if (wanted("reference")) {
      const double t = seconds();
      const int b = reference<T>();
      bad += b;
      std::fprintf(stderr, "%s reference: %d wrong (%.0f s)\n", name, b, seconds() - t);
    }
    bad += files<T>();
  };
  if (types.find("int32") != std::string::npos) all(0);
  if (types.find("float32") != std::string::npos) all(0.0f);
  std::printf("scan emulation: %d launches, %d wrong, %.0f s\n", g_runs, bad, seconds() - t0);
  return bad != 0;
}
