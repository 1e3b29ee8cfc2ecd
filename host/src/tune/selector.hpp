// A size selector learned from a range tune: which configuration to launch at any size, from the
// tunes of one space at several sizes (kernlab tune --size A:B, --export-header's ID_select).
//
// Three rules. `nearest_log` picks the best of the measured size nearest in log scale. `between`
// learns, for each cell between neighbouring measured sizes, the point that is least bad at the
// cell's corners (the least worst loss against each corner's own best, over the points measured at
// every corner): a size between two measured ones then gets a configuration that holds up at
// both, not the one that happened to win at the nearer. `waves` (for files that declare their
// grid) takes each point's time at the nearest measured size and scales it by how full the
// point's last wave of blocks is there and at the size asked: a tile that fills its waves at
// 2048 and 4096 may leave most of the GPU idle in the last wave at 3072. Which rule predicts
// better is judged by leave-one-out on the measured sizes themselves, and the selector keeps that
// one.
#pragma once

#include "tune/outcome.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kl::tune {

enum class selector_rule {
  nearest_log,  ///< the best of the measured size nearest in log scale, the first on a tie
  between,      ///< inside the measured range, the cell's point; outside it, nearest_log
  waves         ///< the least time predicted from the nearest measured size, wave by wave
};
const char* to_string(selector_rule r);  ///< "nearest_log", "between", "waves"

/// What the `waves` rule knows of each point's launch: its grid, and how many of its blocks the
/// GPU holds at once (blocks per SM times SMs, as measured); 0 where either is unknown.
struct wave_table {
  std::vector<std::string> axis_names;  ///< the names the grids' expressions give the sizes
  std::shared_ptr<const std::vector<point_grid>> grids;  ///< by point (tune_outcome::grids)
  std::vector<std::int64_t> resident;                    ///< by point
  bool empty() const { return !grids || grids->empty(); }
  /// How full the point's last wave is at `sizes`: blocks / (waves * resident), in (0, 1]; 0 when
  /// unknown (no grid, no occupancy, an expression that does not evaluate there).
  double efficiency(std::size_t point, const std::vector<std::uint64_t>& sizes) const;
};

/// The tunes' wave table: the first tune's grids and SM count, and each point's resident blocks
/// from the first row of any tune that measured its occupancy; empty without grids or SM count.
wave_table waves_of(const std::vector<const tune_outcome*>& tunes);

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
/// measured are left out of both rules' figures. Where no size lies inside and the points' grids
/// are known, every size left out is judged instead, from outside the rest's range (`outside`).
struct selector_check {
  std::size_t sizes = 0;  ///< the picks judged (a size of a grid once per axis it is inside)
  /// Judged at sizes outside the rest's range (none lay inside, e.g. two values per axis): only
  /// nearest_log against waves; `between` picks as nearest_log there, so its figures are those.
  bool outside = false;
  double mean_loss_nearest = 0, worst_loss_nearest = 0;
  double mean_loss_between = 0, worst_loss_between = 0;
  bool waves = false;  ///< whether the waves rule could pick at every size judged
  double mean_loss_waves = 0, worst_loss_waves = 0;
};

struct size_selector {
  std::vector<std::vector<std::uint64_t>> sizes;  ///< the measured sizes, one per tune, in order
  std::vector<std::size_t> best;                  ///< each measured size's best point
  selector_rule rule = selector_rule::nearest_log;
  std::vector<selector_cell> cells;  ///< between only: every cell inside the measured range
  /// waves only: each measured size's points and their values (by point), and the points' grids.
  std::vector<std::map<std::size_t, double>> values;
  wave_table waves;
  selector_check check;

  /// The point to launch at `sizes` (one value per axis): a measured size's own best, else the
  /// rule's pick.
  std::size_t pick(const std::vector<std::uint64_t>& at) const;
};

/// Each point's grid as its file declares it (else `family_grid_dims`, the family's), with the
/// constants its expressions see but the sizes (TSIZE at `dtype`, BLOCK, the point's params,
/// SM_COUNT): tune_outcome::grids. Empty dims where there are none or a constant does not
/// evaluate.
std::shared_ptr<const std::vector<point_grid>> point_grids(
    const tuning_space& space, const std::vector<std::string>& family_grid_dims,
    const std::string& dtype, int sm_count);

/// The selector of tunes that differ in their sizes alone (same_but_sizes), each with a best
/// point. `between` or `waves` is kept only where it predicted better than nearest_log on average
/// (the better of the two where both did); `waves` only for tunes that carry their points' grids
/// (tune_outcome::grids) with an occupancy measured for the points it picks among. Throws
/// std::invalid_argument for no tunes or tunes of different spaces or configurations.
size_selector fit_selector(const std::vector<const tune_outcome*>& tunes);

}  // namespace kl::tune
