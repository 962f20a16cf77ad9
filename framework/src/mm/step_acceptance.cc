// Step acceptance of the MM loop (mm/step_acceptance.h).
#include "mm/step_acceptance.h"

#include <algorithm>
#include <cmath>

#include "mm/loop_support.h"

namespace sdprl::mm {

StepVerdict judge_step(int k, double f, double f_next, double surrogate_value, double tau, double eps, double gap) {
  StepVerdict v;
  // With tau < 1 (SolverOptions::curvature_scale) H majorises F only where checked. Accepting
  // the step when F(X_k + Xt) <= H(Xt) keeps the descent argument below (H(Xt) <= F(X_k) + gap);
  // otherwise the step is taken again from X_k with tau doubled, which ends at tau = 1, where H
  // is the majoriser and every step passes. Nothing of the refused step is kept but the ADMM's
  // state, a warm start (the same multipliers' terms at another X_k).
  if (tau < 1.0 && f_next > surrogate_value + 1e-12 * std::max(std::abs(f), std::abs(f_next))) {
    v.kind = StepVerdict::kRefuse;
    return v;
  }
  // Check 3 of docs/method.md: an inexact MM step may rise by at most eps_k. The ADMM's gap bounds
  // the rise: H(Xt) <= min H + gap <= H(0) + gap = F(X_k) + gap and F(X_k + Xt) <= H(Xt). So with
  // gap <= eps_k (the ADMM met its tolerance) a rise beyond eps_k, and after an ADMM stopped by
  // its iteration cap a rise beyond its gap, cannot come from inexactness: the surrogate does not
  // majorise F (a loss, terms or regularizer whose values and derivatives disagree). Such a step
  // is refused and the run stops on the last good iterate. 1e-12 |F| allows for the rounding of
  // F's sums, which eps_k (>= min_tolerance, absolute) may not cover when |F| is large.
  // A gap that is not finite bounds nothing, and the ADMM did not meet eps_k either: it comes from
  // sums that overflowed (sparse PCA on data near 1e80 rose from F = -8e160 to 0 within eps_1 =
  // |F_0| and ended "converged"), so no rise beyond rounding is explained then.
  const bool finite_gap = std::isfinite(gap);
  const double rounding = 1e-12 * std::max(std::abs(f), std::abs(f_next));
  if (f_next > f + (finite_gap ? eps : rounding)) {
    v.violation = true;
    const double bound = (finite_gap ? std::max(eps, gap) : 0.0) + rounding;
    if (f_next > f + bound) {
      v.kind = StepVerdict::kFault;
      v.message = "the objective rose at MM iteration " + std::to_string(k) + " from " + fmt("%.17g", f) + " to " +
                  fmt("%.17g", f_next) + " (by " + fmt("%.3g", f_next - f) + "), " +
                  (finite_gap ? "more than eps_k = " + fmt("%.3g", eps) + " (ADMM gap " + fmt("%.3g", gap) +
                                    ") allows: the surrogate does not majorise F (a loss, terms or regularizer "
                                    "plugin whose values and derivatives disagree?)"
                              : "after an ADMM whose duality gap was " + fmt("%g", gap) +
                                    ", which bounds no rise: its sums overflowed (data whose squares or products "
                                    "pass 1e308? rescale them), or a constraint's support function was infinite") +
                  "; the factor is the last good iterate";
    }
  }
  return v;
}

}  // namespace sdprl::mm
