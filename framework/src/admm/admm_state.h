// Internal (not installed): the state of the ADMM on one MM step's surrogate (admm/admm.h),
// carried across MM steps as its warm start.
#pragma once

#include <cstdint>
#include <vector>

#include "sdprl/export.h"
#include "sdprl/types.h"

namespace sdprl {

class ExternalWeights;  // sdprl/constraint_set.h

// The ADMM state carried across MM steps (warm start, docs/method.md section 3).
struct AdmmState {
  Matrix D;    // Xt, n x r
  Matrix step; // the step the MM takes: D, or Y - X_k (feasible) under a constraint
  Matrix Y;    // constraint split: Y = X_k + D projected onto K
  Matrix mu;   // its multiplier (in the polar cone of K)
  Vector e;    // split variables
  Vector nu;   // multipliers, |nu| <= 2 (|nu_h| <= 2 w_h with ExternalWeights)
  // The fused row pass (admm/row_kernel.h) keeps nu and e packed in one vector,
  //   u = nu + rho e,   from which   nu = clamp(u, -2, 2),  e = (u - nu) / rho,
  // exact for the states the ADMM makes (nu_h = 2 sign(e_h) where e_h != 0; u = rho z with the
  // e-step's z): one double per split term read and written per iteration instead of two (issue
  // #8: 16 of the 52 bytes per term at m = 10^5). While packed() the state is u alone (nu and e
  // are empty); unpack() gives nu and e back. Admm::run() and iterate() unpack before they return
  // unless keep_packed (the MM solver keeps it packed between its steps).
  // The dense pass of all-entries terms (xt_step/dense_rows.h) packs its state the same way with the
  // weights' bounds, nu = clamp(u, -2 w, 2 w), and sets packed_weights to its linearisation's term
  // weights: the live vector, so the bounds are those of the surrogate's last rebuild (between MM
  // steps the carried u meets the new weights; docs/method.md section 3.3). A checkpoint keeps u
  // alone; the dense pass sets the pointer again before it reads u.
  Vector u;
  double packed_rho = 0.0;  // > 0: u holds the state, packed at this rho
  const ExternalWeights* packed_weights = nullptr;  // the bounds' w_h (not owned); nullptr: |nu_h| <= 2
  bool keep_packed = false;
  bool packed() const { return packed_rho > 0.0; }
  // (nu, e) -> u at `rho`; a packed state at another rho is unpacked first. Exact in exact
  // arithmetic for states with nu_h in 2 sign(e_h) (the ADMM's); others are projected onto them.
  SDPRL_API void pack(double rho);
  // u -> (nu, e); nothing when not packed. Shares u first (share_packed()).
  SDPRL_API void unpack();
  // Under several processes (parallel/processes.h) the fused row pass updates this process's rows
  // alone: the other processes' rows of D and step (partial_rows: count() + 1 row bounds) and
  // their split terms of u (partial_terms) are stale until these share them. Empty: whole.
  // Collective; Admm::run() shares the rows before it returns, unpack() and checkpoints u.
  std::vector<Index> partial_rows, partial_terms;
  SDPRL_API void share_rows();
  SDPRL_API void share_packed();
  Vector PD;   // P(D) of the last iteration
  // Direct Xt-step: P*(nu) and P*(b - e), kept up to date by Admm::iterate so that an iteration
  // needs one adjoint instead of two; linearised step: P*(nu) and P*(nu + rho (b - e + P D)), and
  // PD. Valid while adjoint_generation matches the Admm's; a caller that changes nu, e (or, for the
  // linearised step, D) by hand sets adjoint_generation = 0.
  Matrix Pnu, Pu;
  std::uint64_t adjoint_generation = 0;
  double primal = 0.0, dual = 0.0, gap = 0.0;
  int iterations = 0;      // in the last run()
  int extrapolations = 0;  // Anderson's extrapolated points in the last run() (admm/anderson.h)
  int rho_updates = 0;     // changes of rho by residual balancing in the last run() (Admm::run)
  long cg_iterations = 0;  // in the last run() (coupled Xt-step)
};

}  // namespace sdprl
