// Internal (not installed): one MM step, written out: the convex surrogate H of F at X_k
// (docs/method.md section 2; paper Prop. 2 and Prop. 5 with the weighted B) and the ADMM that minimises it (section 3; paper Alg. 1
// and 3, with the nu-step of eq. (admmnu) and the e-step threshold 2/rho).
//
//   H(D) = <D, B D> + <D, G> + 2 sum_h |<D, P_h> + b_h| + c
//   B    = C + (lambda I + gamma A_+)/2,   C = sum_tau w_tau |sym Q_tau|
//          (row-split, and the exact surrogate when asked (`diagonal_b`): A_+ replaced by a
//          diagonal majorant when the regularizer offers one, and C by one where the family has it)
//   G    = gamma A X_k + lambda X_k
//   c    = sum_tau [phi(|r_tau|) - w_tau |r_tau|] + (gamma/2)<X_k, A X_k> + (lambda/2)||X_k||^2
//
// The ADMM splits e_h = <D, P_h> + b_h:
//   Xt-step: (2 B + rho P*P) D = -G - P*(nu + rho (b - e))
//   e-step:  e_h  = soft(<D, P_h> + b_h + nu_h / rho, 2 / rho)
//   nu-step: nu_h = nu_h + rho (<D, P_h> + b_h - e_h)             (so |nu_h| <= 2 always)
// and stops when the duality gap H(D) - D(nu) <= eps_k, with the dual (paper Prop. 3)
//   D(nu) = c + <nu, b> - (1/4) <M, B^{-1} M>,   M = G + P*(nu).
// A family may keep the loss weights outside P (TermLinearization::term_weights()): the terms are
// then 2 w_h |<D, P_h> + b_h|, the e-step threshold is 2 w_h / rho, |nu_h| <= 2 w_h, and D(nu) is
// unchanged. Same H and same dual; only the ADMM's metric (and so P*P) differs.
#pragma once

#include <memory>

#include <Eigen/Cholesky>
#include <cstdint>
#include <vector>

#include "sdprl/constraint_set.h"
#include "sdprl/export.h"
#include "sdprl/loss.h"
#include "sdprl/model.h"
#include "sdprl/solver.h"
#include "sdprl/types.h"

namespace sdprl {

class SDPRL_API Surrogate {
 public:
  // `diagonal_b`: in coupled mode too, A_+ is replaced by the regularizer's diagonal majorant (when
  // it offers one) and the terms' curvature by a diagonal majorant (where the family has one:
  // distance terms), so that B stays diagonal; H is then still tight to first order at X_k, and
  // its MM fixed points are F's stationary points (docs/method.md section 7.2).
  Surrogate(const Model& model, const Loss& loss, const RegularizationWeights& weights,
            SplitMode split, Index rank, bool diagonal_b = false);
  ~Surrogate();
  Surrogate(const Surrogate&) = delete;
  Surrogate& operator=(const Surrogate&) = delete;

  // Rebuilds H at the iterate X_k. With `rows`, hands every row to it as the linearisation
  // finishes it (OnePassUpdate::update_with_loss; G is already set then, B_ii is
  // b_diagonal_entry(i, C_ii)); returns true when it did, false when the family has no one-pass
  // rebuild (then `rows` was not called).
  bool update(const Matrix& Xk, RowConsumer* rows = nullptr);

  Index rows() const { return n_; }
  Index rank() const { return r_; }
  Index split_terms() const;
  const Matrix& center() const { return Xk_; }
  const TermLinearization& linearization() const { return *lin_; }
  const Matrix& G() const { return G_; }
  double c() const { return c_; }
  // F(X_k) = H(0).
  double center_objective() const { return f_center_; }
  // The size of F(X_k)'s parts, sum phi + |(gamma/2) <X, A X>| + (lambda/2) ||X||^2: F(X_k) itself
  // when A is PSD, but not cancelling to near 0 when A is not (sparse PCA's -Sigma).
  double objective_magnitude() const { return f_magnitude_; }

  // H(D); `PD` may pass P(D) when the caller has it (saves a pass over the terms).
  double value(const Matrix& D, const Vector* PD = nullptr) const;
  // H(D) given its terms' part sum_h w_h |<D, P_h> + b_h| (a caller that summed it in its own pass).
  double value_given_terms(const Matrix& D, double terms) const;
  // D(nu) for |nu_h| <= 2; with a constraint, D(nu, mu) (see sdprl/constraint.h).
  double dual(const Vector& nu, const Matrix* mu = nullptr) const;
  // The same with P*(nu) given (the ADMM keeps it up to date without an adjoint per iteration).
  double dual_given_adjoint(const Vector& nu, const Matrix& Pnu, const Matrix* mu = nullptr) const;
  // The same with <nu, b> given too (a caller that summed it in its own pass).
  double dual_given_products(double nu_dot_b, const Matrix& Pnu, const Matrix* mu = nullptr) const;

  // True when B is diagonal (then B^{-1} is exact and cheap).
  bool b_is_diagonal() const { return b_diagonal_; }
  // diag(B) (length n).
  const Vector& b_diagonal() const { return b_diag_; }
  // B_ii from the curvature's C_ii: C_ii + lambda / 2 (+ gamma / 2 times diag(A_+) or its majorant).
  double b_diagonal_entry(Index i, double curvature) const;
  // out = B D.
  void apply_B(const Matrix& D, Matrix& out) const;
  // out = B^{-1} M (exact when B is diagonal, else CG to relative residual 1e-12).
  void solve_B(const Matrix& M, Matrix& out) const;
  // tau in B = tau C + ...: 1 is the majoriser; below 1 H majorises F only where the step is
  // checked (SolverOptions::curvature_scale). Takes effect at the next update().
  void set_curvature_scale(double tau) { tau_ = tau; }
  double curvature_scale() const { return tau_; }
  // <D, C D>: the loss terms' curvature bound along D, at X_k (the automatic tau measures with it).
  double curvature_along(const Matrix& D) const;
  // True when the A-term contributes curvature (gamma > 0 and A_+ != 0).
  bool has_a_curvature() const { return a_curvature_; }
  const Model& model() const { return model_; }
  const RegularizationWeights& weights_used() const { return weights_; }

 private:
  const Model& model_;
  const Loss& loss_;
  RegularizationWeights weights_;
  Index n_, r_;
  std::unique_ptr<TermLinearization> lin_;
  Matrix Xk_, G_;
  Vector residuals_, w_;             // without a OnePassUpdate only
  Vector b_diag_;
  Vector a_diag_;             // diag(A_+), or its diagonal majorant when a_majorant_
  bool b_diagonal_ = true;
  bool a_curvature_ = false;
  bool a_majorant_ = false;   // row-split with a diagonal majorant of A_+ in B
  double c_ = 0.0, f_center_ = 0.0, f_magnitude_ = 0.0;
  double tau_ = 1.0;
};

}  // namespace sdprl
