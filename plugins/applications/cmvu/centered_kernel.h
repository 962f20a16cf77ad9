// The colored-MVU regulariser A = -H T H (paper Section "Robust CMVU", eq. (lker): Kbar = H T H;
// algorithm.md section 1, "A = -K with K PSD => A_+ = 0"), with T = Y Y^T the label kernel
// (Y the n x c one-hot class matrix: T_ij = 1 when samples i and j share a label, else 0) and
// H = I - 1 1^T / n the centering matrix.
//
// Nothing n x n is formed: with C = H Y (n x c, the one-hot matrix with each column's mean
// removed), Kbar = C C^T and
//     A X = -C (C^T X)                          O(n c r) time, O(n c) memory.
// Kbar is PSD, so A is negative semidefinite and A_+ = 0: the A-term is concave and the MM
// surrogate only linearises it (its curvature contribution is zero).
//
// The nonzero eigenvalues of Kbar are those of the c x c matrix C^T C = diag(n_c) - n n^T / n
// (n_c the class sizes), at most max_c n_c. top_eigenvalue() returns the largest: the quadratic
// part (gamma/2)<X, A X> + (lambda/2)||X||^2 of the objective is convex exactly when
// lambda >= gamma * top_eigenvalue().
//
// Header-only so that tests can check it against the dense definition without loading the plugin.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sdprl/error.h"
#include "sdprl/regularizer.h"
#include "sdprl/types.h"

namespace sdprl::cmvu {

class CenteredKernelRegularizer final : public Regularizer {
 public:
  // `classes[i]` in [0, num_classes) is the class of sample i. A class without samples gives a
  // zero column (it changes nothing).
  CenteredKernelRegularizer(const std::vector<std::int32_t>& classes, Index num_classes)
      : n_(static_cast<Index>(classes.size())) {
    if (n_ < 1) throw Error("", "centered label kernel: no samples");
    if (num_classes < 1) throw Error("", "centered label kernel: no classes");
    // C = H Y: column k is the indicator of class k minus its mean n_k / n.
    Eigen::VectorXd counts = Eigen::VectorXd::Zero(num_classes);
    for (std::int32_t k : classes) {
      if (k < 0 || k >= num_classes)
        throw Error("", "centered label kernel: class index " + std::to_string(k) + " outside [0, " +
                            std::to_string(num_classes) + ")");
      counts[k] += 1.0;
    }
    C_ = Eigen::MatrixXd::Zero(n_, num_classes);
    C_.rowwise() -= (counts / static_cast<double>(n_)).transpose();
    for (Index i = 0; i < n_; ++i) C_(i, classes[static_cast<std::size_t>(i)]) += 1.0;
    const Eigen::MatrixXd gram = C_.transpose() * C_;
    top_eigenvalue_ = std::max(0.0, Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(gram, Eigen::EigenvaluesOnly)
                                        .eigenvalues()
                                        .maxCoeff());
  }

  std::string name() const override { return "centered-label-kernel"; }
  Index dimension() const override { return n_; }

  // out = A X = -C (C^T X).
  void apply(const Matrix& X, Matrix& out) const override {
    if (X.rows() != n_)
      throw Error("", "centered label kernel: X has " + std::to_string(X.rows()) + " rows, expected " +
                          std::to_string(n_));
    const Eigen::MatrixXd CtX = C_.transpose() * X;  // c x r
    out.resize(n_, X.cols());
    out.noalias() = -(C_ * CtX);
  }
  // A = -Kbar is negative semidefinite.
  bool positive_part_is_zero() const override { return true; }
  void apply_positive(const Matrix& X, Matrix& out) const override { out.setZero(X.rows(), X.cols()); }
  void positive_diagonal(Vector& d) const override { d.setZero(n_); }
  // diag(0) - A_+ = 0 is PSD: the zero vector is an exact diagonal majorant.
  bool positive_diagonal_majorant(Vector& d) const override {
    d.setZero(n_);
    return true;
  }

  // C = H Y (n x c).
  const Eigen::MatrixXd& centered_labels() const { return C_; }
  // The largest eigenvalue of Kbar = H T H (0 for a single class).
  double top_eigenvalue() const { return top_eigenvalue_; }

 private:
  Index n_;
  Eigen::MatrixXd C_;
  double top_eigenvalue_ = 0.0;
};

}  // namespace sdprl::cmvu
