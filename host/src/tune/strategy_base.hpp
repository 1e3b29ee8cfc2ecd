// What the strategies share (internal to tune/): what the history says about each point, the
// random numbers, local moves in the space, and the checks that every strategy keeps the contract
// of strategy::propose.
#pragma once

#include "tune/strategy.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <utility>
#include <vector>

namespace kl::tune::detail {

// Random numbers that are the same with every standard library: std::mt19937_64 is specified
// bit for bit, its distributions are not, so the few we need are written here.

/// Uniform in [0, n), n >= 1 (by rejection: no modulo bias).
std::size_t uniform_index(std::mt19937_64& rng, std::size_t n);
/// Uniform in [0, 1).
double uniform_unit(std::mt19937_64& rng);
/// Fisher-Yates over uniform_index.
template <typename T>
void shuffle(std::vector<T>& items, std::mt19937_64& rng) {
  for (std::size_t i = items.size(); i > 1; --i)
    std::swap(items[i - 1], items[uniform_index(rng, i)]);
}

/// A time that cannot be the best: +infinity (the point failed), NaN, zero or negative.
bool failed(double value);

/// What the history says about each point at each level: taken in incrementally, since each call
/// of propose passes the previous history extended.
class ledger {
 public:
  explicit ledger(std::size_t points);
  /// Takes in the observations after those already seen. Throws std::invalid_argument for a point
  /// outside the space or a history shorter than the last one.
  void update(const std::vector<observation>& history);
  bool observed(std::size_t point, fidelity level) const { return seen(level)[point] != 0; }
  /// The observed time, +infinity for a failure (see failed()); the first observation counts when
  /// a point was observed more than once at one level.
  double value(std::size_t point, fidelity level) const;
  /// Observations taken in: what the budget counts.
  std::size_t count() const { return count_; }
  /// The points observed at `level`, in the order of their first observation.
  const std::vector<std::size_t>& order(fidelity level) const {
    return order_[static_cast<int>(level)];
  }

 private:
  const std::vector<std::uint8_t>& seen(fidelity level) const {
    return seen_[static_cast<int>(level)];
  }
  std::vector<std::uint8_t> seen_[2];
  std::vector<double> value_[2];
  std::vector<std::size_t> order_[2];
  std::size_t count_ = 0;
};

/// The local moves from `point`: for each parameter, in each direction, the nearest value that
/// makes a point of the space with the other parameters kept (so a constraint's hole is jumped
/// over). With `every_value`, every other value of each parameter that makes a point (single-
/// parameter jumps, for sparse spaces). In parameter order, without duplicates.
std::vector<std::size_t> neighbours(const search_space& space, std::size_t point, bool every_value);

/// The point nearest to `coords` (value indices, maybe no point of the space), by the sum over
/// parameters of the index distance divided by the parameter's number of steps; ties are broken
/// at random. The space must not be empty.
std::size_t nearest_point(const search_space& space, const std::vector<std::uint32_t>& coords,
                          std::mt19937_64& rng);

/// Whether the space holds less than half of its full grid (the product of the value counts):
/// then one-step moves are often blocked by a constraint, and local moves jump to any value of a
/// parameter (neighbours' every_value).
bool sparse(const search_space& space);

/// The base of every strategy: keeps the ledger, the budget and the batch size, and checks what
/// a strategy proposes against the contract (a violation is a bug here: std::logic_error).
class strategy_base : public strategy {
 public:
  std::vector<proposal> propose(const std::vector<observation>& history,
                                std::size_t max_batch) final;
  std::vector<proposal> propose_ahead(const std::vector<observation>& history,
                                      const std::vector<proposal>& pending,
                                      std::size_t max_batch) final;

 protected:
  strategy_base(const search_space& space, const strategy_options& options);
  /// The next proposals, at most `batch` (>= 1, already within the budget); the ledger is current.
  virtual std::vector<proposal> next(std::size_t batch) = 0;
  /// For propose_ahead: the proposals after the pending ones (pending() says which), or none
  /// when the strategy needs their results first (the default). Never a pending point.
  virtual std::vector<proposal> next_ahead(std::size_t /*batch*/) { return {}; }
  /// Whether `point` is pending at `level`: proposed and not observed (only during
  /// propose_ahead; never during propose).
  bool pending(std::size_t point, fidelity level) const;
  const std::vector<proposal>& pending_proposals() const { return pending_; }

  /// The fraction of the budget used so far, in [0, 1].
  double progress() const;
  bool in(const std::vector<proposal>& batch, std::size_t point) const;
  /// A point not observed at full fidelity, not pending and not in `batch`, uniformly at random;
  /// -1 when none is left.
  std::ptrdiff_t random_unobserved(const std::vector<proposal>& batch);

  const search_space space_;
  const strategy_options options_;
  ledger ledger_;
  std::mt19937_64 rng_;

 private:
  // A random order of the points, drawn once: random_unobserved() walks it, so a draw costs
  // O(1) amortised. cursor_ only passes points observed at full fidelity.
  std::vector<std::size_t> order_;
  std::size_t cursor_ = 0;
  std::vector<proposal> pending_;  // during propose_ahead only
  // The start points (options_.start_points) not observed at full fidelity, nor pending, at
  // most `limit`; and whether one is pending.
  std::vector<proposal> start_proposals(std::size_t limit) const;
  bool start_pending() const;
  // The checks of the contract on a batch, for both kinds of call.
  void check(const std::vector<proposal>& batch, std::size_t limit) const;
};

std::unique_ptr<strategy> make_exhaustive(const search_space& space,
                                          const strategy_options& options);
std::unique_ptr<strategy> make_random(const search_space& space, const strategy_options& options);
std::unique_ptr<strategy> make_greedy(const search_space& space, const strategy_options& options);
std::unique_ptr<strategy> make_annealing(const search_space& space,
                                         const strategy_options& options);
std::unique_ptr<strategy> make_genetic(const search_space& space, const strategy_options& options);
std::unique_ptr<strategy> make_halving(const search_space& space, const strategy_options& options);
std::unique_ptr<strategy> make_bayes(const search_space& space, const strategy_options& options);

}  // namespace kl::tune::detail
