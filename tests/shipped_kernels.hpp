// The shipped kernel files the compile tests build: what a sweep runs, and every point of the
// small tunable files.
#pragma once

#include "registry/registry.hpp"

#include <map>
#include <string>
#include <vector>

namespace kl::test {

/// Every variant of `family` a sweep selects ("all": plain files and named points), and every
/// point of each tunable file with at most `max_points` points (the merged ladder steps, such as
/// reduce_unrolling, whose other points a sweep leaves out), in registry order. The big spaces
/// (hundreds of points) are compiled by the `kernlab tune` that times them.
inline std::vector<const registry_entry*> shipped_compile_selection(const registry& reg,
                                                                    const std::string& family,
                                                                    std::size_t max_points = 16) {
  std::map<std::string, std::size_t> points;  // by tunable file
  for (const auto& e : reg.entries())
    if (e.descriptor.family == family && e.descriptor.is_point())
      ++points[e.descriptor.tunable_file];
  std::vector<std::string> patterns = {"all"};
  for (const auto& [file, n] : points)
    if (n <= max_points) patterns.push_back(file);
  return reg.select(patterns, family);
}

}  // namespace kl::test
