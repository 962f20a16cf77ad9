// MINRES (Paige and Saunders, 1975) for symmetric, possibly indefinite and singular, systems on
// vectors: the KKT systems of the active-set polish (mm/polish.h; docs/method.md section 7.6).
// CG needs a positive definite operator; a saddle-point matrix [S B^T; B 0] is not one.
#pragma once

#include <cmath>

#include "sdprl/types.h"

namespace sdprl::linalg {

// Minimises ||A x - b|| over the Krylov space of b (x starts at 0): stops when that norm is at most
// rel_tol * ||b|| or after max_iterations. On a singular, consistent system it converges to a
// solution in the range of A. Returns the number of iterations; *residual is the last ||A x - b||
// (the recurrence's, exact in exact arithmetic).
template <class Apply>
long minres(const Apply& apply, const Vector& b, Vector& x, double rel_tol, long max_iterations, double* residual) {
  x.setZero(b.size());
  const double beta1 = b.stableNorm();  // stable: data near 1e100 square to overflow
  double eta = beta1;
  if (residual) *residual = beta1;
  if (beta1 == 0.0) return 0;
  // Lanczos vectors v_{j-1}, v_j; the directions w_{j-2}, w_{j-1}; the rotations G_{j-2}, G_{j-1}
  // that reduce the tridiagonal T_j to upper triangular form, applied to each new column.
  Vector v_prev = Vector::Zero(b.size()), v = b / beta1, Av, w_old = Vector::Zero(b.size()),
         w = Vector::Zero(b.size()), w_new;
  double beta = beta1, c_old = 1.0, s_old = 0.0, c = 1.0, s = 0.0;
  long it = 0;
  while (it < max_iterations && std::abs(eta) > rel_tol * beta1) {
    ++it;
    apply(v, Av);
    const double alpha = v.dot(Av);
    Av -= alpha * v + beta * v_prev;
    const double beta_next = Av.stableNorm();
    // T's column j is (beta_j, alpha_j, beta_{j+1}) at rows j-1, j, j+1 (beta_1 meets w = 0).
    const double epsilon = s_old * beta;
    const double delta_bar = c_old * beta;
    const double delta = c * delta_bar + s * alpha;
    const double gamma_bar = -s * delta_bar + c * alpha;
    const double gamma = std::hypot(gamma_bar, beta_next);
    if (!(gamma > 0.0)) break;  // A v_j = 0 in the Krylov space: x is the best there is (or NaN)
    const double c_new = gamma_bar / gamma, s_new = beta_next / gamma;
    w_new = (v - epsilon * w_old - delta * w) / gamma;
    x += (c_new * eta) * w_new;
    eta = -s_new * eta;
    w_old.swap(w);
    w.swap(w_new);
    c_old = c;
    s_old = s;
    c = c_new;
    s = s_new;
    if (!(beta_next > 0.0)) break;  // an invariant subspace: the system is solved there
    v_prev.swap(v);
    v = Av / beta_next;
    beta = beta_next;
  }
  if (residual) *residual = std::abs(eta);
  return it;
}

}  // namespace sdprl::linalg
