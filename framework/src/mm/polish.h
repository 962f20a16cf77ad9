// Internal (not installed): the active-set polish of a result of the convex l1 problem
// (docs/method.md section 7.6), as OSQP polishes an ADMM's answer.
//
// MM on the factored l1 problem converges sublinearly where the optimum fits many terms exactly
// (tests/sdpa_global_test: 1e-4 of the optimum after 500 MM steps, 1e-6 after 2000). Near the end
// the run knows which terms the optimum fits: E, those with a multiplier inside its box (or a zero
// residual), and the signs s of the others. With E and s fixed the problem is smooth:
//   min_X  <S_N, X X^T>   subject to  <Q_tau, X X^T> = t_tau  (tau in E),
//   S_N = sum_{tau not in E} w s_tau sym(Q_tau) + (gamma/2) A + (lambda/2) I,
// and Newton's method on its KKT conditions, S(y) X = 0 and r_E = 0 with
// S(y) = S_N + sum_{tau in E} y_tau sym(Q_tau), converges quadratically from MM's point:
//   [ S(y)  B^T ] [dX ]     [ S(y) X ]
//   [ B     0   ] [dy ]  = -[ r_E / 2 ],     B dX = (<sym(Q_tau) X, dX>)_{tau in E},
// solved matrix-free by MINRES (S(y)'s products are ConstraintSet::apply_adjoint_sym's, B's are two
// evaluate() calls by polarisation; nothing n x n). A guess of E that the KKT point contradicts (a
// multiplier outside its box, a residual outside E that changed sign) is corrected and solved
// again, as a primal-dual active-set method does. The polished point is kept only when F is no
// higher there; its y then certifies it (mm/certificate.h).
#pragma once

#include <string>
#include <vector>

#include "sdprl/export.h"
#include "sdprl/model.h"
#include "sdprl/solver.h"

namespace sdprl::mm {

struct Polished {
  bool improved = false;  // X and multipliers below are a point with F no higher than the input's
  Matrix X;
  Vector multipliers;  // y_tau / w in [-1, 1], as certify() takes them
  double objective = 0.0;
  PolishReport report;  // `kept` is the caller's to set
};

// w: the l1 loss's slope phi'(0) (the loss is w |r|). multipliers: y_tau / w of the run's exact
// surrogate (length m). objective: F(X). admm_iterations: the run's, which set the work budget.
// direct_only: Newton steps solved by the direct factorisation alone (pair terms, small n and
// |E|), none by MINRES: the cheap attempt that MM makes during a run (mm/mm_loop.cc).
SDPRL_API Polished polish(const Model& model, double w, const RegularizationWeights& weights, const Matrix& X,
                const Vector& multipliers, double objective, long admm_iterations, bool direct_only = false);

// True when the polish's first guess (the multipliers inside their box) has the direct solve.
bool polish_is_direct(const Model& model, Index n, const Vector& multipliers);

// The polish of a model whose terms are constraints (sdpa; docs/method.md section 9): every term
// fitted and its multiplier free of the l1 penalty's box, so that the KKT point sought is the SDP's
// own. (Where an SDPA multiplier exceeds 2 / gamma the penalised minimiser is not the SDP's, and the
// box keeps the ordinary polish from it: hinf1, qap5.) `multipliers` are y / w, unclipped; the
// result is not judged on F (the SDP's optimum raises the penalised F where the penalty is
// inexact) but by the caller, on the constrained answer.
Polished polish_constraints(const Model& model, double w, const RegularizationWeights& weights, const Matrix& X,
                            double objective, long admm_iterations);

// The least-norm change D of X that keeps the residuals of the fitted terms E at first order
// against a change q_E of theirs: 2 <sym(Q_tau) X, D> = -q_tau for tau in E (`q` holds all m
// changes; MINRES on B B^T, at most `max_products` products). The rank staircase's escape moves X
// by s D as it adds s v v^T (docs/method.md section 7.4).
Matrix refit_direction(const Model& model, const Matrix& X, const std::vector<Index>& fitted, const Vector& q,
                       long max_products);

}  // namespace sdprl::mm
