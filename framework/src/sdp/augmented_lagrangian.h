// Internal (not installed): SDPs given by constraints (sdpa models), solved by an augmented
// Lagrangian on the factor (Burer and Monteiro 2003, as SDPLR; docs/method.md section 9.2).
//
// The model's constrained problem (Model::infeasibility set, the l1 loss, lambda = 0) is
//     min <A, X X^T>  s.t.  r_i(X) = <Q_i, X X^T> - t_i = 0,
// with A = the model's quadratic at gamma = 2 (sdpa: -F_0). Its augmented Lagrangian, with the
// objective scaled by kappa = 1 / ||A||_F and each residual by s_i = ||sym(Q_i)||_F (as SDPLR
// scales),
//     L(X; y, sigma) = kappa <A, X X^T> - sum_i y_i r_i / s_i + (sigma / 2) sum_i (r_i / s_i)^2,
// is minimised over X by L-BFGS with an exact line search (L is a quartic along any line); then
// y -= sigma r / s, and sigma grows tenfold where the violation fell by less than a quarter. No
// penalty is tuned by the user: sigma is the method's own, and the multipliers it ends with are
// the SDP's (SDPA's x_i = y_i / (kappa s_i)). From them
// the l1 model's F is judged as the other paths judge it: gamma is the largest of the penalty
// path's (2, 0.2, ...) where |gamma y_i / (2 s_i)| <= phi'(0) (the l1 penalty is then exact), and
// the certificate (mm/certificate.h) and the constrained answer say whether it is optimal.
#pragma once

#include <string>

#include "sdprl/loss.h"
#include "sdprl/model.h"
#include "sdprl/solver.h"

namespace sdprl::sdp {

// "" when the method applies to this model and loss, else why not.
std::string augmented_lagrangian_problem(const Model& model, const Loss& loss, const SolverOptions& options,
                                         const RegularizationWeights& weights);

// Solves from options.init at options' rank (0: the model's default); sets weights.gamma as above
// and returns the Summary of F at it (solver = kAugmentedLagrangian, mm_iterations = L-BFGS
// iterations over all outer steps, with the certificate). `callback` runs after every outer step.
Summary solve_augmented_lagrangian(const Model& model, const Loss& loss, RegularizationWeights& weights,
                                   const SolverOptions& options, Matrix& X, const IterationCallback& callback);

}  // namespace sdprl::sdp
