// A small genetic algorithm. A generation is one batch of children (handed out in pieces when the
// driver's batches are smaller); the next population is the best of parents and children
// ((mu + lambda) selection, so the best point found is never lost).
#include "tune/strategy_base.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kl::tune::detail {
namespace {

class genetic final : public strategy_base {
 public:
  genetic(const search_space& space, const strategy_options& options)
      : strategy_base(space, options),
        // About a tenth of the budget, within 10..20: smaller populations converge before they
        // have seen the space, larger ones leave too few generations.
        size_(std::clamp<std::size_t>(options.budget / 10, 10, 20)) {}
  const char* name() const override { return "genetic"; }

 private:
  static constexpr std::size_t tournament = 3;
  static constexpr int attempts = 8;  // children tried before an immigrant takes the place

  std::vector<proposal> next(std::size_t batch) override {
    std::vector<proposal> out = untimed(batch);
    if (!out.empty()) return out;
    breed();
    return untimed(batch);
  }

  std::vector<proposal> untimed(std::size_t batch) const {
    std::vector<proposal> out;
    for (const proposal& c : children_)
      if (out.size() < batch && !ledger_.observed(c.point, fidelity::full)) out.push_back(c);
    return out;
  }

  // The generation is timed: select the next population and make its children. Failures never
  // join the population; with fewer than two parents, the children are random points.
  void breed() {
    std::vector<std::size_t> pool = population_;
    for (const proposal& c : children_)
      if (!failed(ledger_.value(c.point, fidelity::full))) pool.push_back(c.point);
    std::sort(pool.begin(), pool.end());
    pool.erase(std::unique(pool.begin(), pool.end()), pool.end());
    std::stable_sort(pool.begin(), pool.end(), [this](std::size_t a, std::size_t b) {
      return ledger_.value(a, fidelity::full) < ledger_.value(b, fidelity::full);
    });
    if (pool.size() > size_) pool.resize(size_);
    population_ = std::move(pool);

    children_.clear();
    while (children_.size() < size_) {
      const std::ptrdiff_t child = population_.size() < 2 ? -1 : offspring();
      const std::ptrdiff_t p = child >= 0 ? child : random_unobserved(children_);
      if (p < 0) break;  // every point is timed
      children_.push_back({static_cast<std::size_t>(p), fidelity::full});
    }
  }

  // The population is sorted best first, so the lowest of a few random ranks wins.
  std::size_t select() {
    std::size_t rank = uniform_index(rng_, population_.size());
    for (std::size_t i = 1; i < tournament; ++i)
      rank = std::min(rank, uniform_index(rng_, population_.size()));
    return population_[rank];
  }

  // A child not yet timed nor in this generation, or -1. Uniform crossover, repaired to the
  // nearest point of the space when the mix breaks a constraint; then on average one neighbour
  // move (each parameter mutates with probability 1 / parameters), and more until the child is new.
  std::ptrdiff_t offspring() {
    const std::size_t dims = space_.parameters.size();
    for (int attempt = 0; attempt < attempts; ++attempt) {
      const auto& a = space_.points[select()];
      const auto& b = space_.points[select()];
      std::vector<std::uint32_t> coords(dims);
      for (std::size_t d = 0; d < dims; ++d) coords[d] = uniform_index(rng_, 2) ? a[d] : b[d];
      const std::ptrdiff_t found = space_.find(coords);
      std::size_t child =
          found >= 0 ? static_cast<std::size_t>(found) : nearest_point(space_, coords, rng_);
      for (std::size_t d = 0; d < dims; ++d)
        if (uniform_index(rng_, dims) == 0) child = mutate(child, false);
      if (!fresh(child)) child = mutate(child, true);
      if (fresh(child)) return static_cast<std::ptrdiff_t>(child);
    }
    return -1;
  }

  // A random one-step neighbour of `point` (with `fresh_only`, one not timed nor a child yet); the
  // point itself when there is none. One-step moves even in a sparse space, unlike the local
  // searches: crossover makes the long jumps already, and on the tests' rugged space mutations to
  // any value left the best found 3% off the optimum on average over 25 seeds, one-step ones 0.5%.
  std::size_t mutate(std::size_t point, bool fresh_only) {
    std::vector<std::size_t> around = neighbours(space_, point, false);
    if (fresh_only)
      around.erase(
          std::remove_if(around.begin(), around.end(), [this](std::size_t n) { return !fresh(n); }),
          around.end());
    return around.empty() ? point : around[uniform_index(rng_, around.size())];
  }

  bool fresh(std::size_t point) const {
    return !ledger_.observed(point, fidelity::full) && !in(children_, point);
  }

  const std::size_t size_;
  std::vector<std::size_t> population_;  ///< timed, successful, best first
  std::vector<proposal> children_;       ///< the generation being timed
};

}  // namespace

std::unique_ptr<strategy> make_genetic(const search_space& space, const strategy_options& options) {
  return std::make_unique<genetic>(space, options);
}

}  // namespace kl::tune::detail
