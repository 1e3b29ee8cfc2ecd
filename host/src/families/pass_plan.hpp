// The launch plan of a reduction to one value (a data family's plan "passes"): the kernel runs
// on the input, then on its own partial results, until one value is left.
#pragma once

#include "spec/variant.hpp"

#include <cstdint>
#include <vector>

namespace kl {

/// One launch of the kernel: it reads `n` valid elements (and, padded, up to `in_len`) and writes
/// `grid` partial results.
struct pass_plan {
  std::uint64_t n = 0;
  std::uint64_t in_len = 0;  ///< elements the pass may read (n rounded up to tiles if padded)
  std::uint64_t grid = 0;
};

/// The passes that reduce n elements to one. `resident_blocks` caps the grid for `grid: resident`.
/// A kernel with `output: single` finishes the reduction itself: one pass.
/// Throws std::invalid_argument if a pass would make no progress (a tile of 1 with one block).
std::vector<pass_plan> plan_passes(std::uint64_t n, std::uint64_t tile, grid_kind grid,
                                   bounds_kind bounds, std::uint64_t resident_blocks,
                                   output_kind output = output_kind::per_block);

std::uint64_t round_up(std::uint64_t n, std::uint64_t multiple);

}  // namespace kl
