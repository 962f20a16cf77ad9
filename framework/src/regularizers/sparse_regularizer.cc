// The sparse PSD regulariser (see sdprl/regularizers/sparse_regularizer.h).
#include "sdprl/regularizers/sparse_regularizer.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "sdprl/error.h"

namespace sdprl {

SparseRegularizer::SparseRegularizer(Eigen::SparseMatrix<double> A, bool positive_semidefinite,
                                     std::string name)
    : A_(std::move(A)), name_(std::move(name)) {
  if (!positive_semidefinite) {
    throw Error("", "a sparse A must be declared PSD; indefinite sparse A is not supported");
  }
  if (A_.rows() != A_.cols()) {
    throw Error("", "a sparse A must be square, got " + std::to_string(A_.rows()) + " x " +
                        std::to_string(A_.cols()));
  }
  A_.makeCompressed();
  double scale = 0.0;
  for (Index c = 0; c < A_.outerSize(); ++c) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(A_, c); it; ++it) {
      if (!std::isfinite(it.value())) {
        throw Error("", "a sparse A must be finite, entry (" + std::to_string(it.row()) + ", " +
                            std::to_string(it.col()) + ") is NaN/Inf");
      }
      scale = std::max(scale, std::abs(it.value()));
    }
  }
  if (A_.nonZeros() > 0) {
    const Eigen::SparseMatrix<double> At = A_.transpose();
    const Eigen::SparseMatrix<double> diff = A_ - At;
    double asymmetry = 0.0;
    for (Index k = 0; k < diff.nonZeros(); ++k) {
      asymmetry = std::max(asymmetry, std::abs(diff.valuePtr()[k]));
    }
    if (asymmetry > 1e-12 * scale) {
      throw Error("", "a sparse A must be symmetric, max |A - A^T| = " +
                          std::to_string(asymmetry));
    }
  }
}

SparseRegularizer::~SparseRegularizer() = default;

void SparseRegularizer::apply(const Matrix& X, Matrix& out) const { out.noalias() = A_ * X; }

void SparseRegularizer::apply_positive(const Matrix& X, Matrix& out) const {
  out.noalias() = A_ * X;
}

void SparseRegularizer::positive_diagonal(Vector& d) const { d = A_.diagonal(); }

bool SparseRegularizer::positive_diagonal_majorant(Vector& d) const {
  // Column sums of |A| equal its row sums since A is symmetric.
  d = Vector::Zero(A_.rows());
  for (Index c = 0; c < A_.outerSize(); ++c) {
    for (Eigen::SparseMatrix<double>::InnerIterator it(A_, c); it; ++it) {
      d[c] += std::abs(it.value());
    }
  }
  return true;
}

}  // namespace sdprl
