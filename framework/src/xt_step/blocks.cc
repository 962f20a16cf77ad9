// The row blocks' factorings of the Xt-step (xt_step/blocks.h).
#include "xt_step/blocks.h"

#include <Eigen/Eigenvalues>

#include "admm/row_kernel.h"

namespace sdprl::xt_step {

double RowBlockInverse::build(const Surrogate& s) {
  const Index n = s.rows(), r = s.rank();
  // A member: n r^2 doubles, kept to avoid re-faulting every MM step.
  s.linearization().gram_row_blocks(gram_);
  double trace = 0.0;
  for (Index i = 0; i < n; ++i) trace += gram_.block(i * r, 0, r, r).trace();
  return trace;
}

void RowBlockInverse::factor(const Surrogate& s, double rho, double rho_k) {
  // Explicit inverses K_i^{-1}: the fused pass multiplies by them, and as CG's preconditioner (or
  // the exact Xt-step of the generic path) a product with an r x r matrix is several times cheaper
  // than two triangular solves. A row without curvature gets a zero inverse, so its step is 0.
  detail::invert_row_blocks(gram_, s.b_diagonal(), rho, rho_k, s.rows(), s.rank(), inverse_);
}

void RowBlockInverse::apply(const Matrix& R, Matrix& out) const { detail::apply_row_inverses(inverse_.data(), R, out); }

void RowBlockInverse::apply_gram(const Matrix& D, Matrix& out) const {
  const Index n = D.rows(), r = D.cols();
  out.resize(n, r);
  for (Index i = 0; i < n; ++i) out.row(i).noalias() = D.row(i) * gram_.middleRows(i * r, r);
}

double SharedBlockInverse::build(const Surrogate& s) {
  shared_gram_block(s.linearization(), gram_);
  const double trace = static_cast<double>(s.rows()) * gram_.trace();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(gram_);
  vectors_ = eig.eigenvectors();
  // P*P is PSD: a rounding-negative eigenvalue is 0.
  values_ = eig.eigenvalues().cwiseMax(0.0);
  return trace;
}

void SharedBlockInverse::factor(const Surrogate& s, double rho, double rho_k) {
  // A tiny ridge where rho g_c + s_i vanishes, as for the singular blocks in detail::invert_row_block.
  const Index n = s.rows(), r = s.rank();
  const Vector& bd = s.b_diagonal();
  inverse_.resize(n, r);
  const double scale = rho * values_.sum();
  for (Index i = 0; i < n; ++i) {
    const double si = 2.0 * bd[i] + rho_k;
    if (scale == 0.0 && si == 0.0) {
      inverse_.row(i).setZero();
      continue;
    }
    const double ridge = 1e-12 * (scale + static_cast<double>(r) * si) + 1e-300;
    for (Index c = 0; c < r; ++c) {
      const double d = rho * values_[c] + si;
      inverse_(i, c) = 1.0 / (d > ridge ? d : d + ridge);
    }
  }
}

void SharedBlockInverse::apply(const Matrix& R, Matrix& out) const {
  // Every row at once: out = ((R V) o inverse) V^T, two n x r x r products.
  Matrix T = R * vectors_;
  T.array() *= inverse_.array();
  out.noalias() = T * vectors_.transpose();
}

void SharedBlockInverse::apply_rows(Index i0, const Matrix& R, Matrix& out) const {
  Matrix T = R * vectors_;
  T.array() *= inverse_.middleRows(i0, R.rows()).array();
  out.noalias() = T * vectors_.transpose();
}

void SharedBlockInverse::apply_gram(const Matrix& D, Matrix& out) const { out.noalias() = D * gram_; }

double RowScaledInverse::build(const Surrogate& s) {
  // Only the blocks' traces: the row-scaled preconditioner is there to avoid their n r^2 doubles.
  gram_row_traces(s.linearization(), traces_);
  double trace = 0.0;
  for (Index i = 0; i < s.rows(); ++i) trace += traces_[i];
  return trace;
}

void RowScaledInverse::factor(const Surrogate& s, double rho, double rho_k) {
  const Index n = s.rows(), r = s.rank();
  const Vector& bd = s.b_diagonal();
  inverse_.resize(n);
  for (Index i = 0; i < n; ++i) {
    const double d = rho * traces_[i] / static_cast<double>(r) + 2.0 * bd[i] + rho_k;
    inverse_[i] = d > 0.0 ? 1.0 / d : 0.0;
  }
}

void RowScaledInverse::apply(const Matrix& R, Matrix& out) const { out.noalias() = inverse_.asDiagonal() * R; }

}  // namespace sdprl::xt_step
