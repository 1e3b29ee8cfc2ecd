#include "families/pass_plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace kl {

std::uint64_t round_up(std::uint64_t n, std::uint64_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

std::vector<pass_plan> plan_passes(std::uint64_t n, std::uint64_t tile, grid_kind grid,
                                   bounds_kind bounds, std::uint64_t resident_blocks,
                                   output_kind output) {
  if (n == 0 || tile == 0)
    throw std::invalid_argument("the plan passes needs n >= 1 and tile >= 1");
  std::vector<pass_plan> passes;
  for (;;) {
    pass_plan p;
    p.n = n;
    const std::uint64_t tiles = (n + tile - 1) / tile;
    p.in_len = bounds == bounds_kind::padded ? tiles * tile : n;
    p.grid = grid == grid_kind::tiles
                 ? tiles
                 : std::max<std::uint64_t>(1, std::min(tiles, resident_blocks));
    if (output == output_kind::single) {
      passes.push_back(p);
      return passes;
    }
    if (p.grid >= n && n > 1)
      throw std::invalid_argument("the variant makes no progress: " + std::to_string(n) +
                                  " elements give " + std::to_string(p.grid) +
                                  " partial results (is the tile 1?)");
    passes.push_back(p);
    if (p.grid == 1) return passes;
    n = p.grid;
  }
}

}  // namespace kl
