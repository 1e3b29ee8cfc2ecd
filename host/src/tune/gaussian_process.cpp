#include "tune/gaussian_process.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace kl::tune::detail {
namespace {

// The grids of the coordinate search. Features span [0, 1], so a length-scale of 0.1 separates
// neighbouring values of a long parameter and 2.5 all but ignores a parameter. The noise grid
// spans timings repeatable to a fraction of a percent up to noise a third of the spread.
const double length_grid[] = {0.1, 0.15, 0.22, 0.33, 0.5, 0.75, 1.1, 1.7, 2.5};
const double noise_grid[] = {1e-4, 1e-3, 1e-2, 1e-1};

// The prior on each log length-scale: normal around log(0.5) with a deviation of 1.5, weak enough
// for the data to move it, but it keeps a few points from choosing a degenerate fit.
constexpr double prior_centre = -0.6931471805599453;
constexpr double prior_deviation = 1.5;

struct moments {
  double mean, deviation;
};

moments moments_of(const Eigen::VectorXd& y) {
  const double mean = y.mean();
  const double deviation = std::sqrt((y.array() - mean).square().mean());
  return {mean, deviation > 1e-12 ? deviation : 1.0};
}

Eigen::VectorXd standardise(const Eigen::VectorXd& y) {
  const moments m = moments_of(y);
  return (y.array() - m.mean) / m.deviation;
}

Eigen::ArrayXXd matern52(const Eigen::ArrayXXd& squared_distance) {
  const Eigen::ArrayXXd r = squared_distance.max(0.0).sqrt() * std::sqrt(5.0);
  return (1.0 + r + r.square() / 3.0) * (-r).exp();
}

// The pairwise squared differences of the training features, one matrix per feature, so that the
// coordinate search only rescales and adds them.
std::vector<Eigen::ArrayXXd> feature_distances(const Eigen::MatrixXd& x) {
  std::vector<Eigen::ArrayXXd> out;
  const Eigen::Index n = x.rows();
  for (Eigen::Index d = 0; d < x.cols(); ++d) {
    const Eigen::ArrayXd column = x.col(d).array();
    out.push_back((column.replicate(1, n) - column.transpose().replicate(n, 1)).square());
  }
  return out;
}

// The log marginal likelihood with the signal variance profiled out, plus the prior.
double objective(const std::vector<Eigen::ArrayXXd>& distances, const Eigen::VectorXd& y,
                 const gp_hyperparameters& h) {
  const Eigen::Index n = y.size();
  Eigen::ArrayXXd squared = Eigen::ArrayXXd::Zero(n, n);
  for (std::size_t d = 0; d < distances.size(); ++d)
    squared += distances[d] /
               (h.length[static_cast<Eigen::Index>(d)] * h.length[static_cast<Eigen::Index>(d)]);
  Eigen::MatrixXd k = matern52(squared).matrix();
  k.diagonal().array() += h.noise;
  const Eigen::LLT<Eigen::MatrixXd> factor(k);
  if (factor.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
  const double quadratic = y.dot(factor.solve(y));
  if (!(quadratic > 0)) return -std::numeric_limits<double>::infinity();
  const double log_det = 2 * factor.matrixLLT().diagonal().array().log().sum();
  double prior = 0;
  for (Eigen::Index d = 0; d < h.length.size(); ++d) {
    const double z = (std::log(h.length[d]) - prior_centre) / prior_deviation;
    prior -= 0.5 * z * z;
  }
  return -0.5 * static_cast<double>(n) * std::log(quadratic / static_cast<double>(n)) -
         0.5 * log_det + prior;
}

}  // namespace

gaussian_process::gaussian_process(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                   const gp_hyperparameters& hyper)
    : hyper_(hyper) {
  const moments m = moments_of(y);
  centre_ = m.mean;
  scale_ = m.deviation;
  y_ = (y.array() - centre_) / scale_;
  scaled_ = x.array().rowwise() / hyper_.length.transpose().array();
  const Eigen::MatrixXd c = correlation(scaled_, scaled_);
  // Jitter only when the factorisation fails: points very close under long length-scales.
  for (jitter_ = 0;; jitter_ = jitter_ == 0 ? 1e-10 : jitter_ * 100) {
    Eigen::MatrixXd k = c;
    k.diagonal().array() += hyper_.noise + jitter_;
    factor_.compute(k);
    if (factor_.info() == Eigen::Success) break;
    if (jitter_ >= 1e-2)
      throw std::runtime_error("Gaussian process: the kernel matrix of " +
                               std::to_string(x.rows()) + " points cannot be factored");
  }
  alpha_ = factor_.solve(y_);
  signal_ = std::max(y_.dot(alpha_) / static_cast<double>(y_.size()), 1e-12);
}

Eigen::MatrixXd gaussian_process::correlation(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  // |a - b|^2 = |a|^2 + |b|^2 - 2 a.b: one matrix product instead of a loop over pairs.
  Eigen::ArrayXXd squared = (-2.0 * a * b.transpose()).array();
  squared.colwise() += a.rowwise().squaredNorm().array();
  squared.rowwise() += b.rowwise().squaredNorm().array().transpose();
  return matern52(squared).matrix();
}

gp_hyperparameters gaussian_process::fit(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                         const gp_hyperparameters* start) {
  const Eigen::VectorXd ys = standardise(y);
  const std::vector<Eigen::ArrayXXd> distances = feature_distances(x);
  const auto dims = x.cols();
  gp_hyperparameters best;
  double best_value = -std::numeric_limits<double>::infinity();
  const auto consider = [&](const gp_hyperparameters& h) {
    const double value = objective(distances, ys, h);
    if (value > best_value) {
      best_value = value;
      best = h;
    }
  };
  if (start) {
    consider(*start);
  } else {
    for (const double length : length_grid)
      for (const double noise : noise_grid)
        consider({Eigen::VectorXd::Constant(dims, length), noise});
  }
  if (best_value == -std::numeric_limits<double>::infinity())  // nothing factored: a safe guess
    return {Eigen::VectorXd::Constant(dims, 0.5), noise_grid[3]};
  // One sweep over each length-scale, then the noise: each start is a fit of fewer points, or the
  // shared length-scale, so it is close already.
  for (Eigen::Index d = 0; d < dims; ++d) {
    const gp_hyperparameters from = best;
    for (const double length : length_grid) {
      gp_hyperparameters h = from;
      h.length[d] = length;
      consider(h);
    }
  }
  const gp_hyperparameters from = best;
  for (const double noise : noise_grid) consider({from.length, noise});
  return best;
}

void gaussian_process::predict(const Eigen::MatrixXd& at, Eigen::VectorXd& mean,
                               Eigen::VectorXd& variance) const {
  mean.resize(at.rows());
  variance.resize(at.rows());
  // In slices, so that the cross-correlation matrix stays small for spaces of many points.
  constexpr Eigen::Index slice = 1024;
  for (Eigen::Index begin = 0; begin < at.rows(); begin += slice) {
    const Eigen::Index rows = std::min(slice, at.rows() - begin);
    const Eigen::MatrixXd scaled =
        at.middleRows(begin, rows).array().rowwise() / hyper_.length.transpose().array();
    const Eigen::MatrixXd cross = correlation(scaled, scaled_);
    mean.segment(begin, rows) = ((cross * alpha_).array() * scale_ + centre_).matrix();
    const Eigen::MatrixXd v = factor_.matrixL().solve(cross.transpose());
    variance.segment(begin, rows) =
        (scale_ * scale_ * signal_ * (1.0 - v.colwise().squaredNorm().array()))
            .max(0.0)
            .matrix()
            .transpose();
  }
}

Eigen::MatrixXd gaussian_process::covariance(const Eigen::MatrixXd& at) const {
  const Eigen::MatrixXd scaled = at.array().rowwise() / hyper_.length.transpose().array();
  const Eigen::MatrixXd v = factor_.matrixL().solve(correlation(scaled, scaled_).transpose());
  return scale_ * scale_ * signal_ * (correlation(scaled, scaled) - v.transpose() * v);
}

Eigen::VectorXd gaussian_process::fitted() const {
  // C alpha, with C = (C + noise I) - noise I: no second product with the kernel matrix.
  return ((y_ - (hyper_.noise + jitter_) * alpha_).array() * scale_ + centre_).matrix();
}

}  // namespace kl::tune::detail
