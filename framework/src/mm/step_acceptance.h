// Internal (not installed): step acceptance of the MM loop — whether MM step k is accepted,
// taken again with a larger curvature scale, or stops the run (docs/method.md, check 3).
#pragma once

#include <string>

namespace sdprl::mm {

// Step acceptance: what becomes of MM step k from F(X_k) = f to F(X_k + Xt) = f_next, with
// H(Xt) = surrogate_value, the surrogate's curvature scale tau, the tolerance eps_k and the ADMM's
// gap.
struct StepVerdict {
  enum Kind { kAccept, kRefuse, kFault } kind = kAccept;
  bool violation = false;  // a rise beyond eps_k within the ADMM's gap (Summary::monotonicity_violations)
  std::string message;     // kFault
};

StepVerdict judge_step(int k, double f, double f_next, double surrogate_value, double tau, double eps, double gap);

}  // namespace sdprl::mm
