// Internal (not installed): small SDPs given by constraints (sdpa models), solved by a primal-dual
// interior-point method on Z itself (docs/method.md section 9.3).
//
// The model's constrained problem (as for sdp/augmented_lagrangian.h: the l1 loss, lambda = 0)
//     min <A, Z>  s.t.  <Q_i, Z> = t_i,  Z PSD,          dual:  max t^T y  s.t.  S = A - sum_i y_i Q_i PSD,
// splits into the connected components of the rows that the Q_i and A couple (SDPA's blocks, an LP
// variable being a 1 x 1 one): Z's entries between components appear nowhere, and any Z whose
// diagonal blocks are PSD completes to a PSD Z (block-diagonally). Each block is a dense matrix,
// so this is for problems whose blocks fit densely (interior_point_problem() says which do): there
// a low-rank factor has nothing to save, and the factored methods' conditioning (hinf, control,
// truss) is what an interior point does not suffer.
//
// The method is the infeasible primal-dual path-following one of SDPT3 and CSDP: the HKM direction
// (the Schur complement M_ij = <Q_i, Z Q_j S^-1>), Mehrotra's predictor-corrector, steps to
// a fraction of the distance to the cone's boundary. The data are scaled first (each Q_i and t_i
// by ||Q_i||_F, A by ||A||_F). The result is a factor X of Z (every eigenvalue above rounding
// kept, so its rank is Z's) and the multipliers y, judged as the other SDP solvers' are (sdp/judge.h).
#pragma once

#include <string>

#include "sdprl/loss.h"
#include "sdprl/model.h"
#include "sdprl/solver.h"

namespace sdprl::sdp {

// "" when the method applies to this model and loss, else why not (the augmented Lagrangian's
// conditions, sparse-matrix terms, and blocks and constraints few enough to hold densely).
std::string interior_point_problem(const Model& model, const Loss& loss, const SolverOptions& options,
                                   const RegularizationWeights& weights);

// Solves from the standard infeasible start (options.init and rank are not used: X's columns are
// Z's rank at the end); sets weights.gamma as the augmented Lagrangian does and returns the
// Summary (solver = kInteriorPoint, mm_iterations = interior-point iterations, with the
// certificate). `callback` runs after every iteration with the current factor.
Summary solve_interior_point(const Model& model, const Loss& loss, RegularizationWeights& weights,
                             const SolverOptions& options, Matrix& X, const IterationCallback& callback);

}  // namespace sdprl::sdp
