// Internal (not installed): SDPs whose constraints each fix one diagonal entry of Z, solved with
// the rows of X on spheres (docs/method.md section 9.1).
//
// When every term of a constraint model (Model::infeasibility) is a_i Z_ii = t_i for its own row
// i, with s_i = t_i / a_i > 0 (max-cut and its relatives: SDPLIB's mcp problems), the feasible
// factors are exactly those with ||x_i||^2 = s_i, a product of spheres, and on it the loss terms
// are zero and ||X||^2 is constant. The SDP  min <A, Z>  s.t.  Z_ii = s_i, Z PSD  is then solved
// by exact minimisation over one row at a time (block coordinate descent; Wang, Chang and Kolter's
// mixing method): with g = sum_{j != i} A_ij x_j the row's part of <A, X X^T> is 2 <x_i, g> +
// A_ii s_i, least at x_i = -sqrt(s_i) g / ||g||. No penalty is involved, so none is tuned; the
// multipliers y_i of the stationarity condition S(y) X = 0 certify the result (mm/certificate.h),
// and the reported gamma is the largest of the penalty path's (2, 0.2, ...) at which the l1
// penalty with these multipliers is exact (|y_i| <= phi'(0)), so that F's certificate holds too.
#pragma once

#include <string>

#include "sdprl/loss.h"
#include "sdprl/model.h"
#include "sdprl/solver.h"

namespace sdprl::sdp {

// "" when the strategy applies to this model and loss, else why not (for solver.type = "spheres").
std::string spheres_problem(const Model& model, const Loss& loss, const SolverOptions& options);

// Solves the model's constrained SDP on the spheres from options.init (a spectral or Gaussian
// start with its rows scaled onto the spheres), at options' rank (0: the model's default).
// `weights.gamma` is the largest penalty of the path starting at its value that the multipliers
// allow (see above); the returned Summary is that of F at it (solver = kSpheres, mm_iterations =
// sweeps, with the certificate). `callback` runs after every sweep.
Summary solve_on_spheres(const Model& model, const Loss& loss, RegularizationWeights& weights,
                         const SolverOptions& options, Matrix& X, const IterationCallback& callback);

}  // namespace sdprl::sdp
