// The qam256 family's definition in C++ (docs/qam256.md), kept by the tests as the oracle of
// the family's plugin (plugins/qam256_family): the CPU reference that kernlab's own C++ family
// used until qam256 became a folder of data, the same function for function. kernlab itself no
// longer has it.
#pragma once

#include "families/splitmix64.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace kl::test::qam256 {

/// sqrt(170) rounded to float32 (the spec's s).
constexpr float scale = 13.0384048f;

namespace detail {
// Symbols are made in blocks of this many, each from its own generator (seeded from the seed and
// the block's index), so that threads can share the work and the inputs stay the same whatever
// the thread count.
constexpr std::uint64_t block_symbols = 1u << 16;

// Runs body(first, last) over [0, n) in blocks of block_symbols, on up to 16 threads.
template <typename Body>
inline void parallel_blocks(std::uint64_t n, Body body) {
  const std::uint64_t blocks = (n + block_symbols - 1) / block_symbols;
  const unsigned hw = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  const unsigned threads = static_cast<unsigned>(std::min<std::uint64_t>(hw, blocks));
  if (threads <= 1) {
    for (std::uint64_t b = 0; b < blocks; ++b)
      body(b, b * block_symbols, std::min(n, (b + 1) * block_symbols));
    return;
  }
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (std::uint64_t b = t; b < blocks; b += threads)
        body(b, b * block_symbols, std::min(n, (b + 1) * block_symbols));
    });
  for (auto& th : pool) th.join();
}

}  // namespace detail
using detail::parallel_blocks;

inline int pam16(unsigned ba, unsigned bb, unsigned bc, unsigned bd) {
  const int sa = 1 - 2 * static_cast<int>(ba & 1), sb = 1 - 2 * static_cast<int>(bb & 1);
  const int sc = 1 - 2 * static_cast<int>(bc & 1), sd = 1 - 2 * static_cast<int>(bd & 1);
  return sa * (8 - sb * (4 - sc * (2 - sd)));
}

// An amplitude k / sqrt(170) rounded to float32, from a table, as the plugin has it: written
// inline, GCC 12 at -O2 was seen to keep the double quotient, which changed noisy symbols in their
// last bits.
inline float amplitude(int k) {
  static const std::array<float, 31> table = [] {
    std::array<float, 31> t{};
    for (int i = -15; i <= 15; ++i) t[i + 15] = static_cast<float>(i / std::sqrt(170.0));
    return t;
  }();
  return table[k + 15];
}

inline std::array<float, 2> map_byte(std::uint8_t byte) {
  auto bit = [&](int k) { return static_cast<unsigned>(byte >> k) & 1u; };
  return {amplitude(pam16(bit(0), bit(2), bit(4), bit(6))),
          amplitude(pam16(bit(1), bit(3), bit(5), bit(7)))};
}

inline std::uint8_t soft_bit(float llr) {
  // 8 * llr is exact (a power of two), so one rounding happens in the subtraction, then rint
  // (the default rounding mode: half to even). fmax/fmin rather than std::max/min so that a NaN
  // (unspecified by the spec) becomes 0 here instead of an undefined conversion.
  const float v = std::rint(128.0f - 8.0f * llr);
  return static_cast<std::uint8_t>(std::fmin(std::fmax(v, 0.0f), 255.0f));
}

inline std::array<std::uint8_t, 8> demap(float i, float q) {
  const float x = i * scale, y = q * scale;
  const float l2 = 8.0f - std::fabs(x), l4 = 4.0f - std::fabs(l2), l6 = 2.0f - std::fabs(l4);
  const float l3 = 8.0f - std::fabs(y), l5 = 4.0f - std::fabs(l3), l7 = 2.0f - std::fabs(l5);
  return {soft_bit(x),  soft_bit(y),  soft_bit(l2), soft_bit(l3),
          soft_bit(l4), soft_bit(l5), soft_bit(l6), soft_bit(l7)};
}

inline std::vector<float> make_input(std::uint64_t n, std::uint64_t seed, double snr_db) {
  std::vector<float> iq(2 * n);
  // Symbol energy is 1 (the mean of I^2 + Q^2 over the constellation is 170 / 170), so the
  // noise's variance per complex sample is 10^(-snr/10), half of it on each axis.
  const double sigma = std::sqrt(std::pow(10.0, -snr_db / 10.0) / 2.0);
  const double two_pi = 6.283185307179586;
  parallel_blocks(n, [&](std::uint64_t b, std::uint64_t first, std::uint64_t last) {
    splitmix64 rng{seed ^ (0xD1B54A32D192ED03ull * (b + 1))};
    for (std::uint64_t s = first; s < last; ++s) {
      const auto point = map_byte(static_cast<std::uint8_t>(rng.next()));
      // Box-Muller: u1 in (0, 1] keeps the logarithm finite.
      const double u1 = (static_cast<double>(rng.next() >> 11) + 1.0) * 0x1p-53;
      const double u2 = static_cast<double>(rng.next() >> 11) * 0x1p-53;
      const double r = sigma * std::sqrt(-2.0 * std::log(u1));
      iq[2 * s] = static_cast<float>(point[0] + r * std::cos(two_pi * u2));
      iq[2 * s + 1] = static_cast<float>(point[1] + r * std::sin(two_pi * u2));
    }
  });
  return iq;
}

inline std::vector<std::uint8_t> compute_reference(const std::vector<float>& iq) {
  const std::uint64_t n = iq.size() / 2;
  std::vector<std::uint8_t> out(8 * n);
  parallel_blocks(n, [&](std::uint64_t, std::uint64_t first, std::uint64_t last) {
    for (std::uint64_t s = first; s < last; ++s) {
      const auto soft = demap(iq[2 * s], iq[2 * s + 1]);
      std::memcpy(&out[8 * s], soft.data(), 8);
    }
  });
  return out;
}

inline std::string format_bytes(const std::uint8_t* b) {
  std::string s;
  for (int k = 0; k < 8; ++k) s += (k ? " " : "") + std::to_string(b[k]);
  return s;
}

}  // namespace kl::test::qam256
