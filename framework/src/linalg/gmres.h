// Right-preconditioned GMRES (Saad and Schultz, 1986) on vectors, without restarts: the Newton
// steps of the active-set polish refine a factor of the KKT system taken at an earlier iterate, or
// in single precision, against the exact products (mm/polish.cc; docs/method.md section 7.6). As
// GMRES-based iterative refinement (Carson and Higham, 2017) it converges where the plain
// refinement x += M^{-1} (b - A x) does not: M^{-1} A need only have its eigenvalues clustered,
// not within the unit disk around 1. A factor taken where delta (the Levenberg-Marquardt term)
// was 5 times the present one scales the system's near-null directions by 1/5, which the plain
// refinement contracts by 0.8 a pass and GMRES resolves in a few iterations.
#pragma once

#include <cmath>
#include <vector>

#include "sdprl/types.h"

namespace sdprl::linalg {

// Minimises ||b - A M^{-1} u|| over the Krylov space of A M^{-1} and b (x = M^{-1} u starts at 0);
// stops when the recurrence's residual is at most rel_tol * ||b|| or after max_iterations (the
// memory is 2 max_iterations + 1 vectors: the basis and the preconditioned directions). Returns the
// number of iterations (each one product with A and one with M^{-1}); *residual is the last
// recurrence residual, exact in exact arithmetic. On a singular, inconsistent system rounding
// keeps the breakdown test from firing and the recurrence can understate the residual by far: a
// caller that must know checks ||b - A x|| itself (the polish does).
template <class Apply, class Precondition>
long gmres(const Apply& apply, const Precondition& precondition, const Vector& b, Vector& x, double rel_tol,
           long max_iterations, double* residual) {
  x.setZero(b.size());
  const double beta = b.stableNorm();
  if (residual) *residual = beta;
  if (!(beta > 0.0) || max_iterations <= 0) return 0;
  const auto m = static_cast<std::size_t>(max_iterations);
  std::vector<Vector> V(1, b / beta), Z;  // Arnoldi basis, preconditioned directions
  Matrix H = Matrix::Zero(static_cast<Index>(m) + 1, static_cast<Index>(m));
  Vector cs(static_cast<Index>(m)), sn(static_cast<Index>(m)), g = Vector::Zero(static_cast<Index>(m) + 1);
  g[0] = beta;
  Vector w;
  Index j = 0;
  double eta = beta;
  while (j < static_cast<Index>(m) && eta > rel_tol * beta) {
    Z.emplace_back();
    precondition(V[static_cast<std::size_t>(j)], Z.back());
    apply(Z.back(), w);
    // Modified Gram-Schmidt, then one more pass: the basis stays orthogonal to working precision
    // where the factor is a poor preconditioner and the vectors nearly dependent.
    for (int pass = 0; pass < 2; ++pass)
      for (Index i = 0; i <= j; ++i) {
        const double h = V[static_cast<std::size_t>(i)].dot(w);
        H(i, j) += h;
        w -= h * V[static_cast<std::size_t>(i)];
      }
    const double h_next = w.stableNorm();
    H(j + 1, j) = h_next;
    for (Index i = 0; i < j; ++i) {  // the earlier rotations, on the new column
      const double t = cs[i] * H(i, j) + sn[i] * H(i + 1, j);
      H(i + 1, j) = -sn[i] * H(i, j) + cs[i] * H(i + 1, j);
      H(i, j) = t;
    }
    const double rho = std::hypot(H(j, j), h_next);
    if (!(rho > 0.0)) break;  // A M^{-1} maps the space into itself without b: x is the best there is
    cs[j] = H(j, j) / rho;
    sn[j] = h_next / rho;
    H(j, j) = rho;
    H(j + 1, j) = 0.0;
    g[j + 1] = -sn[j] * g[j];
    g[j] = cs[j] * g[j];
    eta = std::abs(g[j + 1]);
    ++j;
    if (!(h_next > 0.0)) break;  // an invariant subspace: solved there
    V.emplace_back(w / h_next);
  }
  if (j == 0) return 0;
  // u's coordinates from the triangular system, then x = Z c.
  const Vector c = H.topLeftCorner(j, j).triangularView<Eigen::Upper>().solve(g.head(j));
  for (Index i = 0; i < j; ++i) x += c[i] * Z[static_cast<std::size_t>(i)];
  if (residual) *residual = eta;
  return static_cast<long>(j);
}

}  // namespace sdprl::linalg
