// What one tune came to: a file's space searched at one problem configuration.
#pragma once

#include "record/result.hpp"
#include "tune/space.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kl::tune {

/// What a tune minimises (--objective).
enum class objective {
  time,   ///< the median
  energy  ///< joules per operation (--energy's figures)
};
inline const char* to_string(objective o) { return o == objective::energy ? "energy" : "time"; }

/// A row's value under the objective, smaller is better: the median in ms, or the joules per
/// operation; +infinity for a row that has none (it failed, energy could not be measured, or a
/// record read from a file has a median that is not a positive number).
inline double objective_value(const result_record& r, objective o) {
  constexpr double none = std::numeric_limits<double>::infinity();
  if (o == objective::energy) return r.has_energy() ? r.energy->joules_per_op : none;
  return r.timed() && r.timing->median_ms > 0 ? r.timing->median_ms : none;
}

/// One evaluation: a point, how carefully it was timed, and its row.
struct evaluation {
  std::size_t point = 0;
  fidelity level = fidelity::full;
  result_record record;
  bool from_store = false;  ///< taken from the tuning store, not measured in this run
  double at_s = 0;          ///< when its row came back, in seconds since the search began
  /// Raced out (--race): timed only until it showed it could not beat the best so far.
  bool raced() const { return record.timing && record.timing->raced; }
};

/// A point's launch grid as its file declares it (`grid_dims`): what the size selector's `waves`
/// rule needs to count the point's blocks at sizes it was not measured at.
struct point_grid {
  std::vector<std::string> dims;                  ///< expressions over the axes and `constants`
  std::map<std::string, std::int64_t> constants;  ///< BLOCK, TSIZE and the point's parameters
};

struct tune_outcome {
  const tuning_space* space = nullptr;
  problem_config config;
  std::vector<std::string> axis_names;  ///< the family's names of the shape's axes (M, N, K)
  std::string strategy;
  tune::objective goal = objective::time;
  std::size_t budget = 0;
  double budget_seconds = 0;  ///< 0: none
  std::uint64_t seed = 0;
  std::vector<evaluation> evaluations;   ///< in the order they were made
  std::vector<result_record> baselines;  ///< the family's library, at the same configuration
  double seconds = 0;                    ///< the search's wall time
  std::string stopped_by;                ///< "the budget", "the time budget", "the strategy (...)"
  std::string replayed_from;             ///< --replay: the recorded tune that answered every row
  /// The GPU model searched, when a tune spans GPUs of several models (each is searched apart,
  /// on its own GPUs); "" for a tune over one model.
  std::string model;
  /// A warm start: the points proposed first (the fastest points of the nearest sizes tuned
  /// before in the same run), and those sizes' keys ("int32 sum n=4096"); empty for a cold start.
  std::vector<std::size_t> start_points;
  std::vector<std::string> started_from;
  /// Each point's grid (by point; empty dims where the family plans the launch or it is not
  /// known), shared by the tunes of one space; null when none was given. And the GPU's SMs.
  std::shared_ptr<const std::vector<point_grid>> grids;
  int sm_count = 0;

  /// The passed evaluation at full fidelity with the least objective value: the fastest, or the
  /// one with the least energy per operation (brief or raced ones only when no full one has a
  /// value: their figures are rougher); null when none has one.
  const evaluation* best() const {
    const evaluation* out = nullptr;
    for (int pass = 0; pass < 2 && !out; ++pass)
      for (const auto& e : evaluations) {
        const double v = objective_value(e.record, goal);
        if (v == std::numeric_limits<double>::infinity() ||
            (pass == 0 && (e.level != fidelity::full || e.raced())))
          continue;
        if (!out || v < objective_value(out->record, goal)) out = &e;
      }
    return out;
  }
  /// Each point measured in full that passed, with its objective value (its better figure when
  /// measured twice: a store answer and a run), in the order first measured; a raced point, at its
  /// rough figure, only `with_raced`.
  std::vector<std::pair<std::size_t, double>> measured(bool with_raced) const {
    std::vector<std::pair<std::size_t, double>> out;
    std::map<std::size_t, std::size_t> at;  // point -> its place in out
    for (const auto& e : evaluations) {
      const double v = objective_value(e.record, goal);
      if (e.level != fidelity::full || (e.raced() && !with_raced) ||
          v == std::numeric_limits<double>::infinity())
        continue;
      const auto [it, fresh] = at.emplace(e.point, out.size());
      if (fresh)
        out.emplace_back(e.point, v);
      else
        out[it->second].second = std::min(out[it->second].second, v);
    }
    return out;
  }
  /// The evaluation (1-based, in order) at which the search first held a point within `within`
  /// (0.01: 1 %) of the best's objective value (a raced one's rough figure does not count); 0
  /// when there is no best.
  std::size_t found_at(double within = 0.01) const {
    const evaluation* b = best();
    if (!b) return 0;
    const double bar = objective_value(b->record, goal) * (1 + within);
    for (std::size_t i = 0; i < evaluations.size(); ++i)
      if (!evaluations[i].raced() && objective_value(evaluations[i].record, goal) <= bar)
        return i + 1;
    return 0;
  }
  /// The wall time (seconds since the search began) at which found_at()'s evaluation came back:
  /// the time to quality; 0 when there is no best.
  double found_after_s(double within = 0.01) const {
    const std::size_t k = found_at(within);
    return k ? evaluations[k - 1].at_s : 0;
  }
  /// How many evaluations were raced out (--race).
  std::size_t raced() const {
    std::size_t n = 0;
    for (const auto& e : evaluations) n += e.raced() ? 1 : 0;
    return n;
  }
  std::size_t measured() const {
    std::size_t n = 0;
    for (const auto& e : evaluations) n += e.from_store ? 0 : 1;
    return n;
  }
};

/// Whether two tunes are of the same space, GPU model and configuration but for their sizes (the
/// same dtype, op, input, real axes and number of size axes): a range tune's neighbours, and the
/// rows one size selector picks among. With `models_may_differ`, their GPU models may differ too
/// (the tunes of a header with a selector per model).
bool same_but_sizes(const tune_outcome& a, const tune_outcome& b, bool models_may_differ = false);

/// A warm start for tuning `next`, from the (at most two) tunes in `done` of the same space, GPU
/// model and configuration but its sizes, nearest to `next`'s sizes in log scale (the product over
/// the axes of larger / smaller): the points to propose first (the nearest's best, the second's
/// best, then the nearest's three next fastest and the second's next fastest, each once), and
/// those tunes' keys, nearest first. Empty when none was tuned before.
std::pair<std::vector<std::size_t>, std::vector<std::string>> warm_start(
    const std::vector<tune_outcome>& done, const tune_outcome& next);

/// The order in which to tune a range's configurations so that warm starts help most: of each
/// group that differs only in its sizes (the same dtype, op, input, real axes and number of size
/// axes), the largest first (the greatest product of its sizes; the first given on a tie), then
/// again and again the one farthest in log scale from every one already ordered (the first given
/// on a tie): on one axis, the other end, then the middle of the widest gap left. A cold search
/// is cheapest at the largest size, where the space is flattest (on a recorded H200 range tune of
/// reduce_tunable, 2^19 to 2^28, a cold bayes search
/// reached 1% of the optimum in a median 4.5 evaluations at 2^28 and 38.5 at 2^19), and a size
/// between two tuned ones is warm-started from both sides. Returns indexes into `configs`; the
/// groups in the order of their first configuration.
std::vector<std::size_t> range_order(const std::vector<problem_config>& configs);

/// Puts `tunes` from index `first` on (the tunes of `configs`, made in any order, several per
/// configuration over several GPU models) back in the order of `configs`, keeping the order of
/// the tunes of one configuration.
void sort_as_given(std::vector<tune_outcome>& tunes, std::size_t first,
                   const std::vector<problem_config>& configs);

/// What the nearest of those tunes measured: each passed full-fidelity evaluation's point and
/// objective value (a raced one's rough figure too), for strategy_options::prior; where the
/// points' grids are known (`grids`, `sm_count`, the occupancy measured), each value scaled by how
/// full the point's last wave of blocks is there against at `next`'s sizes. Empty when none was
/// tuned before, or when the nearest is more than 32 times as large or small (the product over
/// the axes): such a size runs in another regime, and its times would mislead the search.
std::vector<std::pair<std::size_t, double>> prior_of(const std::vector<tune_outcome>& done,
                                                     const tune_outcome& next);

}  // namespace kl::tune
