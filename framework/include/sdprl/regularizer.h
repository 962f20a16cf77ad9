// Regularizer: the term (gamma/2) <X, A X> of the objective (docs/method.md section 1), for a
// symmetric n x n matrix A that the implementation never needs to form. The lambda term
// (lambda/2)||X||^2 is built into the solver (RegularizationWeights), since it is the same for
// every model.
//
// The surrogate needs A X (its gradient) and A_+ X, the positive part of A (its curvature). The
// cheap cases of docs/method.md: A PSD (a graph Laplacian) has A_+ = A; A = -K with K PSD (a centered
// kernel, a covariance) has A_+ = 0.
#pragma once

#include <string>

#include "sdprl/export.h"
#include "sdprl/types.h"

namespace sdprl {

class SDPRL_API Regularizer {
 public:
  virtual ~Regularizer();

  virtual std::string name() const = 0;
  virtual Index dimension() const = 0;
  // out = A X (overwritten).
  virtual void apply(const Matrix& X, Matrix& out) const = 0;
  // True when A_+ = 0 (A negative semidefinite): the A-term then adds nothing to the curvature.
  virtual bool positive_part_is_zero() const = 0;
  // out = A_+ X (overwritten).
  virtual void apply_positive(const Matrix& X, Matrix& out) const = 0;
  // diag(A_+) (length n), used to precondition the coupled Xt-step.
  virtual void positive_diagonal(Vector& d) const = 0;
  // A diagonal majorant of A_+: a vector d with diag(d) - A_+ PSD (e.g. d_i = sum_j |A_ij| for a
  // diagonally dominant A, or 2 deg(i) for a graph Laplacian). With it the row-split Xt-step keeps
  // B diagonal (a looser but valid majoriser, docs/method.md section 3), so its n row systems stay
  // independent. Returns false when there is none (the default); the solver then uses CG.
  virtual bool positive_diagonal_majorant(Vector& d) const;
};

}  // namespace sdprl
