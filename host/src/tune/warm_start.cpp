#include "tune/outcome.hpp"

#include <algorithm>
#include <limits>

namespace kl::tune {

namespace {

// How far apart two configurations' sizes are: the product over the axes of larger / smaller.
double size_ratio(const problem_config& a, const problem_config& b) {
  const auto x = a.shape(), y = b.shape();
  double r = 1;
  for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
    const double u = static_cast<double>(std::max<std::uint64_t>(x[i], 1));
    const double v = static_cast<double>(std::max<std::uint64_t>(y[i], 1));
    r *= u > v ? u / v : v / u;
  }
  return r;
}

// A tune's `k` fastest points under its objective: passed, at full fidelity and timed in full
// (a raced point's figure is rough, and it lost to the best by the margin), fastest first; the
// best first of all.
std::vector<std::size_t> fastest_points(const tune_outcome& t, std::size_t k) {
  std::vector<const evaluation*> full;
  for (const auto& e : t.evaluations)
    if (e.level == fidelity::full && !e.raced() &&
        objective_value(e.record, t.goal) != std::numeric_limits<double>::infinity())
      full.push_back(&e);
  std::stable_sort(full.begin(), full.end(), [&](const evaluation* a, const evaluation* b) {
    return objective_value(a->record, t.goal) < objective_value(b->record, t.goal);
  });
  std::vector<std::size_t> out = {t.best()->point};
  for (const auto* e : full) {
    if (out.size() == k) break;
    if (std::find(out.begin(), out.end(), e->point) == out.end()) out.push_back(e->point);
  }
  return out;
}

// The tunes in `done` of the same space, GPU model and configuration as `next` but its sizes,
// with a best, nearest to `next` in log scale first (the first tuned on a tie); at most `k`.
std::vector<const tune_outcome*> nearest_tunes(const std::vector<tune_outcome>& done,
                                               const tune_outcome& next, std::size_t k) {
  std::vector<const tune_outcome*> near;
  for (const auto& t : done)
    if (same_but_sizes(t, next) && t.best() && t.config.shape() != next.config.shape())
      near.push_back(&t);
  std::stable_sort(near.begin(), near.end(), [&](const tune_outcome* a, const tune_outcome* b) {
    return size_ratio(a->config, next.config) < size_ratio(b->config, next.config);
  });
  if (near.size() > k) near.resize(k);
  return near;
}

}  // namespace

bool same_but_sizes(const tune_outcome& a, const tune_outcome& b, bool models_may_differ) {
  return a.space == b.space && (models_may_differ || a.model == b.model) &&
         a.config.dtype == b.config.dtype && a.config.op == b.config.op &&
         a.config.input_mode == b.config.input_mode &&
         a.config.named_axes_text() == b.config.named_axes_text() &&
         a.config.shape().size() == b.config.shape().size();
}

std::pair<std::vector<std::size_t>, std::vector<std::string>> warm_start(
    const std::vector<tune_outcome>& done, const tune_outcome& next) {
  const auto near = nearest_tunes(done, next, 2);
  // Each neighbour's fastest points: the best of one size is often only among the first few of
  // the next (a recorded H200 range tune of reduce_tunable: the next size's optimum within 1% lay
  // at rank 0 to 4 of the nearest size's ranking, at rank 16 once in 11 sizes).
  std::vector<std::vector<std::size_t>> ranked;
  for (const auto* t : near) ranked.push_back(fastest_points(*t, t == near.front() ? 4 : 2));
  // The nearest's best, the second's best, then the nearest's runners-up, then the second's.
  std::pair<std::vector<std::size_t>, std::vector<std::string>> out;
  const auto add = [&](std::size_t p) {
    if (std::find(out.first.begin(), out.first.end(), p) == out.first.end()) out.first.push_back(p);
  };
  for (const auto& r : ranked) add(r.front());
  for (const auto& r : ranked)
    for (std::size_t i = 1; i < r.size(); ++i) add(r[i]);
  for (const auto* t : near) out.second.push_back(t->config.describe());
  return out;
}

std::vector<std::pair<std::size_t, double>> prior_of(const std::vector<tune_outcome>& done,
                                                     const tune_outcome& next) {
  std::vector<std::pair<std::size_t, double>> out;
  const auto near = nearest_tunes(done, next, 1);
  if (near.empty()) return out;
  for (const auto& e : near.front()->evaluations) {
    const double v = objective_value(e.record, near.front()->goal);
    if (e.level == fidelity::full && v != std::numeric_limits<double>::infinity())
      out.emplace_back(e.point, v);
  }
  return out;
}

}  // namespace kl::tune
