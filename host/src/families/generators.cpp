// The inputs a family's buffers start from: generated (grid, uniform, normal, constant, iota;
// counter-based, so any element can be made alone and in parallel) or read from a .npy file,
// and the identity elements of a reduction's padding.
#include "families/dtype_dispatch.hpp"
#include "families/family.hpp"
#include "families/splitmix64.hpp"
#include "nvrtc/hash.hpp"
#include "parallel/chunks.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <thread>
#include <type_traits>

namespace kl {
namespace {

// Reads a NumPy .npy file's data: little-endian, C order, of `dtype`, exactly `count` elements.
std::vector<std::uint8_t> read_npy(const std::string& path, const std::string& dtype,
                                   std::uint64_t count) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw std::runtime_error(path + ": not a .npy file");
  std::uint32_t header_len = 0;
  if (magic[6] == 1) {
    unsigned char l[2];
    in.read(reinterpret_cast<char*>(l), 2);
    header_len = l[0] | (l[1] << 8);
  } else {
    unsigned char l[4];
    in.read(reinterpret_cast<char*>(l), 4);
    header_len = l[0] | (l[1] << 8) | (l[2] << 16) | (static_cast<std::uint32_t>(l[3]) << 24);
  }
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) throw std::runtime_error(path + ": truncated header");
  static const std::map<std::string, std::string> descr = {{"uint8", "|u1"},   {"int32", "<i4"},
                                                           {"int64", "<i8"},   {"float16", "<f2"},
                                                           {"float32", "<f4"}, {"float64", "<f8"}};
  if (!descr.count(dtype))
    throw std::runtime_error(path + ": NumPy has no " + dtype +
                             " (give the buffer float32 data "
                             "and another type, or a generator)");
  if (header.find("'" + descr.at(dtype) + "'") == std::string::npos)
    throw std::runtime_error(path + ": its dtype is not " + dtype + " ('" + descr.at(dtype) +
                             "'): " + header);
  if (header.find("'fortran_order': False") == std::string::npos)
    throw std::runtime_error(path + ": Fortran order is not supported (save it in C order)");
  const std::size_t bytes = data_bytes(count, dtype);
  std::vector<std::uint8_t> out(bytes);
  if (!in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(bytes)))
    throw std::runtime_error(path + ": holds fewer than the " + std::to_string(count) +
                             " elements the buffer needs");
  if (in.peek() != std::char_traits<char>::eof())
    throw std::runtime_error(path + ": holds more than the " + std::to_string(count) +
                             " elements the buffer needs");
  return out;
}

// Writes elements [begin, end) of a generated buffer as T.
template <typename T>
void generate_range(const generator_spec& g, std::uint64_t base, T* out, std::uint64_t begin,
                    std::uint64_t end) {
  auto draw = [&](std::uint64_t i) { return splitmix64{base + i * 0x632be59bd9b4e019ULL}.next(); };
  auto unit = [](std::uint64_t r) { return static_cast<double>(r >> 11) * 0x1p-53; };  // [0, 1)
  const double lo = std::ceil(g.min * g.den), hi = std::floor(g.max * g.den);
  const auto range = static_cast<std::uint64_t>(std::max(0.0, hi - lo)) + 1;
  enum class kind { grid, uniform, normal, constant, iota };
  const kind k = g.kind == "grid"       ? kind::grid
                 : g.kind == "uniform"  ? kind::uniform
                 : g.kind == "normal"   ? kind::normal
                 : g.kind == "constant" ? kind::constant
                                        : kind::iota;
  for (std::uint64_t i = begin; i < end; ++i) {
    double v = 0;
    switch (k) {
      case kind::grid: {
        const auto step = std::min(
            range - 1, static_cast<std::uint64_t>(unit(draw(i)) * static_cast<double>(range)));
        v = (lo + static_cast<double>(step)) / g.den;
        break;
      }
      case kind::uniform: v = g.min + (g.max - g.min) * unit(draw(i)); break;
      case kind::normal: {
        // Box-Muller on two draws of this element's own stream.
        const double u1 = 1.0 - unit(draw(2 * i)), u2 = unit(draw(2 * i + 1));
        v = g.mean + g.stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
        break;
      }
      case kind::constant: v = g.value; break;
      case kind::iota: v = g.start + static_cast<double>(i) * g.step; break;
    }
    out[i] = std::is_integral_v<T> ? static_cast<T>(std::trunc(v)) : static_cast<T>(v);
  }
}

// Element i depends on (base, i) only, so the chunks may go to any number of threads.
template <typename T>
void generate_all(const generator_spec& g, std::uint64_t base, std::uint8_t* bytes,
                  std::uint64_t count) {
  T* out = reinterpret_cast<T*>(bytes);
  const std::uint64_t chunk = std::uint64_t{1} << 20;
  const unsigned threads =
      std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(),
                                      static_cast<unsigned>((count + chunk - 1) / chunk)));
  if (threads == 1) return generate_range(g, base, out, 0, count);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const std::uint64_t b = count * t / threads, e = count * (t + 1) / threads;
      generate_range(g, base, out, b, e);
    });
  for (auto& th : pool) th.join();
}

}  // namespace

std::vector<std::uint8_t> generate_buffer(const generator_spec& g, const std::string& dtype,
                                          std::uint64_t count, std::uint64_t seed,
                                          const std::string& buffer_name) {
  if (g.kind == "npy") return read_npy(g.file, dtype, count);
  static const std::vector<std::string> kinds = {"grid", "uniform", "normal", "constant", "iota"};
  if (std::find(kinds.begin(), kinds.end(), g.kind) == kinds.end())
    throw std::invalid_argument("unknown generator '" + g.kind + "'");
  std::vector<std::uint8_t> out(data_bytes(count, dtype));
  // Element i draws from a counter-based stream: splitmix64's output function at
  // base + i * gamma, where base mixes the seed with the buffer's name.
  const std::uint64_t base = splitmix64{seed ^ nvrtc::checksum64(buffer_name)}.next();
  with_dtype(dtype, [&](auto t) { generate_all<decltype(t)>(g, base, out.data(), count); });
  return out;
}

std::vector<std::uint8_t> identity_elements(const op_spec& op, const std::string& dtype,
                                            std::uint64_t count) {
  std::vector<std::uint8_t> out(data_bytes(count, dtype));
  with_dtype(dtype, [&](auto t) {
    using T = decltype(t);
    T v{};
    if constexpr (std::is_class_v<T>) {  // float16, bfloat16
      v = op.identity == "max"      ? T(largest_of<T>())
          : op.identity == "lowest" ? T(-largest_of<T>())
                                    : T(std::strtod(op.identity.c_str(), nullptr));
    } else {
      v = op.identity == "max"      ? std::numeric_limits<T>::max()
          : op.identity == "lowest" ? std::numeric_limits<T>::lowest()
                                    : static_cast<T>(std::strtod(op.identity.c_str(), nullptr));
    }
    for (std::uint64_t i = 0; i < count; ++i)
      std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
  });
  return out;
}

}  // namespace kl
