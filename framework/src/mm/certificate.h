// Internal (not installed): a lower bound on the convex SDP behind a factored model, and so a
// certified gap for the result X (docs/method.md section 7.3).
//
// With a linear phi (the l1 loss: Assumption 3 makes a convex phi linear) F(X) = f(X X^T) for the
// convex function on PSD matrices
//   f(Z) = sum_tau w |<Q_tau, Z> - t_tau| + (gamma/2) <A, Z> + (lambda/2) tr Z.
// For any y with |y_tau| <= w_tau, |s| >= y s term by term gives
//   f(Z) >= <S(y), Z> - <y, t>,     S(y) = sum_tau y_tau sym(Q_tau) + (gamma/2) A + (lambda/2) I,
// and <S, Z> >= R min(0, lambda_min(S)) for PSD Z with tr Z <= R. Every Z with f(Z) <= f(X X^T)
// has tr Z <= R = 2 f(X X^T) / kappa, kappa = lambda + gamma min(0, lambda_min(A)) > 0 (the terms
// are >= 0), and a minimiser is such a Z; so
//   min f >= L(y) = -<y, t> + R min(0, lambda_min(S(y))).
// Z = X X^T is optimal exactly when some y makes the gap f(X X^T) - L(y) zero: S(y) PSD,
// S(y) X = 0 and y_tau = w sign(r_tau) wherever r_tau != 0. y comes from the ADMM's multipliers
// on the exact surrogate (their fixed point is such a y), projected onto the box.
// For a concave, non-linear phi the same numbers are those of the final convex surrogate: f with
// the weights w_tau = phi'(|r_tau|) at X (Summary::Certificate::surrogate).
#pragma once

#include <cmath>

#include "sdprl/export.h"
#include "sdprl/loss.h"
#include "sdprl/model.h"
#include "sdprl/solver.h"

namespace sdprl::mm {

// True when phi is linear, phi(a) = phi'(0) a (the l1 loss, up to its scale): then F(X) = f(X X^T)
// is convex in Z, and the certificate is F's own rather than its weighted-l1 surrogate's.
bool linear_loss(const Loss& loss);

// The most negative eigenpairs of S(y) (values < 0, most negative first; vectors n x k, unit
// columns): the directions in which Z = X X^T + s v v^T lowers f (docs/method.md section 7.4).
struct Descent {
  Eigen::VectorXd values;
  Eigen::MatrixXd vectors;
  Vector residuals;  // r_tau = <Q_tau, X X^T> - t_tau at the certified X
  Vector weights;    // w_tau = phi'(|r_tau|) there
};

// out = S(y) V = sum_tau y_tau sym(Q_tau) V + (gamma/2) A V + (lambda/2) V, the certificate's
// operator (and the Hessian of the polish's Lagrangian, mm/polish.h); `scratch` holds A V.
void apply_dual_operator(const Model& model, const RegularizationWeights& weights, const Vector& y, const Matrix& V,
                         Matrix& out, Matrix& scratch);

// F's parts outside the loss terms, (gamma/2) <X, A X> + (lambda/2) ||X||^2 (also for one column
// v in place of X: the c of a new column's step).
double regularizer_value(const Model& model, const RegularizationWeights& weights, const Matrix& X);

// F(X) from the terms' values, the loss summed chunk by chunk as the surrogate's rebuild sums it
// (core/loss_chunks.h: the same bits for any thread count); `residuals` and `weights` are scratch
// (m each), kept by a caller that evaluates often. sdprl::objective() and the over-relaxed steps'
// trials use it.
double objective_value(const Model& model, const Loss& loss, const RegularizationWeights& weights, const Matrix& X,
                       Vector& residuals, Vector& weights_scratch);

// multipliers: y_tau / w_tau in [-1, 1] per term (length m), or empty when the run has none on
// the exact surrogate; then y_tau = w_tau sign(r_tau), a valid but weaker choice. With `descent`,
// the `directions` smallest eigenpairs of S(y) are computed (instead of one) and its negative
// ones returned there.
// boxed = false takes the multipliers as they are, beyond the box too: then S(y) and -<y, t> serve
// the constrained problem's answer (constrained_answer()) and not F's lower bound.
// lambda_min, when finite (and no `descent` is asked for), is lambda_min(S(y)) known to the caller
// (the interior-point method has S block by block, densely), and no eigensolver runs.
SDPRL_API Certificate certify(const Model& model, const Loss& loss, const RegularizationWeights& weights, const Matrix& X,
                              const Vector& multipliers, Index directions = 1, Descent* descent = nullptr,
                              bool boxed = true, double lambda_min = std::nan(""));

// The result of a model whose terms are constraints, as the constrained problem's answer
// (docs/method.md section 9): min <A, Z> + (lambda / gamma) tr Z s.t. <Q_i, Z> = t_i, Z PSD, whose
// objective is F's regularizer parts over gamma / 2 (1 when gamma = 0). The certificate's
// multipliers y (|y| <= 1) give the dual side: when S(y) is PSD, -<y, t> / (gamma / 2) bounds the
// minimum from below (Lagrange duality of the l1 penalty, section 7.3); when it is not,
// -lambda_min(S) tr Z / (gamma / 2) is what that could cost at this Z. Both relative to
// max(1, (|objective| + |bound|) / 2), as SDPA measures its gap.
struct ConstrainedAnswer {
  double objective = std::nan(""), dual_bound = std::nan(""), relative_gap = std::nan("");
  double primal_infeasibility = std::nan(""), dual_infeasibility = std::nan("");
  bool optimal = false;
};

// `infeasibility` is model.infeasibility(X) (the penalty path has it already). The rows-on-spheres
// solver (sdp/spheres.h) stops by the same judgement.
ConstrainedAnswer constrained_answer(const Model& model, const RegularizationWeights& weights, const Matrix& X,
                                     double infeasibility, const Certificate& certificate, double tolerance);

// The step of a new column: the s >= 0 that minimises the weighted l1 surrogate of F along
// Z + s v v^T, sum_tau w_tau |r_tau + s q_tau| + s c, exactly (it is convex and piecewise linear
// in s): q_tau = <Q_tau, v v^T>, c = (gamma/2) v^T A v + (lambda/2) |v|^2. 0 when it does not
// fall. Its fall bounds from below what F falls by (phi concave: F <= its surrogate, equal at s = 0).
SDPRL_API double best_column_step(const Vector& residuals, const Vector& weights, const Vector& q, double c, double* fall);

}  // namespace sdprl::mm
