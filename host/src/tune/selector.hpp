// A size selector learned from a range tune: which configuration to launch at any size, from the
// tunes of one space at several sizes (kernlab tune --size A:B, --export-header's ID_select).
//
// Two rules. `nearest_log` picks the best of the measured size nearest in log scale. `between`
// learns, for each cell between neighbouring measured sizes, the point that is least bad at the
// cell's corners (the least worst loss against each corner's own best, over the points measured at
// every corner): a size between two measured ones then gets a configuration that holds up at
// both, not the one that happened to win at the nearer. Which rule predicts better is judged by
// leave-one-out on the measured sizes themselves, and the selector keeps that one.
#pragma once

#include "tune/outcome.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kl::tune {

enum class selector_rule {
  nearest_log,  ///< the best of the measured size nearest in log scale, the first on a tie
  between       ///< inside the measured range, the cell's point; outside it, nearest_log
};
const char* to_string(selector_rule r);  ///< "nearest_log", "between"

/// The sizes strictly inside a box of measured sizes: on each axis, `low` and `high` are the
/// nearest measured values at or below and at or above (equal where the size is a measured
/// value); `point` is the one launched there.
struct selector_cell {
  std::vector<std::uint64_t> low, high;
  std::size_t point = 0;
  double worst_loss = 0;  ///< its loss at the worst corner, against that corner's own best
};

/// How well a rule predicted the measured sizes it was not given (leave-one-out): each measured
/// value of each axis taken out in turn (on one axis, each size; on a grid, the slice of sizes
/// at that value), the rule fitted on the rest, and its pick timed at each size taken out that
/// lies inside the rest's range, against that size's own best. Sizes where a rule's pick was not
/// measured are left out of both rules' figures.
struct selector_check {
  std::size_t sizes = 0;  ///< the picks judged (a size of a grid once per axis it is inside)
  double mean_loss_nearest = 0, worst_loss_nearest = 0;
  double mean_loss_between = 0, worst_loss_between = 0;
};

struct size_selector {
  std::vector<std::vector<std::uint64_t>> sizes;  ///< the measured sizes, one per tune, in order
  std::vector<std::size_t> best;                  ///< each measured size's best point
  selector_rule rule = selector_rule::nearest_log;
  std::vector<selector_cell> cells;  ///< between only: every cell inside the measured range
  selector_check check;

  /// The point to launch at `sizes` (one value per axis): a measured size's own best, else the
  /// rule's pick.
  std::size_t pick(const std::vector<std::uint64_t>& at) const;
};

/// The selector of tunes that differ in their sizes alone (same_but_sizes), each with a best
/// point. `between` is kept only where it predicted better than nearest_log at one size at
/// least and no worse on average. Throws std::invalid_argument for no tunes or tunes of
/// different spaces or configurations.
size_selector fit_selector(const std::vector<const tune_outcome*>& tunes);

}  // namespace kl::tune
