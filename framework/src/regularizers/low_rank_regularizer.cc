// A = s U U^T from its factor (see sdprl/regularizers/low_rank_regularizer.h).
#include "sdprl/regularizers/low_rank_regularizer.h"

#include <algorithm>
#include <string>
#include <utility>

#include "sdprl/error.h"

namespace sdprl {

LowRankRegularizer::LowRankRegularizer(Eigen::MatrixXd U, double sign, std::string name, bool diagonal_majorant)
    : U_(std::move(U)), sign_(sign), name_(std::move(name)), diagonal_majorant_(diagonal_majorant) {
  if (U_.rows() < 1) throw Error("", name_ + ": the factor U has no rows (n must be >= 1)");
  if (sign_ != 1.0 && sign_ != -1.0)
    throw Error("", name_ + ": sign must be +1 or -1, got " + std::to_string(sign_) +
                        " (scale U or gamma for other magnitudes)");
  if (!U_.allFinite()) throw Error("", name_ + ": the factor U has a NaN/Inf entry");
  if (U_.cols() > 0) {
    const Eigen::MatrixXd gram = U_.transpose() * U_;  // k x k: the nonzero spectrum of U U^T
    norm_ = std::max(0.0, Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(gram, Eigen::EigenvaluesOnly)
                              .eigenvalues()
                              .maxCoeff());
  }
}

LowRankRegularizer::~LowRankRegularizer() = default;

void LowRankRegularizer::apply(const Matrix& X, Matrix& out) const {
  if (X.rows() != U_.rows())
    throw Error("", name_ + ": X has " + std::to_string(X.rows()) + " rows, expected " + std::to_string(U_.rows()));
  const Eigen::MatrixXd UtX = U_.transpose() * X;  // k x r
  out.noalias() = sign_ * (U_ * UtX);
}

void LowRankRegularizer::apply_positive(const Matrix& X, Matrix& out) const {
  if (sign_ < 0.0) {
    out.setZero(X.rows(), X.cols());
    return;
  }
  apply(X, out);
}

void LowRankRegularizer::positive_diagonal(Vector& d) const {
  if (sign_ < 0.0) {
    d.setZero(U_.rows());
    return;
  }
  d = U_.rowwise().squaredNorm();
}

bool LowRankRegularizer::positive_diagonal_majorant(Vector& d) const {
  if (sign_ < 0.0) {
    d.setZero(U_.rows());  // diag(0) - A_+ = 0 is PSD
    return true;
  }
  if (!diagonal_majorant_) return false;
  // d_i = sum_l |U_il| ||U_:l||_1 >= sum_j |sum_l U_il U_jl| = sum_j |A_ij| (Gershgorin).
  d = U_.cwiseAbs() * U_.cwiseAbs().colwise().sum().transpose();
  return true;
}

}  // namespace sdprl
