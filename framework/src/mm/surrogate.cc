// The convex surrogate H of one MM step (docs/method.md section 2; formulas in mm/surrogate.h).
#include "mm/surrogate.h"

#include <algorithm>
#include <cmath>

#include "core/loss_chunks.h"
#include "linalg/pcg.h"
#include "rows/row_blocks.h"
#include "sdprl/error.h"
#include "terms/coupled_pairs.h"

namespace sdprl {

Surrogate::Surrogate(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                     SplitMode split, Index rank, bool diagonal_b)
    : model_(model), loss_(loss), weights_(weights), n_(model.terms->dimension()), r_(rank) {
  lin_ = model.terms->make_linearization(split);
  // The terms' curvature made diagonal where the family has a first-order tight majorant of it
  // (distance terms' Laplacian), so that the exact surrogate's dual coordinate step applies.
  if (diagonal_b)
    if (auto* pairs = dynamic_cast<detail::CoupledPairs*>(lin_.get())) pairs->use_diagonal_curvature();
  // gamma multiplies <X, A X>; A_+ enters B only when it is nonzero.
  a_curvature_ = model.quadratic && weights_.gamma > 0.0 && !model.quadratic->positive_part_is_zero();
  // Row-split: replace A_+ by a diagonal majorant when the regularizer has one, so that B stays
  // diagonal and the Xt-step splits by rows (docs/method.md section 3; H still majorises F); on
  // the exact surrogate when asked, so that its dual coordinate step applies (section 7.2).
  a_majorant_ = a_curvature_ && (split == SplitMode::kRowSplit || diagonal_b) &&
                model.quadratic->positive_diagonal_majorant(a_diag_);
  if (a_curvature_ && !a_majorant_) model.quadratic->positive_diagonal(a_diag_);
}

Surrogate::~Surrogate() = default;

Index Surrogate::split_terms() const { return lin_->size(); }

bool Surrogate::update(const Matrix& Xk, RowConsumer* rows) {
  Xk_ = Xk;
  // G = gamma A X_k + lambda X_k, first: a RowConsumer reads G's rows during the rebuild.
  const double lambda = weights_.lambda, gamma = weights_.gamma;
  double reg = 0.5 * lambda * Xk_.squaredNorm(), reg_magnitude = reg;
  G_ = lambda * Xk_;
  if (model_.quadratic && gamma > 0.0) {
    Matrix AX;
    model_.quadratic->apply(Xk_, AX);
    G_.noalias() += gamma * AX;
    const double quadratic = 0.5 * gamma * AX.cwiseProduct(Xk_).sum();
    reg += quadratic;
    reg_magnitude += std::abs(quadratic);
  }

  double loss_sum = 0.0, weighted_abs = 0.0;
  OnePassUpdate* fast = lin_->one_pass();
  const bool one_pass = fast != nullptr;
  if (one_pass) {
    fast->update_with_loss(Xk_, loss_, &loss_sum, &weighted_abs, rows);
  } else {
    const ConstraintSet& terms = *model_.terms;
    terms.evaluate(Xk_, residuals_);  // values, then residuals in place (one m-vector fewer)
    residuals_ -= terms.targets();
    // w = phi'(|r|) chunk by chunk (core/loss_chunks.h).
    w_.resize(residuals_.size());
    detail::chunked_loss(
        loss_, residuals_.size(),
        [this](Index start, Index len, Vector& a) { a = residuals_.segment(start, len).cwiseAbs(); }, w_.data(),
        &loss_sum, &weighted_abs);
    lin_->update(Xk_, w_, residuals_);
  }

  // c = sum [phi(|r|) - w |r|] + regularizers, so that H(0) = 2 sum |b| + c = F(X_k).
  c_ = loss_sum - weighted_abs + reg;
  f_center_ = loss_sum + reg;
  f_magnitude_ = loss_sum + reg_magnitude;

  lin_->curvature_diagonal(b_diag_);
  for (Index i = 0; i < n_; ++i) b_diag_[i] = b_diagonal_entry(i, b_diag_[i]);
  b_diagonal_ = lin_->curvature_is_diagonal() && (!a_curvature_ || a_majorant_);
  return one_pass && rows != nullptr;
}

double Surrogate::b_diagonal_entry(Index i, double curvature) const {
  double d = tau_ * curvature + 0.5 * weights_.lambda;
  if (a_curvature_) d += 0.5 * weights_.gamma * a_diag_[i];
  return d;
}

double Surrogate::curvature_along(const Matrix& D) const {
  if (b_diagonal_) {
    // C_ii from B_ii = tau C_ii + lambda / 2 (+ gamma / 2 a_ii): b_diagonal_entry() backwards.
    double q = 0.0;
    for (Index i = 0; i < n_; ++i) {
      double c = b_diag_[i] - 0.5 * weights_.lambda;
      if (a_curvature_) c -= 0.5 * weights_.gamma * a_diag_[i];
      q += c * D.row(i).squaredNorm();
    }
    return q / tau_;
  }
  Matrix CD;
  lin_->apply_curvature(D, CD);
  return D.cwiseProduct(CD).sum();
}

void Surrogate::apply_B(const Matrix& D, Matrix& out) const {
  if (b_diagonal_) {
    out = b_diag_.asDiagonal() * D;
    return;
  }
  lin_->apply_curvature(D, out);
  if (tau_ != 1.0) out *= tau_;
  out.noalias() += (0.5 * weights_.lambda) * D;
  if (a_majorant_) {
    out.noalias() += (0.5 * weights_.gamma) * (a_diag_.asDiagonal() * D);
  } else if (a_curvature_) {
    Matrix AD;
    model_.quadratic->apply_positive(D, AD);
    out.noalias() += (0.5 * weights_.gamma) * AD;
  }
}

void Surrogate::solve_B(const Matrix& M, Matrix& out) const {
  if (b_diagonal_) {
    out.resize(M.rows(), M.cols());
    for (Index i = 0; i < n_; ++i)
      // A row with B_ii = 0 has no terms and no regularizer: M_i = 0 there (pseudo-inverse).
      out.row(i) = b_diag_[i] > 0.0 ? (M.row(i) / b_diag_[i]).eval() : Eigen::RowVectorXd::Zero(M.cols());
    return;
  }
  out.setZero(M.rows(), M.cols());
  linalg::pcg(
      [this](const Matrix& x, Matrix& y) { apply_B(x, y); },
      [this](const Matrix& x, Matrix& y) {
        y.resize(x.rows(), x.cols());
        for (Index i = 0; i < n_; ++i) y.row(i) = b_diag_[i] > 0.0 ? (x.row(i) / b_diag_[i]).eval()
                                                                  : Eigen::RowVectorXd::Zero(x.cols());
      },
      M, out, 1e-12, 20 * n_ * r_ + 100);
}

double Surrogate::value(const Matrix& D, const Vector* PD) const {
  Vector local;
  if (!PD) {
    lin_->apply(D, local);
    PD = &local;
  }
  const Vector* w = term_weights(*lin_);
  const double terms = w ? (*PD + lin_->offsets()).cwiseAbs().dot(*w) : (*PD + lin_->offsets()).cwiseAbs().sum();
  return value_given_terms(D, terms);
}

double Surrogate::value_given_terms(const Matrix& D, double terms) const {
  Matrix BD;
  apply_B(D, BD);
  return BD.cwiseProduct(D).sum() + G_.cwiseProduct(D).sum() + 2.0 * terms + c_;
}

double Surrogate::dual(const Vector& nu, const Matrix* mu) const {
  // D(nu) = c + <nu, b> - (1/4) <M, B^{-1} M>, M = G + P*(nu)   (paper Prop. 3; from
  // 2 w_h |a| = max over |nu_h| <= 2 w_h of nu_h a, so the same formula holds with weights outside P);
  // with a constraint: + <mu, X_k> - sigma_K(mu), and M gains mu (sdprl/constraint.h).
  Matrix Pnu;
  lin_->apply_adjoint(nu, Pnu);
  return dual_given_adjoint(nu, Pnu, mu);
}

double Surrogate::dual_given_adjoint(const Vector& nu, const Matrix& Pnu, const Matrix* mu) const {
  return dual_given_products(nu.dot(lin_->offsets()), Pnu, mu);
}

double Surrogate::dual_given_products(double nu_dot_b, const Matrix& Pnu, const Matrix* mu) const {
  Matrix M = G_ + Pnu, Y;
  double extra = 0.0;
  if (mu && model_.constraint) {
    M += *mu;
    extra = mu->cwiseProduct(Xk_).sum() - model_.constraint->support(*mu);
  }
  solve_B(M, Y);
  return c_ + nu_dot_b + extra - 0.25 * M.cwiseProduct(Y).sum();
}

}  // namespace sdprl
