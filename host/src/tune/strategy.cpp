#include "tune/strategy.hpp"

#include "tune/strategy_base.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace kl::tune {

std::size_t search_space::coords_hash::operator()(const std::vector<std::uint32_t>& coords) const {
  // SplitMix64's finaliser after each coordinate: they are small integers, and a plain combination
  // of them would leave most bits of the hash the same for every point.
  std::uint64_t h = coords.size();
  for (const std::uint32_t c : coords) {
    h = (h ^ c) + 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
    h ^= h >> 31;
  }
  return static_cast<std::size_t>(h);
}

std::ptrdiff_t search_space::find(const std::vector<std::uint32_t>& coords) const {
  std::lock_guard<std::mutex> lock(index_.mutex);
  if (index_.built_for != static_cast<const void*>(points.data()) ||
      index_.built_size != points.size()) {
    index_.map.clear();
    index_.map.reserve(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) index_.map.emplace(points[i], i);
    index_.built_for = points.data();
    index_.built_size = points.size();
  }
  const auto it = index_.map.find(coords);
  return it == index_.map.end() ? -1 : static_cast<std::ptrdiff_t>(it->second);
}

namespace {

struct entry {
  const char* name;
  const char* help;
  std::unique_ptr<strategy> (*make)(const search_space&, const strategy_options&);
};

const entry strategies[] = {
    {"exhaustive", "every point, in the space's order (ignores the seed)", detail::make_exhaustive},
    {"random", "uniform sampling without replacement", detail::make_random},
    {"greedy",
     "hill climbing over one-step neighbours, restarting at random from each local optimum",
     detail::make_greedy},
    {"annealing", "simulated annealing over neighbours, cooling as the budget is spent",
     detail::make_annealing},
    {"genetic",
     "a small genetic algorithm: tournament selection, uniform crossover, neighbour mutation",
     detail::make_genetic},
    {"halving", "successive halving: a brief timing of a sample, a full one of its best third",
     detail::make_halving},
    {"bayes", "Bayesian optimisation: a Gaussian process on log(time), expected improvement",
     detail::make_bayes},
};

// The space must be what search_space promises, or the strategies would index out of range or
// propose one point twice under two indices.
void check_space(const search_space& space) {
  const std::size_t dims = space.parameters.size();
  for (std::size_t i = 0; i < space.points.size(); ++i) {
    const auto& point = space.points[i];
    if (point.size() != dims)
      throw std::invalid_argument("search space: point " + std::to_string(i) + " has " +
                                  std::to_string(point.size()) + " coordinates for " +
                                  std::to_string(dims) + " parameters");
    for (std::size_t d = 0; d < dims; ++d)
      if (point[d] >= space.parameters[d].values.size())
        throw std::invalid_argument(
            "search space: point " + std::to_string(i) + " has value index " +
            std::to_string(point[d]) + " for parameter '" + space.parameters[d].name +
            "', which has " + std::to_string(space.parameters[d].values.size()) + " values");
    const std::ptrdiff_t first = space.find(point);
    if (first != static_cast<std::ptrdiff_t>(i))
      throw std::invalid_argument("search space: points " + std::to_string(first) + " and " +
                                  std::to_string(i) + " are the same");
  }
}

}  // namespace

std::unique_ptr<strategy> make_strategy(const std::string& name, const search_space& space,
                                        const strategy_options& options) {
  for (const entry& e : strategies)
    if (name == e.name) {
      check_space(space);
      return e.make(space, options);
    }
  std::string known;
  for (const entry& e : strategies) known += (known.empty() ? "" : ", ") + std::string(e.name);
  throw std::invalid_argument("unknown search strategy '" + name + "' (known: " + known + ")");
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const entry& e : strategies) names.emplace_back(e.name);
  return names;
}

std::string strategy_help() {
  std::string text;
  for (const entry& e : strategies) {
    std::string name = e.name;
    name.resize(std::max<std::size_t>(name.size() + 2, 12), ' ');
    text += name + e.help + "\n";
  }
  return text;
}

namespace detail {

std::size_t uniform_index(std::mt19937_64& rng, std::size_t n) {
  // Rejection of the top partial copy of [0, n): plain modulo would favour the low values.
  const std::uint64_t range = n;
  const std::uint64_t limit =
      std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % range;
  std::uint64_t draw = rng();
  while (draw >= limit) draw = rng();
  return static_cast<std::size_t>(draw % range);
}

double uniform_unit(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;  // the top 53 bits: every double in [0, 1)
}

bool failed(double value) { return !(value > 0) || !std::isfinite(value); }

ledger::ledger(std::size_t points) {
  for (int level = 0; level < 2; ++level) {
    seen_[level].assign(points, 0);
    value_[level].assign(points, std::numeric_limits<double>::infinity());
  }
}

void ledger::update(const std::vector<observation>& history) {
  if (history.size() < count_)
    throw std::invalid_argument("strategy history: " + std::to_string(history.size()) +
                                " observations, fewer than the " + std::to_string(count_) +
                                " of the previous call (each call takes the whole history)");
  for (; count_ < history.size(); ++count_) {
    const observation& o = history[count_];
    const std::size_t points = seen_[0].size();
    if (o.point >= points)
      throw std::invalid_argument("strategy history: observation " + std::to_string(count_) +
                                  " is of point " + std::to_string(o.point) +
                                  ", outside the space of " + std::to_string(points) + " points");
    const int level = static_cast<int>(o.level);
    if (seen_[level][o.point]) continue;
    seen_[level][o.point] = 1;
    value_[level][o.point] = failed(o.value) ? std::numeric_limits<double>::infinity() : o.value;
    order_[level].push_back(o.point);
  }
}

double ledger::value(std::size_t point, fidelity level) const {
  return value_[static_cast<int>(level)][point];
}

std::vector<std::size_t> neighbours(const search_space& space, std::size_t point,
                                    bool every_value) {
  std::vector<std::size_t> found;
  std::vector<std::uint32_t> coords = space.points[point];
  // Each move changes one parameter to a value of its own, so no point is found twice.
  const auto add = [&found](std::ptrdiff_t p) {
    if (p >= 0) found.push_back(static_cast<std::size_t>(p));
  };
  for (std::size_t d = 0; d < coords.size(); ++d) {
    const std::uint32_t here = coords[d];
    const auto count = static_cast<std::uint32_t>(space.parameters[d].values.size());
    if (every_value) {
      for (std::uint32_t v = 0; v < count; ++v) {
        if (v == here) continue;
        coords[d] = v;
        add(space.find(coords));
      }
    } else {
      for (std::uint32_t v = here; v-- > 0;) {  // down: the nearest value that makes a point
        coords[d] = v;
        if (const std::ptrdiff_t p = space.find(coords); p >= 0) {
          add(p);
          break;
        }
      }
      for (std::uint32_t v = here + 1; v < count; ++v) {  // up
        coords[d] = v;
        if (const std::ptrdiff_t p = space.find(coords); p >= 0) {
          add(p);
          break;
        }
      }
    }
    coords[d] = here;
  }
  return found;
}

std::size_t nearest_point(const search_space& space, const std::vector<std::uint32_t>& coords,
                          std::mt19937_64& rng) {
  std::vector<double> step(space.parameters.size());
  for (std::size_t d = 0; d < step.size(); ++d)
    step[d] = 1.0 / std::max<double>(1, static_cast<double>(space.parameters[d].values.size()) - 1);
  double nearest = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> ties;
  for (std::size_t i = 0; i < space.points.size(); ++i) {
    double distance = 0;
    for (std::size_t d = 0; d < step.size(); ++d)
      distance += std::abs(static_cast<double>(space.points[i][d]) - coords[d]) * step[d];
    // A tolerance, so that equal distances summed in another order still tie.
    if (distance < nearest - 1e-9) {
      nearest = distance;
      ties.assign(1, i);
    } else if (distance <= nearest + 1e-9) {
      ties.push_back(i);
    }
  }
  return ties[uniform_index(rng, ties.size())];
}

bool sparse(const search_space& space) {
  double grid = 1;
  for (const parameter& p : space.parameters) grid *= static_cast<double>(p.values.size());
  return static_cast<double>(space.points.size()) < grid / 2;
}

strategy_base::strategy_base(const search_space& space, const strategy_options& options)
    : space_(space), options_(options), ledger_(space.points.size()), rng_(options.seed) {
  for (const std::size_t p : options_.start_points)
    if (p >= space_.points.size())
      throw std::invalid_argument("start point " + std::to_string(p) + " is outside the space of " +
                                  std::to_string(space_.points.size()) + " points");
  order_.resize(space_.points.size());
  for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = i;
  shuffle(order_, rng_);
}

std::vector<proposal> strategy_base::propose(const std::vector<observation>& history,
                                             std::size_t max_batch) {
  if (max_batch == 0)
    throw std::invalid_argument(std::string("strategy ") + name() + ": max_batch must be >= 1");
  ledger_.update(history);
  const std::size_t used = ledger_.count();
  if (used >= options_.budget) return {};
  const std::size_t limit = std::min(max_batch, options_.budget - used);
  std::vector<proposal> batch = start_proposals(limit);
  if (batch.empty()) batch = next(limit);
  check(batch, limit);
  return batch;
}

std::vector<proposal> strategy_base::start_proposals(std::size_t limit) const {
  std::vector<proposal> out;
  for (const std::size_t p : options_.start_points)
    if (out.size() < limit && !ledger_.observed(p, fidelity::full) && !pending(p, fidelity::full) &&
        !in(out, p))
      out.push_back({p, fidelity::full});
  return out;
}

bool strategy_base::start_pending() const {
  return std::any_of(options_.start_points.begin(), options_.start_points.end(),
                     [&](std::size_t p) { return pending(p, fidelity::full); });
}

std::vector<proposal> strategy_base::propose_ahead(const std::vector<observation>& history,
                                                   const std::vector<proposal>& pending,
                                                   std::size_t max_batch) {
  if (max_batch == 0)
    throw std::invalid_argument(std::string("strategy ") + name() + ": max_batch must be >= 1");
  ledger_.update(history);
  for (const proposal& p : pending)
    if (p.point >= space_.points.size())
      throw std::invalid_argument(std::string("strategy ") + name() + ": pending point " +
                                  std::to_string(p.point) + " is outside the space");
  const std::size_t used = ledger_.count() + pending.size();
  if (used >= options_.budget) return {};
  const std::size_t limit = std::min(max_batch, options_.budget - used);
  pending_ = pending;
  std::vector<proposal> batch;
  try {
    // The start points first; while one is pending the strategy waits for its result.
    batch = start_proposals(limit);
    if (batch.empty() && !start_pending()) batch = next_ahead(limit);
  } catch (...) {
    pending_.clear();
    throw;
  }
  pending_.clear();
  for (const proposal& p : batch)
    if (std::any_of(pending.begin(), pending.end(),
                    [&](const proposal& q) { return q.point == p.point && q.level == p.level; }))
      throw std::logic_error(std::string("strategy ") + name() + " broke its contract: point " +
                             std::to_string(p.point) + " is pending and was proposed again");
  check(batch, limit);
  return batch;
}

void strategy_base::check(const std::vector<proposal>& batch, std::size_t limit) const {
  // The contract, checked here once for every strategy: a violation is a bug in the strategy.
  const auto broken = [&](const std::string& what) {
    return std::logic_error(std::string("strategy ") + name() + " broke its contract: " + what);
  };
  if (batch.size() > limit)
    throw broken(std::to_string(batch.size()) + " proposals where at most " +
                 std::to_string(limit) + " were allowed");
  std::vector<std::size_t> points;
  for (const proposal& p : batch) {
    if (p.point >= space_.points.size())
      throw broken("point " + std::to_string(p.point) + " is outside the space");
    if (ledger_.observed(p.point, p.level))
      throw broken("point " + std::to_string(p.point) + " was already observed at that level");
    points.push_back(p.point);
  }
  std::sort(points.begin(), points.end());
  if (const auto twice = std::adjacent_find(points.begin(), points.end()); twice != points.end())
    throw broken("point " + std::to_string(*twice) + " twice in one batch");
}

bool strategy_base::pending(std::size_t point, fidelity level) const {
  return std::any_of(pending_.begin(), pending_.end(),
                     [&](const proposal& p) { return p.point == point && p.level == level; });
}

double strategy_base::progress() const {
  if (options_.budget == 0) return 1;
  return std::min(1.0, static_cast<double>(ledger_.count()) / static_cast<double>(options_.budget));
}

bool strategy_base::in(const std::vector<proposal>& batch, std::size_t point) const {
  return std::any_of(batch.begin(), batch.end(),
                     [point](const proposal& p) { return p.point == point; });
}

std::ptrdiff_t strategy_base::random_unobserved(const std::vector<proposal>& batch) {
  while (cursor_ < order_.size() && ledger_.observed(order_[cursor_], fidelity::full)) ++cursor_;
  for (std::size_t i = cursor_; i < order_.size(); ++i) {
    const std::size_t p = order_[i];
    if (!ledger_.observed(p, fidelity::full) && !in(batch, p) && !pending(p, fidelity::full))
      return static_cast<std::ptrdiff_t>(p);
  }
  return -1;
}

}  // namespace detail
}  // namespace kl::tune
