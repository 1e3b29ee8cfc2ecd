// The qam256 family's plugin (include/kernlab/family_api.h): what its family.toml cannot say.
//   generator "symbols": buffer of 2 N float32 (I0, Q0, I1, Q1, ...): per symbol a random byte
//     mapped to 256-QAM (3GPP TS 38.211, 5.1.5; symbol energy 1) plus complex Gaussian noise at
//     the axis SNR_DB, from the seed;
//   reference "demap": the 8 soft bits of every symbol, bit-exact (docs/qam256.md).
// It needs nothing but the C++ standard library and the header: a plugin is built on its own.
#include <kernlab/family_api.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>

namespace {

// SplitMix64: the same sequence on every platform. Its state after k draws is the seed plus k
// times the increment, so any symbol's draws can be reached without the ones before it.
constexpr std::uint64_t golden = 0x9E3779B97F4A7C15ull;
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Symbols come in blocks of 2^16, each block from its own stream (seeded from the seed and the
// block's index), three draws a symbol: the byte, then the two uniforms of Box-Muller.
constexpr std::uint64_t block_symbols = 1u << 16;
constexpr int draws_per_symbol = 3;

int pam16(unsigned ba, unsigned bb, unsigned bc, unsigned bd) {
  const int sa = 1 - 2 * static_cast<int>(ba & 1), sb = 1 - 2 * static_cast<int>(bb & 1);
  const int sc = 1 - 2 * static_cast<int>(bc & 1), sd = 1 - 2 * static_cast<int>(bd & 1);
  return sa * (8 - sb * (4 - sc * (2 - sd)));
}

// An amplitude k / sqrt(170) rounded to float32, from a table: GCC 12 at -O2 was seen to keep
// the double quotient where the rounding to float was written inline, which changed the noisy
// symbols in their last bits.
float amplitude(int k) {
  static const std::array<float, 31> table = [] {
    std::array<float, 31> t{};
    for (int i = -15; i <= 15; ++i) t[i + 15] = static_cast<float>(i / std::sqrt(170.0));
    return t;
  }();
  return table[k + 15];
}

std::array<float, 2> map_byte(std::uint8_t byte) {
  auto bit = [&](int k) { return static_cast<unsigned>(byte >> k) & 1u; };
  return {amplitude(pam16(bit(0), bit(2), bit(4), bit(6))),
          amplitude(pam16(bit(1), bit(3), bit(5), bit(7)))};
}

// One symbol's I and Q.
std::array<float, 2> symbol(std::uint64_t seed, double sigma, std::uint64_t s) {
  const std::uint64_t b = s / block_symbols;
  std::uint64_t state = (seed ^ (0xD1B54A32D192ED03ull * (b + 1))) +
                        (s - b * block_symbols) * draws_per_symbol * golden;
  auto next = [&] { return mix(state += golden); };
  const auto point = map_byte(static_cast<std::uint8_t>(next()));
  // u1 in (0, 1] keeps the logarithm finite.
  const double u1 = (static_cast<double>(next() >> 11) + 1.0) * 0x1p-53;
  const double u2 = static_cast<double>(next() >> 11) * 0x1p-53;
  const double two_pi = 6.283185307179586;
  const double r = sigma * std::sqrt(-2.0 * std::log(u1));
  return {static_cast<float>(point[0] + r * std::cos(two_pi * u2)),
          static_cast<float>(point[1] + r * std::sin(two_pi * u2))};
}

// soft = (uint8) min(max(rint(128 - 8 L), 0), 255) in float32, rint half to even; 8 L is exact.
std::uint8_t soft_bit(float llr) {
  const float v = std::rint(128.0f - 8.0f * llr);
  return static_cast<std::uint8_t>(std::fmin(std::fmax(v, 0.0f), 255.0f));
}

void demap(float i, float q, std::uint8_t* out) {
  const float scale = 13.0384048f;  // sqrt(170) in float32
  const float x = i * scale, y = q * scale;
  const float l2 = 8.0f - std::fabs(x), l4 = 4.0f - std::fabs(l2), l6 = 2.0f - std::fabs(l4);
  const float l3 = 8.0f - std::fabs(y), l5 = 4.0f - std::fabs(l3), l7 = 2.0f - std::fabs(l5);
  const float l[8] = {x, y, l2, l3, l4, l5, l6, l7};
  for (int k = 0; k < 8; ++k) out[k] = soft_bit(l[k]);
}

bool axis(const kl_family_point* p, const char* name, double& value) {
  for (std::uint32_t i = 0; i < p->num_axes; ++i)
    if (std::strcmp(p->axis_names[i], name) == 0) {
      value = p->axis_values[i];
      return true;
    }
  return false;
}

std::size_t dtype_size(const char* dtype) {
  if (!std::strcmp(dtype, "uint8")) return 1;
  if (!std::strcmp(dtype, "float32") || !std::strcmp(dtype, "int32")) return 4;
  if (!std::strcmp(dtype, "float64") || !std::strcmp(dtype, "int64")) return 8;
  return 0;
}

int symbols(const kl_family_point* p, const char*, const char* dtype, void* out,
            std::uint64_t first, std::uint64_t count, char* error, std::size_t capacity) {
  double snr_db = 0;
  if (!axis(p, "SNR_DB", snr_db) || !std::isfinite(snr_db)) {
    std::snprintf(error, capacity, "symbols needs a finite axis SNR_DB");
    return KL_FAMILY_ERROR;
  }
  if (std::strcmp(dtype, "float32") != 0) {
    std::snprintf(error, capacity, "symbols makes float32 I/Q pairs, not %s", dtype);
    return KL_FAMILY_ERROR;
  }
  // Symbol energy is 1, so the noise's variance per complex sample is 10^(-snr/10), half of it
  // on each axis.
  const double sigma = std::sqrt(std::pow(10.0, -snr_db / 10.0) / 2.0);
  float* f = static_cast<float*>(out);
  // Elements are floats: element e is the I (even e) or Q (odd e) of symbol e / 2.
  for (std::uint64_t e = first; e < first + count;) {
    const auto iq = symbol(p->seed, sigma, e / 2);
    for (std::uint64_t k = e % 2; k < 2 && e < first + count; ++k, ++e) f[e - first] = iq[k];
  }
  return KL_FAMILY_OK;
}

int demap_all(const kl_family_point*, const kl_family_buffer* in, std::uint32_t num_in,
              const kl_family_buffer* out, std::uint32_t num_out, char* error,
              std::size_t capacity) {
  if (num_in != 1 || num_out != 1 || std::strcmp(in[0].dtype, "float32") != 0) {
    std::snprintf(error, capacity, "demap takes one float32 I/Q buffer and gives one output");
    return KL_FAMILY_ERROR;
  }
  const std::uint64_t n = in[0].count / 2;
  // The soft bits are 8 bytes a symbol, whatever element type the output is declared with.
  if (out[0].count * dtype_size(out[0].dtype) != 8 * n) {
    std::snprintf(error, capacity, "demap's output must hold 8 bytes per symbol (%llu symbols)",
                  static_cast<unsigned long long>(n));
    return KL_FAMILY_ERROR;
  }
  const float* iq = static_cast<const float*>(in[0].data);
  auto* soft = static_cast<std::uint8_t*>(out[0].data);
  for (std::uint64_t s = 0; s < n; ++s) demap(iq[2 * s], iq[2 * s + 1], soft + 8 * s);
  return KL_FAMILY_OK;
}

const kl_family_generator kGenerators[] = {{"symbols", symbols}};
const kl_family_reference kReferences[] = {{"demap", demap_all}};
const kl_family_plugin kPlugin = {
    KERNLAB_FAMILY_ABI_VERSION, "qam256", kGenerators, 1, kReferences, 1};

}  // namespace

KERNLAB_FAMILY_EXPORT const kl_family_plugin* kernlab_family(void) { return &kPlugin; }
