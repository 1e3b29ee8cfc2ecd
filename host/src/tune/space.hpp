// A kernel file's tuning space: its tunables' points (one variant each, spec/metadata.hpp
// expand_tunables) times the blocks each allows, as the coordinates a search strategy moves in.
#pragma once

#include "registry/registry.hpp"
#include "tune/strategy.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kl::tune {

/// A point of the space: a variant of the file at a block, and the values that make it.
struct candidate {
  const registry_entry* entry = nullptr;
  unsigned block = 0;
  /// The tunables' values in the header's order, then BLOCK.
  std::vector<std::pair<std::string, std::int64_t>> values;
};

struct tuning_space {
  std::string file;                   ///< the kernel file
  std::string name;                   ///< the file's stem: "tunable"
  std::string family;                 ///< "matmul"
  search_space space;                 ///< what a strategy sees: parameters and points
  std::vector<candidate> candidates;  ///< the same points, in the same order
  /// The points left out before any run, by reason ("block 1024: the NVIDIA H100 allows at most
  /// ..."), with how many each; every point is either a candidate or counted here.
  std::map<std::string, std::size_t> turned_down;
};

/// The space of each kernel file among `entries` (source variants; all the points of a tunable
/// file are entries of that one file), in the order the files first appear. Each point runs at
/// the blocks its requirements allow among `blocks`, up to the device's `max_threads_per_block`
/// (0: no device limit). Throws std::invalid_argument for a plugin (it has nothing to tune) or a
/// variant that cannot be used (its error, with the file and line).
std::vector<tuning_space> make_spaces(const std::vector<const registry_entry*>& entries,
                                      const std::vector<unsigned>& blocks,
                                      int max_threads_per_block);

/// "BM=128 BN=64 BLOCK=256": a candidate's values as one line.
std::string describe(const candidate& c);

}  // namespace kl::tune
