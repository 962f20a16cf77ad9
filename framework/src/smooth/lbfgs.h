// L-BFGS on the factored objective for smooth losses (phi'(0) = 0), the square-loss baseline.
#pragma once

#include "sdprl/solver.h"

namespace sdprl::smooth {

// Same contract as sdprl::solve(); X is already initialised.
Summary solve_lbfgs(const Model& model, const Loss& loss, const RegularizationWeights& weights,
                    const SolverOptions& options, Matrix& X, const IterationCallback& callback);

}  // namespace sdprl::smooth
