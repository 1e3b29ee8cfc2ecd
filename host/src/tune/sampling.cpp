// The strategies that need no model of the times: every point, a random sample, and successive
// halving, which ranks a sample by brief timings and times only the best of it in full.
#include "tune/strategy_base.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace kl::tune::detail {

namespace {

// Every point in the space's order: the reference the other strategies are measured against.
class exhaustive final : public strategy_base {
 public:
  exhaustive(const search_space& space, const strategy_options& options)
      : strategy_base(space, options) {}
  const char* name() const override { return "exhaustive"; }

 private:
  std::vector<proposal> next(std::size_t batch) override {
    while (first_open_ < space_.points.size() && ledger_.observed(first_open_, fidelity::full))
      ++first_open_;
    std::vector<proposal> out;
    for (std::size_t p = first_open_; p < space_.points.size() && out.size() < batch; ++p)
      if (!ledger_.observed(p, fidelity::full) && !pending(p, fidelity::full))
        out.push_back({p, fidelity::full});
    return out;
  }
  // The order is fixed in advance: the next points never depend on the last times.
  std::vector<proposal> next_ahead(std::size_t batch) override { return next(batch); }
  std::size_t first_open_ = 0;  ///< every point before it is observed
};

// Uniform sampling without replacement: the baseline a model or a local search must beat.
class random_sampling final : public strategy_base {
 public:
  random_sampling(const search_space& space, const strategy_options& options)
      : strategy_base(space, options) {}
  const char* name() const override { return "random"; }

 private:
  std::vector<proposal> next(std::size_t batch) override {
    std::vector<proposal> out;
    while (out.size() < batch) {
      const std::ptrdiff_t p = random_unobserved(out);
      if (p < 0) break;
      out.push_back({static_cast<std::size_t>(p), fidelity::full});
    }
    return out;
  }
  std::vector<proposal> next_ahead(std::size_t batch) override { return next(batch); }
};

// Successive halving with eta = 3 over the two fidelities there are: a random sample timed
// briefly, then its best third timed in full. More rungs would time a point twice at one level,
// which the contract rules out (and brief timings are what makes a wide first rung affordable).
// The sample is as large as the budget allows: n + ceil(n / 3) <= budget, all of the space when
// it fits. A budget too small for a first rung wider than eta times a random sample in full.
class halving final : public strategy_base {
 public:
  halving(const search_space& space, const strategy_options& options)
      : strategy_base(space, options) {}
  const char* name() const override { return "halving"; }

 private:
  static constexpr std::size_t eta = 3;
  static std::size_t keep(std::size_t rung) { return (rung + eta - 1) / eta; }

  // Planned at the first call, for the budget that is left then: a history from a store may have
  // spent some of it.
  void plan() {
    planned_ = true;
    const std::size_t points = space_.points.size();
    const std::size_t budget = options_.budget - ledger_.count();
    std::size_t sample = 0;
    while (sample < points && sample + 1 + keep(sample + 1) <= budget) ++sample;
    if (sample <= eta) {  // too small a sample to halve: time one in full
      brief_ = false;
      sample = std::min(points, budget);
    }
    sample_.resize(points);
    for (std::size_t i = 0; i < points; ++i) sample_[i] = i;
    shuffle(sample_, rng_);
    sample_.resize(sample);
  }

  std::vector<proposal> next(std::size_t batch) override {
    if (!planned_) plan();
    if (!brief_) return unobserved(sample_, fidelity::full, batch);
    std::vector<proposal> out = unobserved(sample_, fidelity::brief, batch);
    if (!out.empty()) return out;
    // Ahead of the first rung's last results: the second rung is chosen from all of them.
    for (const std::size_t p : sample_)
      if (pending(p, fidelity::brief)) return {};
    // The first rung is complete: its best third by the brief times, failures never among them.
    std::vector<std::size_t> ranked;
    for (const std::size_t p : sample_)
      if (!failed(ledger_.value(p, fidelity::brief))) ranked.push_back(p);
    std::stable_sort(ranked.begin(), ranked.end(), [this](std::size_t a, std::size_t b) {
      return ledger_.value(a, fidelity::brief) < ledger_.value(b, fidelity::brief);
    });
    ranked.resize(std::min(ranked.size(), keep(sample_.size())));
    return unobserved(ranked, fidelity::full, batch);
  }

  std::vector<proposal> unobserved(const std::vector<std::size_t>& rung, fidelity level,
                                   std::size_t batch) const {
    std::vector<proposal> out;
    for (const std::size_t p : rung) {
      if (out.size() == batch) break;
      if (!ledger_.observed(p, level) && !pending(p, level)) out.push_back({p, level});
    }
    return out;
  }
  // The first rung is a random sample fixed in advance, and the second starts once every brief
  // time is in (next() proposes nothing while one is pending).
  std::vector<proposal> next_ahead(std::size_t batch) override { return next(batch); }

  bool planned_ = false;
  bool brief_ = true;                ///< false: one rung, timed in full
  std::vector<std::size_t> sample_;  ///< the first rung, in random order
};

}  // namespace

std::unique_ptr<strategy> make_exhaustive(const search_space& space,
                                          const strategy_options& options) {
  return std::make_unique<exhaustive>(space, options);
}

std::unique_ptr<strategy> make_random(const search_space& space, const strategy_options& options) {
  return std::make_unique<random_sampling>(space, options);
}

std::unique_ptr<strategy> make_halving(const search_space& space, const strategy_options& options) {
  return std::make_unique<halving>(space, options);
}

}  // namespace kl::tune::detail
