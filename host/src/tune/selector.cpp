#include "tune/selector.hpp"

#include "spec/dtypes.hpp"
#include "spec/expression.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

namespace kl::tune {
namespace {

// What the fit needs of each tune: its sizes, its best point and every point measured in full.
struct measured_size {
  std::vector<std::uint64_t> sizes;
  std::size_t best = 0;
  std::map<std::size_t, double> value;  // point -> objective value; full and passed
  /// The point's loss against this size's best (0.02: 2 % slower); none where it was not measured.
  std::optional<double> loss(std::size_t point) const {
    const auto it = value.find(point);
    if (it == value.end()) return std::nullopt;
    return it->second / value.at(best) - 1;
  }
};

double ratio(std::uint64_t a, std::uint64_t b) {
  const double x = static_cast<double>(std::max<std::uint64_t>(a, 1));
  const double y = static_cast<double>(std::max<std::uint64_t>(b, 1));
  return x > y ? x / y : y / x;
}

// The size in `among` nearest to `at` in log scale (the product over the axes of larger /
// smaller), the first on a tie.
std::size_t nearest_size(const std::vector<measured_size>& m, const std::vector<std::size_t>& among,
                         const std::vector<std::uint64_t>& at) {
  std::size_t out = among.front();
  double best_d = std::numeric_limits<double>::infinity();
  for (std::size_t k : among) {
    double d = 1;
    for (std::size_t i = 0; i < at.size(); ++i) d *= ratio(at[i], m[k].sizes[i]);
    if (d < best_d) best_d = d, out = k;
  }
  return out;
}

// The best of that size.
std::size_t nearest(const std::vector<measured_size>& m, const std::vector<std::size_t>& among,
                    const std::vector<std::uint64_t>& at) {
  return m[nearest_size(m, among, at)].best;
}

// The waves rule: among the points measured at the nearest size, the least time predicted at
// `at`, each time scaled by its last wave's fullness there against at `at`; none when no point's
// fullness is known at both.
std::optional<std::size_t> by_waves(const std::vector<measured_size>& m,
                                    const std::vector<std::size_t>& among,
                                    const std::vector<std::uint64_t>& at, const wave_table& w) {
  const measured_size& from = m[nearest_size(m, among, at)];
  std::optional<std::size_t> out;
  double out_time = 0;
  for (const auto& [point, v] : from.value) {
    const double there = w.efficiency(point, from.sizes), here = w.efficiency(point, at);
    if (there <= 0 || here <= 0) continue;
    const double predicted = v * there / here;
    if (!out || predicted < out_time) {
      out = point;
      out_time = predicted;
    }
  }
  return out;
}

// On each axis, the nearest values of `among`'s sizes at or below and at or above `at`; none when
// `at` lies outside their range on some axis.
std::optional<std::pair<std::vector<std::uint64_t>, std::vector<std::uint64_t>>> bracket(
    const std::vector<measured_size>& m, const std::vector<std::size_t>& among,
    const std::vector<std::uint64_t>& at) {
  std::vector<std::uint64_t> low(at.size()), high(at.size());
  for (std::size_t i = 0; i < at.size(); ++i) {
    std::optional<std::uint64_t> lo, hi;
    for (std::size_t k : among) {
      const std::uint64_t v = m[k].sizes[i];
      if (v <= at[i] && (!lo || v > *lo)) lo = v;
      if (v >= at[i] && (!hi || v < *hi)) hi = v;
    }
    if (!lo || !hi) return std::nullopt;
    low[i] = *lo;
    high[i] = *hi;
  }
  return std::make_pair(low, high);
}

// The point least bad at every measured corner of the box [low, high] among `among`: the least
// worst loss, then the least summed loss, then the lowest point; none with fewer than two corners
// or no point measured at all of them.
std::optional<selector_cell> robust(const std::vector<measured_size>& m,
                                    const std::vector<std::size_t>& among,
                                    const std::vector<std::uint64_t>& low,
                                    const std::vector<std::uint64_t>& high) {
  std::vector<std::size_t> corners;
  for (std::size_t k : among) {
    bool corner = true;
    for (std::size_t i = 0; i < low.size() && corner; ++i)
      corner = m[k].sizes[i] == low[i] || m[k].sizes[i] == high[i];
    if (corner) corners.push_back(k);
  }
  if (corners.size() < 2) return std::nullopt;
  std::optional<selector_cell> out;
  double out_sum = 0;
  for (const auto& [point, v] : m[corners.front()].value) {
    double worst = 0, sum = 0;
    bool everywhere = true;
    for (std::size_t k : corners) {
      const auto l = m[k].loss(point);
      if (!l) {
        everywhere = false;
        break;
      }
      worst = std::max(worst, *l);
      sum += *l;
    }
    if (!everywhere) continue;
    if (!out || worst < out->worst_loss || (worst == out->worst_loss && sum < out_sum)) {
      out = selector_cell{low, high, point, worst};
      out_sum = sum;
    }
  }
  return out;
}

std::vector<std::size_t> every(std::size_t n) {
  std::vector<std::size_t> out(n);
  for (std::size_t k = 0; k < n; ++k) out[k] = k;
  return out;
}

// The sizes whose value on `axis` is not `value`: a slice through a grid of sizes left out.
std::vector<std::size_t> all_but_slice(const std::vector<measured_size>& m, std::size_t axis,
                                       std::uint64_t value) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < m.size(); ++k)
    if (m[k].sizes[axis] != value) out.push_back(k);
  return out;
}

// Leave-one-out: each measured value of each axis left out in turn (the sizes at that value, a
// slice through a grid; on one axis, the size itself), and each rule's pick, from the rest, at
// every size left out that lies inside the rest's range. Leaving out one size of a grid would
// leave its own value on every axis measured elsewhere: no cell around it to learn from.
// `outside`: at every size left out instead, the rest's range or not, nearest_log against waves
// alone (outside the range `between` picks as nearest_log does).
selector_check leave_one_out(const std::vector<measured_size>& m, const wave_table& w,
                             bool outside) {
  selector_check c;
  c.waves = !w.empty();
  c.outside = outside;
  double sum_n = 0, sum_b = 0, sum_w = 0;
  for (std::size_t h = 0; h < m.size(); ++h)
    for (std::size_t axis = 0; axis < m[h].sizes.size(); ++axis) {
      const auto rest = all_but_slice(m, axis, m[h].sizes[axis]);
      if (rest.empty()) continue;
      const auto ln = m[h].loss(nearest(m, rest, m[h].sizes));
      std::optional<double> lb = ln;
      if (!outside) {
        const auto box = bracket(m, rest, m[h].sizes);
        const auto cell = box ? robust(m, rest, box->first, box->second) : std::nullopt;
        if (!cell) continue;
        lb = m[h].loss(cell->point);
      }
      if (!ln || !lb) continue;
      ++c.sizes;
      sum_n += *ln;
      sum_b += *lb;
      c.worst_loss_nearest = std::max(c.worst_loss_nearest, *ln);
      c.worst_loss_between = std::max(c.worst_loss_between, *lb);
      // The waves rule is judged at every such size or not at all.
      const auto pw = c.waves ? by_waves(m, rest, m[h].sizes, w) : std::nullopt;
      const auto lw = pw ? m[h].loss(*pw) : std::nullopt;
      c.waves = c.waves && lw;
      if (!c.waves) continue;
      sum_w += *lw;
      c.worst_loss_waves = std::max(c.worst_loss_waves, *lw);
    }
  c.waves = c.waves && c.sizes > 0;
  if (c.sizes) {
    c.mean_loss_nearest = sum_n / static_cast<double>(c.sizes);
    c.mean_loss_between = sum_b / static_cast<double>(c.sizes);
  }
  if (c.waves)
    c.mean_loss_waves = sum_w / static_cast<double>(c.sizes);
  else
    c.worst_loss_waves = 0;
  return c;
}

// Every cell inside the measured range: on each axis a measured value or the gap between two
// neighbouring ones, not a measured value on every axis (a measured size is its own best).
std::vector<selector_cell> cells_of(const std::vector<measured_size>& m) {
  const std::size_t axes = m.front().sizes.size();
  std::vector<std::vector<std::uint64_t>> values(axes);
  for (std::size_t i = 0; i < axes; ++i) {
    for (const auto& s : m) values[i].push_back(s.sizes[i]);
    std::sort(values[i].begin(), values[i].end());
    values[i].erase(std::unique(values[i].begin(), values[i].end()), values[i].end());
  }
  // A slot per axis: 2j is the value j, 2j + 1 the gap above it.
  std::vector<std::size_t> slot(axes, 0);
  const auto all = every(m.size());
  std::vector<selector_cell> out;
  for (;;) {
    std::vector<std::uint64_t> low(axes), high(axes);
    bool gap = false;
    for (std::size_t i = 0; i < axes; ++i) {
      low[i] = values[i][slot[i] / 2];
      high[i] = values[i][(slot[i] + 1) / 2];
      gap = gap || slot[i] % 2;
    }
    if (gap)
      if (auto c = robust(m, all, low, high)) out.push_back(std::move(*c));
    std::size_t i = 0;
    while (i < axes && ++slot[i] == 2 * values[i].size() - 1) slot[i++] = 0;
    if (i == axes) return out;
  }
}

}  // namespace

wave_table waves_of(const std::vector<const tune_outcome*>& tunes) {
  const tune_outcome& first = *tunes.front();
  wave_table w;
  if (!first.grids || first.sm_count <= 0) return w;
  w.axis_names = first.axis_names;  // the sizes' names, then the family's other launch names
  w.axis_names.resize(std::min(w.axis_names.size(), first.config.shape().size()));
  w.grids = first.grids;
  w.resident.assign(w.grids->size(), 0);
  for (const tune_outcome* t : tunes)
    for (const auto& e : t->evaluations)
      if (e.point < w.resident.size() && w.resident[e.point] == 0 && e.record.occupancy &&
          e.record.occupancy->blocks_per_sm > 0)
        w.resident[e.point] =
            static_cast<std::int64_t>(e.record.occupancy->blocks_per_sm) * first.sm_count;
  return w;
}

const char* to_string(selector_rule r) {
  return r == selector_rule::between ? "between"
         : r == selector_rule::waves ? "waves"
                                     : "nearest_log";
}

double wave_table::efficiency(std::size_t point, const std::vector<std::uint64_t>& sizes) const {
  if (empty() || point >= grids->size() || point >= resident.size() || resident[point] <= 0 ||
      (*grids)[point].dims.empty() || sizes.size() != axis_names.size())
    return 0;
  const point_grid& grid = (*grids)[point];
  std::map<std::string, std::int64_t> vars = grid.constants;
  for (std::size_t i = 0; i < sizes.size(); ++i)
    vars[axis_names[i]] = static_cast<std::int64_t>(sizes[i]);
  vars["RESIDENT_BLOCKS"] = resident[point];
  double blocks = 1;
  try {
    for (const auto& d : grid.dims) {
      const std::int64_t v = evaluate(d, vars);
      if (v <= 0) return 0;
      blocks *= static_cast<double>(v);
    }
  } catch (const std::exception&) {
    return 0;  // a name the grid needs that is not known here (a family's own launch variable)
  }
  const double w = static_cast<double>(resident[point]);
  return blocks / (std::ceil(blocks / w) * w);
}

std::size_t size_selector::pick(const std::vector<std::uint64_t>& at) const {
  for (std::size_t k = 0; k < sizes.size(); ++k)
    if (sizes[k] == at) return best[k];
  if (rule == selector_rule::between)
    for (const auto& c : cells) {
      bool inside = true;
      for (std::size_t i = 0; i < at.size() && inside; ++i)
        inside = c.low[i] == c.high[i] ? at[i] == c.low[i] : c.low[i] < at[i] && at[i] < c.high[i];
      if (inside) return c.point;
    }
  std::vector<measured_size> m(sizes.size());
  std::vector<std::size_t> all;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    m[k].sizes = sizes[k];
    m[k].best = best[k];
    if (rule == selector_rule::waves) m[k].value = values[k];
    all.push_back(k);
  }
  if (rule == selector_rule::waves)
    if (const auto p = by_waves(m, all, at, waves)) return *p;
  return nearest(m, all, at);
}

std::shared_ptr<const std::vector<point_grid>> point_grids(
    const tuning_space& space, const std::vector<std::string>& family_grid_dims,
    const std::string& dtype, int sm_count) {
  auto out = std::make_shared<std::vector<point_grid>>(space.candidates.size());
  for (std::size_t p = 0; p < space.candidates.size(); ++p) {
    const variant_descriptor& d = space.candidates[p].entry->descriptor;
    point_grid& g = (*out)[p];
    g.constants = {{"TSIZE", static_cast<std::int64_t>(data_dtype_size(dtype))},
                   {"BLOCK", space.candidates[p].block},
                   {"SM_COUNT", sm_count}};
    try {
      for (const auto& [name, text] : d.params) g.constants[name] = evaluate(text, g.constants);
      g.dims = d.grid_dims.empty() ? family_grid_dims : d.grid_dims;
    } catch (const std::exception&) {
      g.dims.clear();  // a param of the sizes: no grid to count at other sizes
    }
  }
  return out;
}

size_selector fit_selector(const std::vector<const tune_outcome*>& tunes) {
  if (tunes.empty()) throw std::invalid_argument("fit_selector: no tunes");
  std::vector<measured_size> m;
  for (const tune_outcome* t : tunes) {
    if (!same_but_sizes(*t, *tunes.front()))
      throw std::invalid_argument("fit_selector: " + t->config.describe() +
                                  " is not of the same space and configuration as " +
                                  tunes.front()->config.describe());
    const evaluation* b = t->best();
    if (!b) throw std::invalid_argument("fit_selector: " + t->config.describe() + " has no best");
    measured_size s;
    s.sizes = t->config.shape();
    s.best = b->point;
    // A raced point counts at its rough median: it lost to that size's best by the race's margin
    // at least, and without it the corners of a cell tuned with a race (most points raced out)
    // would share almost no point to choose from.
    for (const auto& [point, v] : t->measured(true)) s.value.emplace(point, v);
    s.value[s.best] = objective_value(b->record, t->goal);
    m.push_back(std::move(s));
  }
  size_selector out;
  for (const auto& s : m) {
    out.sizes.push_back(s.sizes);
    out.best.push_back(s.best);
  }
  const wave_table w = waves_of(tunes);
  out.check = leave_one_out(m, w, false);
  // No size inside the others' range (two values per axis): the waves rule predicts from a size's
  // grid, not from a cell around it, so it is judged from outside the range instead.
  if (out.check.sizes == 0 && !w.empty()) out.check = leave_one_out(m, w, true);
  const selector_check& c = out.check;
  const bool between = c.sizes > 0 && c.mean_loss_between < c.mean_loss_nearest;
  const bool waves = c.waves && c.mean_loss_waves < c.mean_loss_nearest;
  if (waves && (!between || c.mean_loss_waves < c.mean_loss_between)) {
    out.rule = selector_rule::waves;
    for (const auto& s : m) out.values.push_back(s.value);
    out.waves = w;
  } else if (between) {
    out.rule = selector_rule::between;
    out.cells = cells_of(m);
  }
  return out;
}

}  // namespace kl::tune
