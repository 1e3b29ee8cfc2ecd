// Every family kernlab ships: those still written in C++ and the folders of kernels_src/ that
// hold a family.toml (matmul, scan, softmax, transpose), as kernlab itself loads them.
#pragma once

#include "families/family.hpp"
#include "test_util.hpp"

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

}  // namespace kl::test
