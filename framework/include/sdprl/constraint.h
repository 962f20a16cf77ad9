// Convex constraints on the factor, X in K (docs/method.md section 1: the optional iota_K(X)), e.g.
// X >= 0 for symmetric NMF, which the paper's eq. (snmf2) silently drops.
//
// The solver keeps every iterate in K: the ADMM of one MM step splits once more, Y = X_k + D with
// Y in K (docs/method.md section 3), and the next iterate is Y. Its dual gains the multiplier mu of
// X_k + D - Y = 0:
//   D(nu, mu) = c + <nu, b> + <mu, X_k> - sigma_K(mu) - (1/4) <M, B^{-1} M>,  M = G + P*(nu) + mu,
// with sigma_K the support function of K (for a cone: 0 on the polar cone, +inf elsewhere; for
// K = {Y >= 0} that is mu <= 0). The ADMM's mu-step keeps mu in the polar cone automatically, so the
// gap H(Y - X_k) - D(nu, mu), measured at the feasible point Y, stays a valid stopping rule.
#pragma once

#include <string>

#include "sdprl/export.h"
#include "sdprl/types.h"

namespace sdprl {

class SDPRL_API ConvexConstraint {
 public:
  virtual ~ConvexConstraint();
  virtual std::string name() const = 0;
  // Y <- its Euclidean projection onto K.
  virtual void project(Matrix& Y) const = 0;
  // sigma_K(mu) = sup over Y in K of <mu, Y> (may be +infinity).
  virtual double support(const Matrix& mu) const = 0;
  // True when K is a cone (c Y in K for every Y in K and c >= 0): then a ray c X_k stays feasible
  // and the solver may prove F unbounded along it (docs/method.md section 7.1).
  virtual bool is_cone() const { return false; }
  // True when K is a product of one set per row, the same set for every row (row i of the
  // projection is a function of row i of Y alone, the same function for every i), as for X >= 0:
  // the row-split ADMM then runs the constraint split inside its fused pass over the rows
  // (docs/method.md section 3.3), calling project() on 1 x r matrices, from several threads at
  // once (so project() must not modify shared state).
  virtual bool rows_independent() const { return false; }
};

// K = {X : X_ij >= 0}. Projection: max(0, X); support: 0 when mu <= 0 (the polar cone), else +inf.
class SDPRL_API Nonnegative final : public ConvexConstraint {
 public:
  ~Nonnegative() override;
  std::string name() const override { return "nonnegative"; }
  bool is_cone() const override { return true; }
  bool rows_independent() const override { return true; }
  void project(Matrix& Y) const override;
  double support(const Matrix& mu) const override;
};

// K = {X : ||X||_F <= radius}, i.e. tr(Z) <= radius^2 for Z = X X^T: the trace constraint of
// d'Aspremont et al.'s sparse PCA relaxation (tr Z = 1), which the paper's eq. (spca:trans) drops
// and without which that problem is unbounded or solved by Z = 0 (see the sparse-pca plugin).
// Projection: scale X onto the sphere when outside; support: radius ||mu||_F (finite everywhere,
// so the constrained ADMM's dual of sdprl/constraint.h needs no cone condition here).
class SDPRL_API FrobeniusBall final : public ConvexConstraint {
 public:
  explicit FrobeniusBall(double radius);  // radius > 0 (throws Error otherwise)
  ~FrobeniusBall() override;
  std::string name() const override { return "frobenius-ball"; }
  void project(Matrix& Y) const override;
  double support(const Matrix& mu) const override;
  double radius() const { return radius_; }

 private:
  double radius_;
};

}  // namespace sdprl
