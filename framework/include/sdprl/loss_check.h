// The MM solver's contract with a loss (paper Assumption 3; docs/method.md section 1): phi(0) = 0,
// phi increasing and concave on [0, inf), phi' finite, phi'(0) > 0 and
// phi' >= 0 (it may underflow to 0 far out, as the Laplace loss's does), and phi' the derivative
// of phi (every chord's slope between phi' at its ends). A loss that breaks it makes the
// surrogate H a non-majoriser, and MM then gives no guarantee at all, so it is refused up front.
#pragma once

#include <string>

#include "sdprl/export.h"
#include "sdprl/loss.h"

namespace sdprl {

// Checks the contract on a grid of points in [0, 1e6] (0, then 1e-6 ... 1e6 logarithmically,
// plus the midpoints). Throws Error(where = "loss " + name, message) naming the violated property
// and the point, e.g. "phi is not concave: phi((a+b)/2) < (phi(a) + phi(b))/2 at a = 1, b = 2".
SDPRL_API void check_loss_for_mm(const Loss& loss);

// The same checks without throwing: the first violation as a message, or "" when there is none.
SDPRL_API std::string loss_contract_violation(const Loss& loss);

// The L-BFGS solver's contract with a loss differentiable at 0 (the square loss): phi(0) = 0,
// phi'(0) = 0, phi non-decreasing with phi' >= 0 and finite, and phi' the derivative of phi (each
// chord's slope within the range of phi' on it), on the same grid. Throws Error as above; the
// second form returns the first violation, or "".
SDPRL_API void check_loss_for_lbfgs(const Loss& loss);
SDPRL_API std::string smooth_loss_violation(const Loss& loss);

}  // namespace sdprl
