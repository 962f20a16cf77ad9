// A regulariser (gamma/2) <X, A X> with A = s U U^T given by a factor U (n x k) and a sign s = +1
// or -1, applied as A X = s U (U^T X) in O(n k r) time and O(n k) memory: nothing n x n is formed.
// With s = -1, A is negative semidefinite (A = -K for a PSD kernel K = U U^T, e.g. the centered
// label kernel H T H of colored MVU, where U = H Y; docs/method.md section 1, "A = -K with K PSD =>
// A_+ = 0"): the A-term is concave and the MM surrogate only linearises it. With s = +1, A is PSD
// and A_+ = A.
#pragma once

#include <string>

#include <Eigen/Dense>

#include "sdprl/export.h"
#include "sdprl/regularizer.h"
#include "sdprl/types.h"

namespace sdprl {

class SDPRL_API LowRankRegularizer final : public Regularizer {
 public:
  // U is n x k (k >= 0, finite); sign is +1 or -1. Throws Error otherwise.
  // `diagonal_majorant` (s = +1 only): whether positive_diagonal_majorant() offers the bound below,
  // which keeps the row-split Xt-step direct; false makes the solver use CG with the exact A.
  LowRankRegularizer(Eigen::MatrixXd U, double sign, std::string name = "low-rank", bool diagonal_majorant = true);
  ~LowRankRegularizer() override;

  std::string name() const override { return name_; }
  Index dimension() const override { return U_.rows(); }
  // out = s U (U^T X). Throws Error when X does not have n rows.
  void apply(const Matrix& X, Matrix& out) const override;
  // s = -1: A_+ = 0.
  bool positive_part_is_zero() const override { return sign_ < 0.0; }
  // out = A_+ X: A X for s = +1, 0 for s = -1.
  void apply_positive(const Matrix& X, Matrix& out) const override;
  // diag(A_+): ||u_i||^2 (u_i row i of U) for s = +1, 0 for s = -1.
  void positive_diagonal(Vector& d) const override;
  // s = -1: d = 0, exact. s = +1: d_i = sum_l |U_il| ||U_:l||_1 >= sum_j |A_ij|, a Gershgorin bound
  // (as SparseRegularizer's), so diag(d) - A is diagonally dominant, hence PSD. It is exact in norm
  // for disjoint indicator columns (cluster kernels) but n times too large in every direction but
  // one for a dense column such as 1; construct with diagonal_majorant = false then.
  bool positive_diagonal_majorant(Vector& d) const override;

  const Eigen::MatrixXd& factor() const { return U_; }
  double sign() const { return sign_; }
  // ||A||_2 = the largest eigenvalue of U^T U (k x k), 0 when k = 0. E.g. the quadratic part
  // (gamma/2)<X, A X> + (lambda/2)||X||^2 with s = -1 is convex exactly when lambda >= gamma ||A||_2.
  double spectral_norm() const { return norm_; }

 private:
  Eigen::MatrixXd U_;
  double sign_;
  std::string name_;
  bool diagonal_majorant_;
  double norm_ = 0.0;
};

}  // namespace sdprl
