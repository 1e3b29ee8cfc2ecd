#include "tune/outcome.hpp"

#include <algorithm>

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
  std::vector<const tune_outcome*> near;
  for (const auto& t : done)
    if (same_but_sizes(t, next) && t.best() && t.config.shape() != next.config.shape())
      near.push_back(&t);
  std::stable_sort(near.begin(), near.end(), [&](const tune_outcome* a, const tune_outcome* b) {
    return size_ratio(a->config, next.config) < size_ratio(b->config, next.config);
  });
  std::pair<std::vector<std::size_t>, std::vector<std::string>> out;
  for (const auto* t : near) {
    if (out.second.size() == 2) break;
    const std::size_t p = t->best()->point;
    if (std::find(out.first.begin(), out.first.end(), p) == out.first.end()) out.first.push_back(p);
    out.second.push_back(t->config.describe());
  }
  return out;
}

}  // namespace kl::tune
