// Bayesian optimisation: a Gaussian process (gaussian_process.hpp) models log(time) over the
// parameters' normalised value indices, and the points of largest expected improvement are timed
// next. The space is enumerable, so the acquisition is maximised exactly, over every point not
// yet timed, instead of by an inner optimiser.
#include "tune/gaussian_process.hpp"
#include "tune/strategy_base.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <optional>
#include <vector>

namespace kl::tune::detail {
namespace {

// Expected improvement below `best` of a normal with this mean and deviation.
double expected_improvement(double mean, double deviation, double best) {
  const double gain = best - mean;
  if (deviation < 1e-12) return std::max(gain, 0.0);
  const double z = gain / deviation;
  const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
  const double pdf = 0.3989422804014327 * std::exp(-0.5 * z * z);  // 1 / sqrt(2 pi)
  return gain * cdf + deviation * pdf;
}

class bayes final : public strategy_base {
 public:
  bayes(const search_space& space, const strategy_options& options)
      : strategy_base(space, options), features_(space_.points.size(), space_.parameters.size()) {
    for (std::size_t i = 0; i < space_.points.size(); ++i)
      for (std::size_t d = 0; d < space_.parameters.size(); ++d) {
        const auto steps = static_cast<double>(space_.parameters[d].values.size()) - 1;
        features_(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(d)) =
            steps > 0 ? space_.points[i][d] / steps : 0.0;
      }
    learn_prior();
    if (prior_.size() == 0) design();
  }
  const char* name() const override { return "bayes"; }

 private:
  // The initial design is about a tenth of the budget, at least 8 points: the first fit has one
  // length-scale per parameter to settle, and fewer points would leave it to the prior.
  static constexpr std::size_t min_design = 8;
  // Candidates drawn for each design point; the one farthest from those chosen is kept.
  static constexpr std::size_t design_candidates = 32;
  // The hyperparameters are fitted again when the successful observations have grown by this
  // factor since the last fit: they change slowly, and a fit costs a hundred factorisations.
  static constexpr double refit_growth = 1.25;
  // Batches are chosen among this many points of largest expected improvement (or 4 per point
  // of the batch, if more), on which the kriging believer's updates are exact and cheap.
  static constexpr std::size_t shortlist_min = 64;

  // A neighbouring size's times (strategy_options::prior), when there are enough to model: a
  // process fitted to them gives every point a prior mean of log(time), and its length-scales
  // are the first ones here. This size's model then learns only how it differs (the residual,
  // whose mean absorbs the sizes' difference in scale), and needs no design of its own: the
  // warm start's points and the expected improvement under the prior take its place.
  void learn_prior() {
    std::vector<std::size_t> points;
    std::vector<double> logs;
    for (const auto& [point, value] : options_.prior)
      if (point < space_.points.size() && value > 0 && std::isfinite(value)) {
        points.push_back(point);
        logs.push_back(std::log(value));
      }
    if (points.size() < min_design) return;
    const Eigen::MatrixXd x = rows(points);
    const Eigen::VectorXd y =
        Eigen::Map<const Eigen::VectorXd>(logs.data(), static_cast<Eigen::Index>(logs.size()));
    const gp_hyperparameters fitted = gaussian_process::fit(x, y, nullptr);
    Eigen::VectorXd variance;
    gaussian_process(x, y, fitted).predict(features_, prior_, variance);
    hyper_ = fitted;
    fitted_with_ = min_design;  // the first refit on this size's own residuals at 10 points
  }

  // A space-filling start (greedy maximin over random candidates): a random design leaves holes
  // and clusters that cost the first fit dearly when it is a handful of points.
  void design() {
    const std::size_t points = space_.points.size();
    const std::size_t size =
        std::min({points, options_.budget, std::max(min_design, options_.budget / 10)});
    std::vector<char> chosen(points, 0);
    for (std::size_t i = 0; i < size; ++i) {
      std::size_t pick = 0;
      double farthest = -1;
      for (std::size_t c = 0; c < design_candidates; ++c) {
        const std::size_t candidate = uniform_index(rng_, points);
        if (chosen[candidate]) continue;
        double nearest = std::numeric_limits<double>::infinity();
        for (const proposal& p : design_)
          nearest = std::min(nearest, (features_.row(static_cast<Eigen::Index>(candidate)) -
                                       features_.row(static_cast<Eigen::Index>(p.point)))
                                          .squaredNorm());
        if (nearest > farthest) {
          farthest = nearest;
          pick = candidate;
        }
      }
      if (farthest < 0) {  // every candidate drawn was chosen already: a small space
        const std::ptrdiff_t any = random_unobserved(design_);
        if (any < 0) break;
        pick = static_cast<std::size_t>(any);
      }
      chosen[pick] = 1;
      design_.push_back({pick, fidelity::full});
    }
  }

  std::vector<proposal> next(std::size_t batch) override {
    std::vector<proposal> out;
    for (const proposal& p : design_)
      if (out.size() < batch && !ledger_.observed(p.point, fidelity::full) &&
          !pending(p.point, fidelity::full))
        out.push_back(p);
    if (!out.empty()) return out;

    std::vector<std::size_t> timed;  // successful, in the order observed
    for (const std::size_t p : ledger_.order(fidelity::full))
      if (!failed(ledger_.value(p, fidelity::full))) timed.push_back(p);
    if (timed.size() < (prior_.size() ? 1 : 3)) {
      // Ahead of the design's last results: wait for them rather than draw at random.
      if (!pending_proposals().empty()) return out;
      // Nothing to model yet (the design failed): more random points until some succeed.
      while (out.size() < batch) {
        const std::ptrdiff_t p = random_unobserved(out);
        if (p < 0) break;
        out.push_back({static_cast<std::size_t>(p), fidelity::full});
      }
      return out;
    }
    std::vector<std::size_t> candidates;
    for (std::size_t p = 0; p < space_.points.size(); ++p)
      if (!ledger_.observed(p, fidelity::full) && !pending(p, fidelity::full))
        candidates.push_back(p);
    if (candidates.empty()) return out;

    const Eigen::MatrixXd x = rows(timed);
    Eigen::VectorXd y(static_cast<Eigen::Index>(timed.size()));
    for (std::size_t i = 0; i < timed.size(); ++i)
      y[static_cast<Eigen::Index>(i)] =
          std::log(ledger_.value(timed[i], fidelity::full)) - prior_at(timed[i]);
    if (!hyper_ || static_cast<double>(timed.size()) >= refit_growth * fitted_with_) {
      hyper_ = gaussian_process::fit(x, y, hyper_ ? &*hyper_ : nullptr);
      fitted_with_ = static_cast<double>(timed.size());
    }
    const gaussian_process model(x, y, *hyper_);
    // The incumbent is the best posterior mean at a timed point, not the best time: with noisy
    // times the luckiest sample would make every improvement look smaller than it is.
    Eigen::VectorXd fitted = model.fitted();
    for (std::size_t i = 0; i < timed.size(); ++i)
      fitted[static_cast<Eigen::Index>(i)] += prior_at(timed[i]);
    double best = fitted.minCoeff();

    Eigen::VectorXd mean, variance;
    model.predict(rows(candidates), mean, variance);
    for (std::size_t i = 0; i < candidates.size(); ++i)
      mean[static_cast<Eigen::Index>(i)] += prior_at(candidates[i]);
    std::vector<double> ei(candidates.size());
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const auto k = static_cast<Eigen::Index>(i);
      ei[i] = expected_improvement(mean[k], std::sqrt(variance[k]), best);
    }
    std::vector<std::size_t> shortlist(candidates.size());
    std::iota(shortlist.begin(), shortlist.end(), 0);
    const std::size_t keep = std::min(shortlist.size(), std::max(shortlist_min, 4 * batch));
    std::partial_sort(
        shortlist.begin(), shortlist.begin() + static_cast<std::ptrdiff_t>(keep), shortlist.end(),
        [&](std::size_t a, std::size_t b) { return ei[a] > ei[b] || (ei[a] == ei[b] && a < b); });
    shortlist.resize(keep);

    // The kriging believer: each point chosen is taken as observed at its posterior mean. That
    // leaves the mean where it is and shrinks the variance around the point, so the next choice
    // goes where the model is still unsure or promising, not next to the first. The pending
    // points (propose_ahead) are believed first, as if chosen already.
    std::vector<std::size_t> chosen_points;
    for (const proposal& p : pending_proposals())
      if (p.level == fidelity::full) chosen_points.push_back(p.point);
    const std::size_t believed = chosen_points.size();
    Eigen::VectorXd believed_mean, believed_variance;
    if (believed > 0) {
      model.predict(rows(chosen_points), believed_mean, believed_variance);
      for (std::size_t i = 0; i < believed; ++i)
        believed_mean[static_cast<Eigen::Index>(i)] += prior_at(chosen_points[i]);
    }
    for (const std::size_t s : shortlist) chosen_points.push_back(candidates[s]);
    const std::size_t all = chosen_points.size();
    Eigen::MatrixXd cov = model.covariance(rows(chosen_points));
    Eigen::VectorXd short_mean(static_cast<Eigen::Index>(all));
    for (std::size_t i = 0; i < believed; ++i)
      short_mean[static_cast<Eigen::Index>(i)] = believed_mean[static_cast<Eigen::Index>(i)];
    for (std::size_t i = 0; i < keep; ++i)
      short_mean[static_cast<Eigen::Index>(believed + i)] =
          mean[static_cast<Eigen::Index>(shortlist[i])];
    std::vector<char> taken(all, 0);
    const auto believe = [&](std::size_t i) {
      taken[i] = 1;
      const auto k = static_cast<Eigen::Index>(i);
      best = std::min(best, short_mean[k]);
      const Eigen::VectorXd column = cov.col(k);
      cov -= column * column.transpose() / (column[k] + model.noise_variance());
    };
    for (std::size_t i = 0; i < believed; ++i) believe(i);
    while (out.size() < batch && out.size() < keep) {
      std::size_t pick = all;
      double pick_ei = -1;
      for (std::size_t i = believed; i < all; ++i) {
        if (taken[i]) continue;
        const auto k = static_cast<Eigen::Index>(i);
        const double value =
            expected_improvement(short_mean[k], std::sqrt(std::max(cov(k, k), 0.0)), best);
        if (value > pick_ei) {
          pick_ei = value;
          pick = i;
        }
      }
      out.push_back({chosen_points[pick], fidelity::full});
      believe(pick);
    }
    return out;
  }
  // The model's believer takes the pending points in as it takes a batch's earlier picks.
  std::vector<proposal> next_ahead(std::size_t batch) override { return next(batch); }

  Eigen::MatrixXd rows(const std::vector<std::size_t>& points) const {
    Eigen::MatrixXd out(static_cast<Eigen::Index>(points.size()), features_.cols());
    for (std::size_t i = 0; i < points.size(); ++i)
      out.row(static_cast<Eigen::Index>(i)) = features_.row(static_cast<Eigen::Index>(points[i]));
    return out;
  }

  // The prior mean of log(time) at a point: 0 without a prior.
  double prior_at(std::size_t point) const {
    return prior_.size() ? prior_[static_cast<Eigen::Index>(point)] : 0.0;
  }

  Eigen::MatrixXd features_;  ///< per point, each value index divided by the parameter's steps
  Eigen::VectorXd prior_;     ///< per point, the prior mean of log(time); empty without a prior
  std::vector<proposal> design_;
  std::optional<gp_hyperparameters> hyper_;
  double fitted_with_ = 0;  ///< successful observations at the last fit
};

}  // namespace

std::unique_ptr<strategy> make_bayes(const search_space& space, const strategy_options& options) {
  return std::make_unique<bayes>(space, options);
}

}  // namespace kl::tune::detail
