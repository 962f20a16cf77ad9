// Internal (not installed): Anderson acceleration of one ADMM run (docs/method.md section 3.7):
// type II with a safeguard, as SCS 3 accelerates its ADMM (O'Donoghue, "Operator splitting for a
// homogeneous embedding of the linear complementarity problem", 2021; Zhang, O'Donoghue and Boyd,
// "Globally convergent type-I Anderson acceleration for nonsmooth fixed-point iterations", 2020).
//
// On one surrogate the ADMM is a fixed-point map z -> T(z) of
//   z = u = nu + rho e                     (exact and CG Xt-steps), or
//   z = (u, D)                             (the linearised Xt-step: D is its proximal centre),
// since the e- and nu-steps give u' = nu + rho (P D' + b), nu = clamp(u, +-2 w) and e = (u - nu) / rho
// (admm/admm_state.h), and the Xt-step reads only nu + rho (b - e) = 2 nu - u + rho b (and D).
// With the residuals g = T(z) - z of the last `memory` points, type II extrapolates
//   gamma = argmin || g_k - dG gamma ||_2,     z_{k+1} = T(z_k) - (dZ + dG) gamma,
// and the safeguard keeps the extrapolated point only when its own residual, seen after the next
// iteration, is at most g_k's; otherwise the plain T(z_k) is taken and the memory cleared.
#pragma once

#include <vector>

#include "sdprl/types.h"

namespace sdprl {

struct AdmmState;

class Anderson {
 public:
  // `memory` >= 1 past differences; `with_d`: D is part of z (the linearised Xt-step).
  Anderson(int memory, bool with_d);

  // Called after each ADMM iteration, which took the (unpacked) state from z_k, the point this
  // object last left in it (or, at the first call, an unknown one), to T(z_k). Leaves the state at
  // an extrapolated point (returns true), at T(z_k), or back at the plain point T(z_{k-1}) when the
  // extrapolation z_k is refused. `weights`: the bound 2 w_h of |nu_h| (nullptr: 2).
  bool step(AdmmState& st, double rho, const Vector* weights);
  // Extrapolated points made so far (kept or refused).
  int extrapolations() const { return extrapolations_; }

 private:
  void gather(const AdmmState& st, double rho, Vector& z) const;
  void scatter(const Vector& z, double rho, const Vector* weights, AdmmState& st) const;
  void forget();

  int memory_;
  bool with_d_;
  Vector z_;           // z_k, the point the last iteration started from
  Vector plain_;       // T(z_{k-1}), kept while z_k is an extrapolation
  bool extrapolated_ = false;
  double last_norm_ = 0.0;  // ||g_{k-1}||
  Vector z_prev_, g_prev_;  // z_{k-1} and g_{k-1}
  // Ring buffers of the last `memory` differences dg_j = g_{j+1} - g_j and s_j = dz_j + dg_j, and
  // the Gram matrix of the dg_j, updated by one row per iteration.
  std::vector<Vector> dg_, sums_;
  Matrix gram_;
  int count_ = 0, next_ = 0;
  int extrapolations_ = 0;
  Vector t_, g_;  // scratch: T(z_k) and g_k
  Vector rhs_;     // scratch: dg_i . g_k
  Matrix system_;  // scratch: the ridged normal equations
};

}  // namespace sdprl
