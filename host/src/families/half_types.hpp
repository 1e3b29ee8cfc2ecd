// float16 and bfloat16 on the host, for the data families' generators and comparisons: a value
// type holding the 16 bits, made from a double with round-to-nearest-even (as the device's
// __float2half_rn and __float2bfloat16_rn round a float) and read back as a double exactly.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace kl {

namespace half_detail {

// The float's bits rounded to `keep` significand bits below the hidden one (IEEE binary16 has
// 10, bfloat16 7), for bfloat16 (which is float's top half) and as the first step of binary16.
inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace half_detail

/// bfloat16: float32's top 16 bits, rounded to nearest even; NaN stays a (quiet) NaN.
struct bfloat16 {
  std::uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(double v) {
    const float f = static_cast<float>(v);
    const std::uint32_t u = half_detail::float_bits(f);
    if (std::isnan(f)) {
      bits = static_cast<std::uint16_t>((u >> 16) | 0x40);
      return;
    }
    const std::uint32_t rounding = 0x7fff + ((u >> 16) & 1);
    bits = static_cast<std::uint16_t>((u + rounding) >> 16);
  }
  explicit operator double() const { return half_detail::bits_float(std::uint32_t{bits} << 16); }
};

/// IEEE binary16 (CUDA's __half), rounded to nearest even, with subnormals, infinities and NaN.
struct float16 {
  std::uint16_t bits = 0;
  float16() = default;
  explicit float16(double v) {
    const std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
    const double a = std::fabs(v);
    if (std::isnan(v)) {
      bits = 0x7e00;
      return;
    }
    if (a >= 65520.0) {  // rounds to infinity (the largest finite value is 65504)
      bits = sign | 0x7c00;
      return;
    }
    if (a < 0x1p-14) {  // subnormal (or zero): a multiple of 2^-24
      bits = sign | static_cast<std::uint16_t>(std::nearbyint(a * 0x1p24));
      return;
    }
    int e = 0;
    const double m = std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
    // 11 significant bits: m * 2^11 in [1024, 2048), rounded to nearest even (the default mode).
    double q = std::nearbyint(m * 2048.0);
    if (q == 2048.0) {
      q = 1024.0;
      ++e;
    }
    if (e - 1 > 15) {
      bits = sign | 0x7c00;
      return;
    }
    bits = sign | static_cast<std::uint16_t>(((e - 1 + 15) << 10) | (static_cast<int>(q) - 1024));
  }
  explicit operator double() const {
    const int e = (bits >> 10) & 0x1f, f = bits & 0x3ff;
    const double s = bits & 0x8000 ? -1.0 : 1.0;
    if (e == 0) return s * std::ldexp(f, -24);
    if (e == 31)
      return f ? std::numeric_limits<double>::quiet_NaN()
               : s * std::numeric_limits<double>::infinity();
    return s * std::ldexp(1024 + f, e - 25);
  }
};

/// Significand bits (with the hidden one) and the machine epsilon of an element type.
template <typename T>
constexpr int significand_bits() {
  if constexpr (std::is_same_v<T, float16>)
    return 11;
  else if constexpr (std::is_same_v<T, bfloat16>)
    return 8;
  else
    return std::numeric_limits<T>::digits;
}
template <typename T>
constexpr double epsilon_of() {
  if constexpr (std::is_integral_v<T>)
    return 0.0;
  else
    return 1.0 / static_cast<double>(std::uint64_t{1} << (significand_bits<T>() - 1));
}
/// The largest finite value of a 16-bit float type.
template <typename T>
double largest_of() {
  if constexpr (std::is_same_v<T, float16>)
    return 65504.0;
  else
    return 0x1.fep127;  // bfloat16
}

/// The smallest positive (subnormal) value and the smallest normal one.
template <typename T>
double smallest_of() {
  if constexpr (std::is_same_v<T, float16>)
    return 0x1p-24;
  else if constexpr (std::is_same_v<T, bfloat16>)
    return 0x1p-133;
  else
    return std::numeric_limits<T>::denorm_min();
}
template <typename T>
double lowest_normal_of() {
  if constexpr (std::is_same_v<T, float16>)
    return 0x1p-14;
  else if constexpr (std::is_same_v<T, bfloat16>)
    return 0x1p-126;
  else
    return std::numeric_limits<T>::min();
}

}  // namespace kl
