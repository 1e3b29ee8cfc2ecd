#include "tune/outcome.hpp"
#include "tune/selector.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>

namespace kl::tune {

namespace {

// The farthest a size may be from the one tuned next (size_ratio) for its times to be the next
// search's prior (prior_of).
constexpr double max_prior_ratio = 32;

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

// What `from` measured (tune_outcome::measured). `as_at`, for a file whose grid is declared: each
// value scaled by how full the point's last wave of blocks is at `from`'s sizes against at
// `as_at`'s, as the selector's waves rule predicts (a GEMM tile that fills its waves at one size
// can leave most of the GPU idle in its last wave at the next).
std::vector<std::pair<std::size_t, double>> seen_from(const tune_outcome& from, bool with_raced,
                                                      const tune_outcome* as_at = nullptr) {
  auto out = from.measured(with_raced);
  if (!as_at) return out;
  const wave_table w = waves_of({&from});
  for (auto& [point, v] : out) {
    const double there = w.efficiency(point, from.config.shape());
    const double here = w.efficiency(point, as_at->config.shape());
    if (there > 0 && here > 0) v *= there / here;
  }
  return out;
}

// A tune's `k` fastest points as measured (raced points left out: their figure is rough, and they
// lost to the best by the race's margin), the best first.
std::vector<std::size_t> fastest_points(const tune_outcome& t, std::size_t k) {
  auto seen = seen_from(t, false);
  std::stable_sort(seen.begin(), seen.end(),
                   [](const auto& a, const auto& b) { return a.second < b.second; });
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < std::min(k, seen.size()); ++i) out.push_back(seen[i].first);
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
  for (const auto& r : ranked)
    if (!r.empty()) add(r.front());
  for (const auto& r : ranked)
    for (std::size_t i = 1; i < r.size(); ++i) add(r[i]);
  for (const auto* t : near) out.second.push_back(t->config.describe());
  return out;
}

std::vector<std::size_t> range_order(const std::vector<problem_config>& configs) {
  const auto group_of = [](const problem_config& c) {
    return std::make_tuple(c.dtype, c.op, c.input_mode, c.named_axes_text(), c.shape().size());
  };
  const auto volume = [](const problem_config& c) {
    double v = 1;
    for (const std::uint64_t n : c.shape()) v *= static_cast<double>(std::max<std::uint64_t>(n, 1));
    return v;
  };
  std::vector<std::size_t> out;
  std::vector<bool> placed(configs.size(), false);
  for (std::size_t first = 0; first < configs.size(); ++first) {
    if (placed[first]) continue;
    std::vector<std::size_t> group;  // this group's configurations not yet ordered
    for (std::size_t i = first; i < configs.size(); ++i)
      if (!placed[i] && group_of(configs[i]) == group_of(configs[first])) group.push_back(i);
    std::vector<std::size_t> chosen;
    const auto take = [&](std::size_t k) {
      chosen.push_back(group[k]);
      placed[group[k]] = true;
      group.erase(group.begin() + static_cast<std::ptrdiff_t>(k));
    };
    std::size_t largest = 0;
    for (std::size_t k = 1; k < group.size(); ++k)
      if (volume(configs[group[k]]) > volume(configs[group[largest]])) largest = k;
    take(largest);
    while (!group.empty()) {
      std::size_t farthest = 0;
      double widest = -1;
      for (std::size_t k = 0; k < group.size(); ++k) {
        double gap = std::numeric_limits<double>::infinity();
        for (const std::size_t c : chosen)
          gap = std::min(gap, std::log(size_ratio(configs[group[k]], configs[c])));
        if (gap > widest) widest = gap, farthest = k;
      }
      take(farthest);
    }
    out.insert(out.end(), chosen.begin(), chosen.end());
  }
  return out;
}

void sort_as_given(std::vector<tune_outcome>& tunes, std::size_t first,
                   const std::vector<problem_config>& configs) {
  std::map<std::string, std::size_t> given;
  for (std::size_t i = 0; i < configs.size(); ++i) given.emplace(configs[i].describe(), i);
  std::stable_sort(tunes.begin() + static_cast<std::ptrdiff_t>(first), tunes.end(),
                   [&](const tune_outcome& a, const tune_outcome& b) {
                     return given.at(a.config.describe()) < given.at(b.config.describe());
                   });
}

std::vector<std::pair<std::size_t, double>> prior_of(const std::vector<tune_outcome>& done,
                                                     const tune_outcome& next) {
  const auto near = nearest_tunes(done, next, 1);
  if (near.empty()) return {};
  // A size far away models another regime (a scan of 2 MiB runs from L2, one of 1 GiB from
  // DRAM): its times mislead more than they help, and the search does better with a design of its
  // own after the warm start. Replayed on exhaustive H200 tunes (2026-11-28, bayes, budget 100,
  // 30 seeds; range / independent tunes, median): the scan file's range 2^19..2^28 went from 42% to
  // 30% with this cut (2^19, tuned second, from 2^28's prior), the reduction's from 23% to 26%
  // (mean 31% to 30%), the matmul file's (1024^3..4096^3) from 60% to 59%.
  if (size_ratio(near.front()->config, next.config) > max_prior_ratio) return {};
  // Scaled wave by wave to this size: the prior is a model of every point's time here. The warm
  // start above stays with what was measured fastest; replayed on recorded H200 range tunes
  // (bayes, budget 100, seeds 1-5), scaling both sent the scan's search astray (its blocks wait
  // on each other and do not run in waves), scaling neither the matmul file's (its tiles do).
  return seen_from(*near.front(), true, &next);
}

}  // namespace kl::tune
