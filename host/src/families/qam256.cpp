#include "families/qam256.hpp"

#include "cuda/resources.hpp"
#include "families/plugin_launch.hpp"
#include "families/splitmix64.hpp"
#include "spec/expression.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace kl {
namespace qam256 {
namespace {

// Symbols are made in blocks of this many, each from its own generator (seeded from the seed and
// the block's index), so that threads can share the work and the inputs stay the same whatever
// the thread count.
constexpr std::uint64_t block_symbols = 1u << 16;

// Runs body(first, last) over [0, n) in blocks of block_symbols, on up to 16 threads.
template <typename Body>
void parallel_blocks(std::uint64_t n, Body body) {
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

std::string format_float(float f) {
  char buf[64];
  std::uint32_t bits;
  std::memcpy(&bits, &f, 4);
  std::snprintf(buf, sizeof buf, "%.9g (0x%08x)", static_cast<double>(f), bits);
  return buf;
}

}  // namespace

int pam16(unsigned ba, unsigned bb, unsigned bc, unsigned bd) {
  const int sa = 1 - 2 * static_cast<int>(ba & 1), sb = 1 - 2 * static_cast<int>(bb & 1);
  const int sc = 1 - 2 * static_cast<int>(bc & 1), sd = 1 - 2 * static_cast<int>(bd & 1);
  return sa * (8 - sb * (4 - sc * (2 - sd)));
}

std::array<float, 2> map_byte(std::uint8_t byte) {
  auto bit = [&](int k) { return static_cast<unsigned>(byte >> k) & 1u; };
  const double norm = std::sqrt(170.0);
  return {static_cast<float>(pam16(bit(0), bit(2), bit(4), bit(6)) / norm),
          static_cast<float>(pam16(bit(1), bit(3), bit(5), bit(7)) / norm)};
}

std::uint8_t soft_bit(float llr) {
  // 8 * llr is exact (a power of two), so one rounding happens in the subtraction, then rint
  // (the default rounding mode: half to even). fmax/fmin rather than std::max/min so that a NaN
  // (unspecified by the spec) becomes 0 here instead of an undefined conversion.
  const float v = std::rint(128.0f - 8.0f * llr);
  return static_cast<std::uint8_t>(std::fmin(std::fmax(v, 0.0f), 255.0f));
}

std::array<std::uint8_t, 8> demap(float i, float q) {
  const float x = i * scale, y = q * scale;
  const float l2 = 8.0f - std::fabs(x), l4 = 4.0f - std::fabs(l2), l6 = 2.0f - std::fabs(l4);
  const float l3 = 8.0f - std::fabs(y), l5 = 4.0f - std::fabs(l3), l7 = 2.0f - std::fabs(l5);
  return {soft_bit(x),  soft_bit(y),  soft_bit(l2), soft_bit(l3),
          soft_bit(l4), soft_bit(l5), soft_bit(l6), soft_bit(l7)};
}

std::vector<float> make_input(const problem_config& c) {
  std::vector<float> iq(2 * c.size);
  // Symbol energy is 1 (the mean of I^2 + Q^2 over the constellation is 170 / 170), so the
  // noise's variance per complex sample is 10^(-snr/10), half of it on each axis.
  const double sigma = std::sqrt(std::pow(10.0, -c.snr_db / 10.0) / 2.0);
  const double two_pi = 6.283185307179586;
  parallel_blocks(c.size, [&](std::uint64_t b, std::uint64_t first, std::uint64_t last) {
    splitmix64 rng{c.seed ^ (0xD1B54A32D192ED03ull * (b + 1))};
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

std::vector<std::uint8_t> compute_reference(const std::vector<float>& iq) {
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

std::string format_bytes(const std::uint8_t* b) {
  std::string s;
  for (int k = 0; k < 8; ++k) s += (k ? " " : "") + std::to_string(b[k]);
  return s;
}

check_result compare(const std::vector<std::uint8_t>& expected, const std::uint8_t* got,
                     const std::vector<float>& iq) {
  check_result r;
  const std::uint64_t n = expected.size() / 8;
  if (std::memcmp(expected.data(), got, expected.size()) == 0) {
    r.ok = true;
    r.expected = r.got = std::to_string(n) + " symbols, 8 soft bits each";
    return r;
  }
  std::uint64_t first = n, differing = 0;
  for (std::uint64_t s = 0; s < n; ++s)
    if (std::memcmp(&expected[8 * s], got + 8 * s, 8) != 0) {
      if (first == n) first = s;
      ++differing;
    }
  r.expected = "symbol " + std::to_string(first) + ": " + format_bytes(&expected[8 * first]);
  r.got = "symbol " + std::to_string(first) + ": " + format_bytes(got + 8 * first);
  r.detail = "input I = " + format_float(iq[2 * first]) +
             ", Q = " + format_float(iq[2 * first + 1]) + "; " + std::to_string(differing) +
             " of " + std::to_string(n) + " symbols differ";
  return r;
}

check_result compare_copy(const std::vector<float>& iq, const std::uint8_t* got) {
  check_result r;
  const std::uint64_t n = iq.size() / 2;
  const auto* in = reinterpret_cast<const std::uint8_t*>(iq.data());
  if (std::memcmp(in, got, 8 * n) == 0) {
    r.ok = true;
    r.expected = r.got = std::to_string(8 * n) + " input bytes";
    r.detail = "bandwidth reference: the output is the input, byte for byte (no soft bits)";
    return r;
  }
  std::uint64_t first = 0;
  while (first < 8 * n && in[first] == got[first]) ++first;
  const std::uint64_t s = first / 8;
  r.expected = "copy of symbol " + std::to_string(s) + ": " + format_bytes(in + 8 * s);
  r.got = "symbol " + std::to_string(s) + ": " + format_bytes(got + 8 * s);
  r.detail = "the bandwidth reference must copy its input byte for byte";
  return r;
}

std::uint64_t grid_for(std::uint64_t n, std::uint64_t tile, grid_kind grid,
                       std::uint64_t resident_blocks) {
  if (n == 0 || tile == 0) throw std::invalid_argument("qam256 needs n >= 1 and a tile >= 1");
  const std::uint64_t tiles = (n + tile - 1) / tile;
  const std::uint64_t g = grid == grid_kind::tiles
                              ? tiles
                              : std::max<std::uint64_t>(1, std::min(tiles, resident_blocks));
  if (g > 2147483647u)
    throw not_supported("n=" + std::to_string(n) + " with a tile of " + std::to_string(tile) +
                        " needs " + std::to_string(g) + " blocks, past the grid's 2^31-1");
  return g;
}

namespace {

std::map<std::string, std::int64_t> variables(const variant_descriptor& v, unsigned block) {
  // TSIZE is a symbol's 8 bytes; the header's params follow in order, each seeing those before.
  std::map<std::string, std::int64_t> vars = {{"BLOCK", block}, {"TSIZE", 8}};
  for (const auto& [name, text] : v.params) vars[name] = evaluate(text, vars);
  return vars;
}

}  // namespace

std::uint64_t tile_of(const variant_descriptor& v, unsigned block) {
  return static_cast<std::uint64_t>(evaluate(v.tile, variables(v, block)));
}

}  // namespace qam256

namespace {

using namespace qam256;

// 2^32 symbols: 32 GiB in and 32 out. The kernels index with 64 bits (n is an unsigned long
// long), so the limit is memory, which device_bytes_needed() checks against the device.
constexpr std::uint64_t max_symbols = std::uint64_t{1} << 32;

// Inputs uploaded once per problem. Besides them the problem keeps the bitwise complement of
// the reference on the device: poisoning an output with it makes every byte that a variant
// fails to write differ from the reference, whatever value the reference has there (every byte
// value 0..255 is a possible soft bit, so no single poison byte would do).
class qam256_problem final : public problem {
 public:
  qam256_problem(const problem_config& c, const cuda::device_info&) : config_(c) {
    iq_ = make_input(c);
    ref_ = compute_reference(iq_);
    std::vector<std::uint8_t> poison(ref_.size());
    for (std::size_t i = 0; i < poison.size(); ++i) poison[i] = static_cast<std::uint8_t>(~ref_[i]);
    input_ = cuda::device_buffer(8 * c.size);
    output_ = cuda::device_buffer(8 * c.size);
    poison_ = cuda::device_buffer(8 * c.size);
    input_.upload(iq_.data(), 8 * c.size);
    poison_.upload(poison.data(), poison.size());
    got_.resize(8 * c.size);
    cuda::synchronize_context();
  }

  const problem_config& config() const override { return config_; }
  double bytes() const override { return qam256_family().problem_bytes(config_); }
  double flops() const override { return 0.0; }
  std::size_t device_bytes() const override {
    return input_.bytes() + output_.bytes() + poison_.bytes();
  }
  std::unique_ptr<operation> bind(const variant_descriptor& v, const source_kernel& k) override;
  std::unique_ptr<operation> bind(const variant_descriptor& v, const plugin_kernel& k) override;

  const cuda::device_buffer& input() const { return input_; }
  const cuda::device_buffer& output() const { return output_; }
  const std::vector<float>& iq() const { return iq_; }

  void poison(CUstream stream) const {
    KL_CU(cuMemcpyDtoDAsync(output_.get(), poison_.get(), output_.bytes(), stream));
  }
  // The output as it is now (the caller has synchronised), in a buffer kept between checks.
  const std::uint8_t* download() const {
    output_.download(got_.data(), got_.size());
    return got_.data();
  }
  check_result check() const { return compare(ref_, download(), iq_); }

 private:
  problem_config config_;
  std::vector<float> iq_;
  std::vector<std::uint8_t> ref_;
  cuda::device_buffer input_, output_, poison_;
  mutable std::vector<std::uint8_t> got_;
};

// A runtime-compiled kernel: one launch over all n symbols.
class source_demap final : public operation {
 public:
  source_demap(qam256_problem& p, const variant_descriptor& v, const source_kernel& k)
      : problem_(p), kernel_(k) {
    grid_ = grid_for(p.config().size, tile_of(v, k.block), v.grid,
                     static_cast<std::uint64_t>(std::max(1, k.resident_blocks)));
  }
  void enqueue(CUstream stream) override {
    CUdeviceptr in = problem_.input().get();
    CUdeviceptr out = problem_.output().get();
    unsigned long long n = problem_.config().size;
    void* args[] = {&in, &out, &n};
    KL_CU(cuLaunchKernel(kernel_.function, static_cast<unsigned>(grid_), 1, 1, kernel_.block, 1, 1,
                         kernel_.dynamic_shared_bytes, stream, args, nullptr));
  }
  void poison_output(CUstream stream) override { problem_.poison(stream); }
  check_result check() const override { return problem_.check(); }

 private:
  qam256_problem& problem_;
  source_kernel kernel_;
  std::uint64_t grid_ = 0;
};

// A plugin variant. A plugin that declares itself the family's baseline (is_baseline) is a
// bandwidth reference, not a demapper: it copies the 8n input bytes to the 8n-byte output, and
// it is checked as a copy, byte for byte against the input. Its poison is then the complement
// of the input, so that a byte it does not write never matches.
class plugin_demap final : public operation {
 public:
  plugin_demap(qam256_problem& p, const variant_descriptor& v, const plugin_kernel& k)
      : problem_(p),
        is_copy_(v.is_baseline),
        copy_poison_(is_copy_ ? complement_of_input(p) : cuda::device_buffer()),
        launch_(k, {"qam256",
                    "float32",
                    "demap",
                    {p.input().as_ptr()},
                    {p.output().as_ptr()},
                    {p.config().size}}) {}

  void enqueue(CUstream stream) override { launch_.run(stream); }
  void poison_output(CUstream stream) override {
    if (!is_copy_) return problem_.poison(stream);
    KL_CU(cuMemcpyDtoDAsync(problem_.output().get(), copy_poison_.get(), copy_poison_.bytes(),
                            stream));
  }
  check_result check() const override {
    return is_copy_ ? compare_copy(problem_.iq(), problem_.download()) : problem_.check();
  }

 private:
  static cuda::device_buffer complement_of_input(const qam256_problem& p) {
    const auto* in = reinterpret_cast<const std::uint8_t*>(p.iq().data());
    std::vector<std::uint8_t> poison(8 * p.config().size);
    for (std::size_t i = 0; i < poison.size(); ++i) poison[i] = static_cast<std::uint8_t>(~in[i]);
    cuda::device_buffer b(poison.size());
    b.upload(poison.data(), poison.size());
    return b;
  }

  qam256_problem& problem_;
  bool is_copy_;
  cuda::device_buffer copy_poison_;
  plugin_launch launch_;  // last: its prepare() runs once the buffers above exist
};

std::unique_ptr<operation> qam256_problem::bind(const variant_descriptor& v,
                                                const source_kernel& k) {
  return std::make_unique<source_demap>(*this, v, k);
}
std::unique_ptr<operation> qam256_problem::bind(const variant_descriptor& v,
                                                const plugin_kernel& k) {
  return std::make_unique<plugin_demap>(*this, v, k);
}

}  // namespace

void qam256_family::check(const parsed_header& h) const {
  const auto& d = h.descriptor;
  if (d.tile.empty())
    throw metadata_error(d.origin_path, h.header_line,
                         "a qam256 variant needs 'tile: <expression>' (symbols one block handles "
                         "per pass of the grid)");
  // Nothing is padded: the kernel gets exactly n symbols and must check n itself. Saying so in
  // the header keeps the reader from assuming reduce's default.
  if (!h.key_lines.count("bounds") || d.bounds != bounds_kind::checked)
    throw metadata_error(d.origin_path, h.line_of("bounds"),
                         "a qam256 variant needs 'bounds: checked' (the kernel gets exactly n "
                         "symbols, no padding, and checks n itself)");
  if (d.output != output_kind::per_block)
    throw metadata_error(d.origin_path, h.line_of("output"),
                         "qam256 has no 'output: single' (one launch always)");
  if (!d.workspace.empty())
    throw metadata_error(d.origin_path, h.line_of("workspace"), "qam256 kernels take no workspace");
  for (const auto& t : d.dtypes)
    if (t != "float32")
      throw metadata_error(d.origin_path, h.line_of("dtypes"),
                           "qam256 has no dtype '" + t + "' (it has float32)");
  for (const auto& o : d.ops)
    if (o != "demap")
      throw metadata_error(d.origin_path, h.line_of("ops"),
                           "qam256 has no op '" + o + "' (it has demap)");
}

std::string qam256_family::name_expression(const variant_descriptor& v, unsigned block,
                                           const problem_config&) const {
  std::map<std::string, std::string> words = {{"BLOCK", std::to_string(block)}};
  // The header's params are template arguments too (docs/kernel_contract.md).
  const auto vars = qam256::variables(v, block);
  for (const auto& [name, text] : v.params) words[name] = std::to_string(vars.at(name));
  return substitute_words(v.entry, words);
}

std::uint64_t qam256_family::max_size() const { return max_symbols; }

double qam256_family::problem_bytes(const problem_config& c) const {
  return 16.0 * static_cast<double>(c.size);  // 8 bytes of I and Q in, 8 soft bits out
}

std::size_t qam256_family::device_bytes_needed(const problem_config& c) const {
  // Input, output and the poison (8 bytes per symbol each), plus the copy baseline's poison.
  return static_cast<std::size_t>(32 * c.size);
}

std::unique_ptr<problem> qam256_family::make_problem(const problem_config& c,
                                                     const cuda::device_info& device) const {
  if (c.size == 0 || c.size > max_symbols)
    throw std::invalid_argument("qam256 needs 1 <= n <= 2^32 symbols; got " +
                                std::to_string(c.size));
  if (!std::isfinite(c.snr_db)) throw std::invalid_argument("qam256: the SNR must be finite");
  return std::make_unique<qam256_problem>(c, device);
}

}  // namespace kl
