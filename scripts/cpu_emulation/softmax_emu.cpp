// CPU emulation of softmax's steps 4 and 5 (run_softmax.sh): each at every block size of its
// header, on 1 to 3 rows of lengths at and around the columns a block (4096) or a warp (1024)
// holds on chip, with the float4 path (COLS a multiple of 4, aligned buffers), the scalar one
// (COLS not a multiple of 4, or x one float off alignment) and the tail past the on-chip columns;
// exact inputs (quarters in [-128, 128]) and random ones (uniform in [-10, 10]). Buffers are
// exactly ROWS * COLS floats (AddressSanitizer catches a read or write past them) and y starts
// as NaN (an element left unwritten fails). Each y is compared with a double softmax in float32
// ulps at the reference's value; family.toml's rule is at most 32.
#include "scan_prelude.hpp"

#include <cmath>
#include <limits>
#include <string>

inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
namespace roc {
#include "row_on_chip.hpp"
}
namespace wroc {
#include "warp_row_on_chip.hpp"
}

float* alloc(std::size_t n) {  // exactly n floats, 256-byte aligned
  void* p = nullptr;
  if (posix_memalign(&p, 256, std::max<std::size_t>(n, 1) * sizeof(float)) != 0) std::abort();
  return static_cast<float*>(p);
}

double ulps(float got, double ref) {
  if (std::isnan(got)) return std::numeric_limits<double>::infinity();
  const float r = static_cast<float>(ref);
  const double ulp = std::nextafter(std::fabs(r), std::numeric_limits<float>::infinity()) - std::fabs(r);
  return std::fabs(got - ref) / ulp;
}

int failures = 0;
double worst = 0;

template <class K>
void check(const char* name, K kernel, unsigned grid, unsigned block, int rows, int cols,
           bool random, int offset) {
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  float* xb = alloc(n + offset);
  float* yb = alloc(n + offset);
  float* x = xb + offset;
  float* y = yb + offset;
  std::mt19937 rng(rows * 7919 + cols);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = random ? std::uniform_real_distribution<float>(-10, 10)(rng)
                  : static_cast<float>(static_cast<int>(rng() % 1025) - 512) / 4;
  for (std::size_t i = 0; i < n; ++i) y[i] = std::numeric_limits<float>::quiet_NaN();
  launch(kernel, grid, block, 1, 1, static_cast<const float*>(x), y, rows, cols);
  double bad = 0;
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<std::size_t>(r) * cols;
    double m = xr[0], s = 0;
    for (int c = 0; c < cols; ++c) m = std::max(m, static_cast<double>(xr[c]));
    for (int c = 0; c < cols; ++c) s += std::exp(static_cast<double>(xr[c]) - m);
    for (int c = 0; c < cols; ++c)
      bad = std::max(bad, ulps(y[static_cast<std::size_t>(r) * cols + c],
                               std::exp(static_cast<double>(xr[c]) - m) / s));
  }
  worst = std::max(worst, bad);
  if (!(bad <= 32)) {
    ++failures;
    std::printf("FAIL %s block %u, %d x %d, %s, offset %d: %g ulps\n", name, block, rows, cols,
                random ? "random" : "exact", offset, bad);
  }
  free(xb);
  free(yb);
}

int main() {
  const int lengths[] = {1, 3, 4, 33, 1000, 1023, 1024, 1025, 1028, 4095, 4096, 4097, 4100, 8196};
  int runs = 0;
  for (const bool random : {false, true})
    for (const int cols : lengths)
      for (const int offset : {0, 1}) {
        if (offset && cols % 4) continue;  // already the scalar path
        const int rows = cols > 4096 ? 1 : 3;
        check("warp_row_on_chip", wroc::warp_row_on_chip<32, 32, float>, rows, 32, rows, cols,
              random, offset);
        check("row_on_chip", roc::row_on_chip<128, 32, float>, rows, 128, rows, cols, random, offset);
        check("row_on_chip", roc::row_on_chip<256, 16, float>, rows, 256, rows, cols, random, offset);
        check("row_on_chip", roc::row_on_chip<512, 8, float>, rows, 512, rows, cols, random, offset);
        check("row_on_chip", roc::row_on_chip<1024, 4, float>, rows, 1024, rows, cols, random,
              offset);
        runs += 5;
      }
  std::printf("softmax_emu: %d runs, %d failed, worst %.2f ulps\n", runs, failures, worst);
  return failures ? 1 : 0;
}
