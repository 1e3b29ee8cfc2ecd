// Gaussian-process regression for the bayes strategy (internal to tune/): a Matern 5/2 kernel with
// a length-scale per feature, a noise term, and the signal variance profiled out of the marginal
// likelihood. Features are in [0, 1]; the targets are standardised inside (so the grids of the
// fit suit any scale), and every prediction is in the targets' own units.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>

namespace kl::tune::detail {

struct gp_hyperparameters {
  Eigen::VectorXd length;  ///< one length-scale per feature
  double noise = 1e-2;     ///< the noise variance, as a fraction of the signal variance
};

class gaussian_process {
 public:
  /// Conditions the process on targets `y` at the rows of `x`. Throws std::runtime_error when the
  /// kernel matrix cannot be factored even with added jitter.
  gaussian_process(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                   const gp_hyperparameters& hyper);

  /// The hyperparameters that maximise the marginal likelihood times a weak prior on the
  /// length-scales, by coordinate search over grids: from `start` when given (a previous fit),
  /// else from the best shared length-scale.
  static gp_hyperparameters fit(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                const gp_hyperparameters* start);

  /// The posterior mean and variance of the latent function (without noise) at the rows of `at`.
  void predict(const Eigen::MatrixXd& at, Eigen::VectorXd& mean, Eigen::VectorXd& variance) const;
  /// The posterior covariance of the latent function among the rows of `at`.
  Eigen::MatrixXd covariance(const Eigen::MatrixXd& at) const;
  /// The posterior mean at the training points.
  Eigen::VectorXd fitted() const;
  /// The noise variance.
  double noise_variance() const { return scale_ * scale_ * signal_ * hyper_.noise; }
  const gp_hyperparameters& hyperparameters() const { return hyper_; }

 private:
  /// The kernel's correlations between the rows of a and b, both already divided by the lengths.
  static Eigen::MatrixXd correlation(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b);

  gp_hyperparameters hyper_;
  Eigen::MatrixXd scaled_;              ///< the training features divided by the length-scales
  double centre_ = 0;                   ///< the targets' mean
  double scale_ = 1;                    ///< and deviation (1 when they are all equal)
  Eigen::VectorXd y_;                   ///< standardised targets
  Eigen::LLT<Eigen::MatrixXd> factor_;  ///< of the correlation matrix plus noise (and jitter)
  Eigen::VectorXd alpha_;               ///< (C + noise I)^-1 y
  double jitter_ = 0;
  double signal_ = 1;  ///< the profiled signal variance
};

}  // namespace kl::tune::detail
