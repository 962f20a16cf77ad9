// A regulariser (gamma/2) <X, A X> with an explicit sparse symmetric PSD A, e.g. a graph Laplacian
// from sdprl/graph/knn_graph.h. Since A is PSD, A_+ = A (regularizer.h).
#pragma once

#include <Eigen/SparseCore>
#include <string>

#include "sdprl/export.h"
#include "sdprl/regularizer.h"
#include "sdprl/types.h"

namespace sdprl {

class SDPRL_API SparseRegularizer final : public Regularizer {
 public:
  // A must be square, symmetric and finite. `positive_semidefinite` declares that A is PSD (true
  // for a graph Laplacian); it is not verified. An indefinite A (false) is not supported and
  // throws Error.
  SparseRegularizer(Eigen::SparseMatrix<double> A, bool positive_semidefinite,
                    std::string name = "sparse");
  ~SparseRegularizer() override;

  std::string name() const override { return name_; }
  Index dimension() const override { return A_.rows(); }
  // out = A X.
  void apply(const Matrix& X, Matrix& out) const override;
  // False: A is PSD, so A_+ = A.
  bool positive_part_is_zero() const override { return false; }
  // out = A_+ X = A X.
  void apply_positive(const Matrix& X, Matrix& out) const override;
  // diag(A).
  void positive_diagonal(Vector& d) const override;
  // d_i = sum_j |A_ij| (Gershgorin): diag(d) - A is symmetric and diagonally dominant with a
  // non-negative diagonal, hence PSD. For a Laplacian this is 2 deg(i). Always returns true.
  bool positive_diagonal_majorant(Vector& d) const override;

  const Eigen::SparseMatrix<double>& matrix() const { return A_; }

 private:
  Eigen::SparseMatrix<double> A_;
  std::string name_;
};

}  // namespace sdprl
