// Internal (not installed): a certificate that F is unbounded below along the ray X -> c X
// (docs/method.md section 7.1).
//
// phi is concave and nondecreasing on [0, inf) with phi(0) = 0 (Assumption 3), so it is
// subadditive and phi(y) <= phi'(0) y; with |c^2 a - t| <= |t| + c^2 |a| this gives, for every term,
// phi(|c^2 a - t|) <= phi(|t|) + c^2 phi'(0) |a|, hence for c >= 0
//   F(c X) <= sum_tau phi(|t_tau|) + c^2 s(X),
//   s(X) = phi'(0) sum_tau |<Q_tau, X X^T>| + (gamma/2) <X, A X> + (lambda/2) ||X||^2.
// s(X) < 0 therefore proves that F falls without bound along c X (which stays in K when K is a
// cone). It can only happen through (gamma/2) <X, A X> < 0: a gamma too large for what the terms
// can hold back, or an indefinite A with too little lambda.
#pragma once

#include <string>

#include "sdprl/loss.h"
#include "sdprl/model.h"
#include "sdprl/solver.h"

namespace sdprl::mm {

struct RaySlope {
  double slope = 0.0;      // s(X); +inf when no certificate can be had (phi'(0) infinite, K no cone,
                           // or no negative A-term)
  double terms = 0.0;      // phi'(0) sum |<Q_tau, X X^T>|
  double quadratic = 0.0;  // (gamma/2) <X, A X>
  double ridge = 0.0;      // (lambda/2) ||X||^2

  // True when s(X) < 0 beyond the rounding of its parts.
  bool certifies_unbounded() const;
  // What a user reads: the certificate's numbers and the likely cause.
  std::string message(const RegularizationWeights& weights) const;
  std::string ray = "X -> c X from the last iterate";  // the ray, for the message
};

RaySlope ray_slope(const Model& model, const Loss& loss, const RegularizationWeights& weights, const Matrix& X);

// s(V) for V = [v, 0, ..., 0] (n x rank; projected onto K), v the eigenvector of A's smallest
// eigenvalue taken with either sign: the direction in which the A-term falls fastest, for a run
// that ends at a saddle point whose own ray proves nothing (e.g. a zero row that MM never moves).
// +inf when gamma = 0, A is absent or PSD, or the eigensolver fails.
RaySlope lowest_a_ray_slope(const Model& model, const Loss& loss, const RegularizationWeights& weights, Index rank);

}  // namespace sdprl::mm
