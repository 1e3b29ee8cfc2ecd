// The search strategies of `kernlab tune`: which points of a tuning space to time next, given the
// times so far. Pure computation (no CUDA, no I/O): the tune command owns the space, the timing and
// the store, and asks a strategy for batches of points until it has nothing more to propose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kl::tune {

/// One tuning parameter: its name and its values in increasing order. Neighbouring values in
/// this list are "near" to each other (for local moves).
struct parameter {
  std::string name;
  std::vector<std::int64_t> values;
};

/// Every point a strategy may propose: each point is one value index per parameter. All are
/// valid (constraints and device limits were applied before); the list has no duplicates.
struct search_space {
  search_space() = default;
  search_space(std::vector<parameter> parameters_in,
               std::vector<std::vector<std::uint32_t>> points_in)
      : parameters(std::move(parameters_in)), points(std::move(points_in)) {}

  std::vector<parameter> parameters;
  std::vector<std::vector<std::uint32_t>> points;

  /// The index of the point with these coordinates, or -1. A hash map from coordinates to index
  /// is built on the first call and rebuilt when `points` has changed size or storage since; fill
  /// the space before the first call, as a point edited in place is not noticed. Safe to call from
  /// several threads at once.
  std::ptrdiff_t find(const std::vector<std::uint32_t>& coords) const;

 private:
  struct coords_hash {
    std::size_t operator()(const std::vector<std::uint32_t>& coords) const;
  };
  // The index behind find(). A copy of the space starts with an empty one (it is rebuilt on
  // demand), so search_space stays copyable and the lock is never shared between copies.
  struct lazy_index {
    lazy_index() = default;
    lazy_index(const lazy_index&) {}
    lazy_index& operator=(const lazy_index&) {
      std::lock_guard<std::mutex> lock(mutex);
      map.clear();
      built_for = nullptr;
      built_size = 0;
      return *this;
    }
    std::mutex mutex;
    std::unordered_map<std::vector<std::uint32_t>, std::size_t, coords_hash> map;
    const void* built_for = nullptr;  ///< points.data() when the map was built
    std::size_t built_size = 0;       ///< points.size() when the map was built
  };
  mutable lazy_index index_;
};

/// How carefully a point is timed: briefly (a few samples, for successive halving's first rungs)
/// or with the full stopping rule.
enum class fidelity { brief, full };

struct proposal {
  std::size_t point = 0;
  fidelity level = fidelity::full;
};

struct observation {
  std::size_t point = 0;
  fidelity level = fidelity::full;
  /// The time (lower is better); +infinity: the point failed (did not compile, wrong result,
  /// crashed). A NaN, zero or negative time is taken as a failure too: it cannot be a real time,
  /// and a failure is never the best.
  double value = 0;
};

struct strategy_options {
  std::uint64_t seed = 0;
  std::size_t budget = 100;  ///< evaluations in all (each proposal, brief or full, counts as one)
  /// Points proposed first, at full fidelity, before the strategy's own (a warm start: the best
  /// points of neighbouring problem sizes). They count against the budget like any other, and
  /// the strategy then goes on knowing their results.
  std::vector<std::size_t> start_points = {};
  /// What a neighbouring problem size measured (point, time), for the strategies that model the
  /// space (bayes: the model's prior mean, and its first length-scales); the others ignore it.
  std::vector<std::pair<std::size_t, double>> prior = {};
};

class strategy {
 public:
  virtual ~strategy() = default;
  virtual const char* name() const = 0;
  /// The next points to evaluate, at most max_batch (>= 1), given every observation so far in
  /// the order they were made (the driver returns one observation per proposal, in proposal order,
  /// before it calls again). Never proposes a point already observed at the same level, nor the
  /// same point twice in a batch. Empty: nothing more to propose (space exhausted or converged,
  /// or the budget is used). Deterministic: the same seed and history give the same proposals.
  ///
  /// The budget counts the observations in `history`. Each call must pass the previous call's
  /// history extended (observations the strategy did not ask for, from a store, are used as
  /// information like any other); a proposal that never came back is simply proposed again.
  /// Throws std::invalid_argument for max_batch 0, a point outside the space, or a history shorter
  /// than the previous call's.
  virtual std::vector<proposal> propose(const std::vector<observation>& history,
                                        std::size_t max_batch) = 0;

  /// The batch after `pending` (the last proposals, not observed yet), chosen before their
  /// results are in, so that it compiles while they are timed. The contract of propose() holds,
  /// none of `pending` is proposed again, and the budget counts `pending` as spent. Empty when
  /// the strategy cannot choose well without `pending`'s results (a local search's next step
  /// depends on them): the driver then waits for them and calls propose(). Deterministic: the
  /// same seed, history and pending give the same proposals. A later call passes `history`
  /// extended, with `pending`'s results or without (they are then proposed again as usual).
  virtual std::vector<proposal> propose_ahead(const std::vector<observation>& history,
                                              const std::vector<proposal>& pending,
                                              std::size_t max_batch) = 0;
};

/// "exhaustive", "random", "greedy", "annealing", "genetic", "halving", "bayes". Throws
/// std::invalid_argument naming the known strategies for an unknown name, and naming the problem
/// for a malformed space (a point with the wrong number of coordinates, a value index out of
/// range, a duplicate point). The strategy keeps its own copy of the space.
std::unique_ptr<strategy> make_strategy(const std::string& name, const search_space& space,
                                        const strategy_options& options);
std::vector<std::string> strategy_names();
/// One line per strategy for --help: name and what it does.
std::string strategy_help();

}  // namespace kl::tune
