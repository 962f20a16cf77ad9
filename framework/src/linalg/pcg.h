// Preconditioned conjugate gradients on n x r matrices with the trace inner product, for the SPD
// operators of the coupled Xt-step and of B^{-1} (docs/method.md section 3).
#pragma once

#include <cmath>

#include "sdprl/types.h"

namespace sdprl::linalg {

// Solves A x = b from the initial x (warm start). Stops when ||A x - b|| <= rel_tol * ||b|| or after
// max_iterations. Returns the number of iterations.
template <class Apply, class Precondition>
long pcg(const Apply& apply, const Precondition& precondition, const Matrix& b, Matrix& x,
         double rel_tol, long max_iterations) {
  const double b_norm = b.norm();
  if (b_norm == 0.0) {
    x.setZero(b.rows(), b.cols());
    return 0;
  }
  Matrix r, z, p, Ap;
  apply(x, Ap);
  r = b - Ap;
  const double target = rel_tol * b_norm;
  if (r.norm() <= target) return 0;
  precondition(r, z);
  p = z;
  double rz = r.cwiseProduct(z).sum();
  long it = 0;
  while (it < max_iterations) {
    ++it;
    apply(p, Ap);
    const double pAp = p.cwiseProduct(Ap).sum();
    if (!(pAp > 0.0)) break;  // not SPD on this direction (or NaN): stop with the best x so far
    const double alpha = rz / pAp;
    x.noalias() += alpha * p;
    r.noalias() -= alpha * Ap;
    if (r.norm() <= target) break;
    precondition(r, z);
    const double rz_new = r.cwiseProduct(z).sum();
    p = z + (rz_new / rz) * p;
    rz = rz_new;
  }
  return it;
}

}  // namespace sdprl::linalg
