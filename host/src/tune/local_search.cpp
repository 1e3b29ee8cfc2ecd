// The local searches: greedy hill climbing with random restarts, and simulated annealing. Both
// move between neighbours (detail::neighbours): one step in one parameter's value list, or, in a
// sparse space, any value of one parameter, because a constraint that removes most of the grid
// makes the one-step paths between good points long. (On the tests' sparse, rugged space that
// took the mean excess of the best found over the optimum, over 25 seeds, from 5.5% to 4.8% for
// greedy and from 3.5% to 3.2% for annealing.)
#include "tune/strategy_base.hpp"

#include <cmath>
#include <cstddef>
#include <vector>

namespace kl::tune::detail {
namespace {

// Hill climbing: time every neighbour of the current point (a batch), move to the best if it is
// faster, and at a local optimum restart from a random point not yet timed. Steepest descent
// rather than first improvement, because a batch times the neighbours together anyway.
class greedy final : public strategy_base {
 public:
  greedy(const search_space& space, const strategy_options& options)
      : strategy_base(space, options), every_value_(sparse(space_)) {}
  const char* name() const override { return "greedy"; }

 private:
  std::vector<proposal> next(std::size_t batch) override {
    // Each turn either proposes, or moves to a strictly faster point, or restarts (which then
    // proposes, or finds the space exhausted): the loop ends.
    for (;;) {
      if (current_ < 0) {
        current_ = random_unobserved({});
        if (current_ < 0) return {};  // every point is timed
      }
      const auto here = static_cast<std::size_t>(current_);
      std::vector<std::size_t> around = neighbours(space_, here, every_value_);
      shuffle(around, rng_);  // which neighbours first, when the batch cannot take them all
      std::vector<proposal> out;
      if (!ledger_.observed(here, fidelity::full)) {
        // A new start: its neighbours go with it, as they come next unless it fails.
        out.push_back({here, fidelity::full});
      } else if (failed(ledger_.value(here, fidelity::full))) {
        current_ = -1;
        continue;
      }
      for (const std::size_t n : around)
        if (out.size() < batch && !ledger_.observed(n, fidelity::full))
          out.push_back({n, fidelity::full});
      if (!out.empty()) return out;

      // Every neighbour is timed: move to the fastest, or restart from a local optimum.
      std::size_t best = here;
      for (const std::size_t n : around)
        if (ledger_.value(n, fidelity::full) < ledger_.value(best, fidelity::full)) best = n;
      current_ = best == here ? -1 : static_cast<std::ptrdiff_t>(best);
    }
  }

  const bool every_value_;
  std::ptrdiff_t current_ = -1;  ///< the point the climb is at; -1: restart
};

// Simulated annealing. A batch is a few candidate moves from the current point, the best of which
// is then accepted by the Metropolis rule on the log of the time ratio: the walk judges relative
// differences, whatever the kernel's scale. The temperature falls geometrically with the budget
// spent, from one that accepts a 10% slower point about half the time to one that accepts a 1%
// slower point less than once in a hundred. A neighbour timed before costs nothing: the walk may
// step there at once. When every move around the current point is timed, or it failed, the walk
// restarts from a random point not yet timed.
class annealing final : public strategy_base {
 public:
  annealing(const search_space& space, const strategy_options& options)
      : strategy_base(space, options), every_value_(sparse(space_)) {}
  const char* name() const override { return "annealing"; }

 private:
  static constexpr double hot = 0.14;    // exp(-log(1.10) / 0.14) ~ 0.5
  static constexpr double cold = 0.002;  // exp(-log(1.01) / 0.002) < 0.01

  double temperature() const { return hot * std::pow(cold / hot, progress()); }

  bool accept(std::size_t from, std::size_t to) {
    const double a = ledger_.value(from, fidelity::full), b = ledger_.value(to, fidelity::full);
    if (failed(b)) return false;
    if (b <= a) return true;
    return uniform_unit(rng_) < std::exp(-std::log(b / a) / temperature());
  }

  std::vector<proposal> next(std::size_t batch) override {
    for (;;) {  // ends: each turn proposes, or restarts, which proposes or finds nothing left
      if (current_ < 0) {
        current_ = random_unobserved({});
        if (current_ < 0) return {};
        candidates_.clear();
      }
      const auto here = static_cast<std::size_t>(current_);
      if (!ledger_.observed(here, fidelity::full)) return start(here, batch);
      if (failed(ledger_.value(here, fidelity::full))) {
        current_ = -1;
        continue;
      }
      // The moves of the last batch: the best of those timed faces the Metropolis rule.
      std::ptrdiff_t best = -1;
      for (const std::size_t c : candidates_)
        if (ledger_.observed(c, fidelity::full) &&
            (best < 0 || ledger_.value(c, fidelity::full) <
                             ledger_.value(static_cast<std::size_t>(best), fidelity::full)))
          best = static_cast<std::ptrdiff_t>(c);
      candidates_.clear();
      if (best >= 0 && accept(here, static_cast<std::size_t>(best))) current_ = best;

      std::vector<proposal> out = moves(batch);
      if (out.empty()) {
        current_ = -1;
        continue;
      }
      for (const proposal& p : out) candidates_.push_back(p.point);
      return out;
    }
  }

  // A new walk at `here`: the point itself, and random neighbours of it as the first moves.
  std::vector<proposal> start(std::size_t here, std::size_t batch) {
    std::vector<proposal> out{{here, fidelity::full}};
    candidates_.clear();
    std::vector<std::size_t> around = neighbours(space_, here, every_value_);
    shuffle(around, rng_);
    for (const std::size_t n : around)
      if (out.size() < batch && !ledger_.observed(n, fidelity::full)) {
        out.push_back({n, fidelity::full});
        candidates_.push_back(n);
      }
    return out;
  }

  // Random moves from the current point not yet timed. Until the first is found, a move to a
  // timed neighbour is judged at once, so the walk goes on through known ground for free; the
  // number of tries is bounded, as the known ground may be all there is nearby.
  std::vector<proposal> moves(std::size_t batch) {
    std::vector<proposal> out;
    std::vector<std::size_t> around =
        neighbours(space_, static_cast<std::size_t>(current_), every_value_);
    for (std::size_t tries = 4 * around.size() + 8; tries > 0 && out.size() < batch; --tries) {
      if (around.empty()) break;
      const std::size_t n = around[uniform_index(rng_, around.size())];
      if (in(out, n)) continue;
      if (!ledger_.observed(n, fidelity::full)) {
        out.push_back({n, fidelity::full});
      } else if (out.empty() && accept(static_cast<std::size_t>(current_), n)) {
        current_ = static_cast<std::ptrdiff_t>(n);
        around = neighbours(space_, n, every_value_);
      }
    }
    return out;
  }

  const bool every_value_;
  std::ptrdiff_t current_ = -1;          ///< the walk's point; -1: restart
  std::vector<std::size_t> candidates_;  ///< the moves proposed last, from current_
};

}  // namespace

std::unique_ptr<strategy> make_greedy(const search_space& space, const strategy_options& options) {
  return std::make_unique<greedy>(space, options);
}

std::unique_ptr<strategy> make_annealing(const search_space& space,
                                         const strategy_options& options) {
  return std::make_unique<annealing>(space, options);
}

}  // namespace kl::tune::detail
