// Every family kernlab ships: those still written in C++ and the folders of kernels_src/ that
// hold a family.toml (matmul, scan, softmax, transpose), as kernlab itself loads them.
#pragma once

#include "families/family.hpp"
#include "test_util.hpp"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace kl::test {

inline std::vector<std::string> shipped_include_dirs() {
  return {kernels_dir() + "/include", cuda_include()};
}

/// Where the shipped families' plugins are (qam256's: plugins/qam256_family).
inline std::vector<std::string> shipped_family_plugin_dirs() {
  return {std::string(KERNLAB_PLUGIN_DIR) + "/families"};
}

inline void register_shipped_families(family_registry& fams) {
  add_data_families(fams, {kernels_dir()}, shipped_include_dirs(), shipped_family_plugin_dirs());
}

/// `count` values of family `f`'s buffer `buffer` as kernlab generates them (its exact or its
/// random generator) for `dtype` and `seed`, read as T (T must match the dtype's width).
template <typename T>
std::vector<T> generated_values(const family& f, const std::string& buffer,
                                const std::string& dtype, std::uint64_t count, std::uint64_t seed,
                                bool random) {
  const buffer_spec& b = *f.spec().buffer(buffer);
  const auto bytes = generate_buffer(random ? *b.random : *b.exact, dtype, count, seed, buffer);
  std::vector<T> out(count);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

}  // namespace kl::test
